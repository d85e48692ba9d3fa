import AccountSync
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import ServerKit
import ServerTokens
import TourCodec

/// Installs as subjects (Docs/Server.md, "Installs"): an app without sign-in enrolls each install
/// once with the app's enrollment key and gets an install credential, a token of this server whose
/// subject is `install.<id>`. The install then pushes, pulls and reads publications through the
/// account routes under that subject, so everything the server does for an account (records,
/// facts, rollouts, experiments, the dashboard) it does for an install.
///
/// The subject namespace `install.` is reserved: an account token (minted or an identity
/// provider's) never names it, and an install credential opens nothing else.
public enum Installs {
    public static let subjectPrefix = "install."

    /// Whether an account path segment names an install.
    public static func isInstall(_ subject: String) -> Bool { subject.hasPrefix(subjectPrefix) }

    /// How long an install credential is valid; a device enrolls again when its credential expired.
    public static let credentialDays = 400

    /// An enrollment key: public (compiled into the app, readable by anyone who has it), so it
    /// only says which app an install belongs to; long enough not to be guessed by chance.
    public static let keyRule = "16 to 128 ASCII letters, digits, '.', '_', '-' or '@'"
    public static func isValidKey(_ key: String) -> Bool { key.utf8.count >= 16 && SyncAPI.isValidName(key) }

    /// v11: the apps' enrollment keys (several live at once, so a key rotates with overlap) and the
    /// installs enrolled.
    package static let v11 = [
        """
        CREATE TABLE enrollment_keys (
            app TEXT NOT NULL,
            key TEXT NOT NULL,
            added_at DOUBLE PRECISION NOT NULL,
            retired_at DOUBLE PRECISION,
            PRIMARY KEY (app, key)
        )
        """,
        """
        CREATE TABLE installs (
            app TEXT NOT NULL,
            install TEXT NOT NULL,
            enrolled_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app, install)
        )
        """,
    ]
}

/// The apps' enrollment keys and the installs enrolled, in PostgreSQL.
public struct EnrollmentStore: PostgresStore {
    public struct Key: Equatable, Sendable {
        public var app: String
        public var key: String
        public var addedAt: Double
        public var retiredAt: Double?
    }

    let writes: WritableDatabase
    let reads: ReadOnlyDatabase
    let logger: Logger

    public init(writes: WritableDatabase, reads: ReadOnlyDatabase, logger: Logger) {
        self.writes = writes
        self.reads = reads
        self.logger = logger
    }

    /// Adds a live key for `app` (again live when it was retired), audit-logged in the same transaction.
    public func add(app: String, key: String, by actor: Actor, at time: Double) async throws {
        try await writes.write { connection, logger in
            try await connection.query(
                """
                INSERT INTO enrollment_keys (app, key, added_at) VALUES (\(app), \(key), \(time))
                ON CONFLICT (app, key) DO UPDATE SET retired_at = NULL
                """, logger: logger)
            try await AuditLog.append(
                .init(at: time, actor: actor, app: app, action: "enrollment-key.added", target: key),
                on: connection, logger: logger)
        }
    }

    /// Retires a key: installs enrolled with it keep their credentials; no new install enrolls with
    /// it. Whether the key was live.
    public func retire(app: String, key: String, by actor: Actor, at time: Double) async throws -> Bool {
        return try await writes.write { connection, logger in
            let rows = try await connection.query(
                """
                UPDATE enrollment_keys SET retired_at = \(time)
                WHERE app = \(app) AND key = \(key) AND retired_at IS NULL RETURNING 1
                """, logger: logger)
            var retired = false
            for try await _ in rows { retired = true }
            if retired {
                try await AuditLog.append(
                    .init(at: time, actor: actor, app: app, action: "enrollment-key.retired", target: key),
                    on: connection,
                    logger: logger)
            }
            return retired
        }
    }

    public func keys(app: String) async throws -> [Key] {
        try await reads.read { connection, logger in
            var keys: [Key] = []
            let rows = try await connection.query(
                """
                SELECT key, added_at, retired_at FROM enrollment_keys WHERE app = \(app) ORDER BY added_at,
                    key
                """,
                logger: logger)
            for try await (key, added, retired) in rows.decode((String, Double, Double?).self) {
                keys.append(Key(app: app, key: key, addedAt: added, retiredAt: retired))
            }
            return keys
        }
    }

    /// Enrolls a new install of `app` when `key` is one of its live keys: its id, or nil.
    package func enroll(app: String, key: String, at time: Double) async throws -> String? {
        let install = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        return try await writes.write { connection, logger in
            let rows = try await connection.query(
                """
                INSERT INTO installs (app, install, enrolled_at)
                SELECT \(app), \(install), \(time)
                WHERE EXISTS (SELECT 1 FROM enrollment_keys WHERE app = \(app) AND key = \(key)
                    AND retired_at IS NULL)
                RETURNING install
                """, logger: logger)
            var enrolled: String?
            for try await id in rows.decode(String.self) { enrolled = id }
            return enrolled
        }
    }
}

/// What an enrollment answers: the install's id, the subject its data is kept under, and its
/// credential (a bearer token for the account routes of that subject).
struct Enrollment: TourValueRepresentable {
    var install: String
    var credential: String
    var expires: Int64

    var tourValue: TourValue {
        [
            "install": .string(install), "subject": .string(Installs.subjectPrefix + install),
            "credential": .string(credential), "expires": .int(Int(expires)),
        ]
    }
}
