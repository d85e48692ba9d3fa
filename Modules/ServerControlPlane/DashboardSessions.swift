import Crypto
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import TourCodec

/// The dashboard's sign-in sessions (migrations `v5-dashboard-sessions`, `v9-control-plane`). The
/// cookie carries 256 random bits; the table keeps only their SHA-256, so neither the database nor
/// its backups hold a session. A session names its person, lasts ``lifetime`` or until the
/// credential it was opened with expires, whichever comes first, and ends at sign-out, when the
/// person is removed or their credential rotated, or when an owner ends it (its row is deleted).
/// What the person may see is read from their roles on every page, so a role removed applies at once.
public struct DashboardSessions: Sendable {
    let writes: WritableDatabase
    let reads: ReadOnlyDatabase
    let logger: Logger

    public init(writes: WritableDatabase, reads: ReadOnlyDatabase, logger: Logger) {
        self.writes = writes
        self.reads = reads
        self.logger = logger
    }

    /// Eight hours: a working day.
    public static let lifetime: Double = 8 * 3600

    public struct Session: Equatable, Sendable {
        public var person: String
        /// The credential it was opened with (its id), or nil for the identity provider.
        public var credential: String?
        public var expiresAt: Double
        /// The cookie's value, from which the page's anti-forgery token is derived.
        public var cookie: String

        /// The anti-forgery token of every form of this session: derived from the cookie's secret
        /// (which only this browser and this session have), with a label of its own so it is
        /// neither the cookie nor the hash the table keeps.
        public var formToken: String { DashboardSessions.derive("form", cookie) }
    }

    /// Opens a session for `person`, with its audit row in the same transaction; returns it (with
    /// the cookie's value).
    public func open(person: String, credential: String?, expires: Double, now: Double, audit: AuditLog.Entry)
        async throws -> Session
    {
        let value = ByteText.base64URL(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
        let session = Session(
            person: person, credential: credential, expiresAt: min(now + Self.lifetime, expires),
            cookie: value)
        try await writes.write { connection, logger in
            try await connection.query(
                """
                INSERT INTO dashboard_sessions (id_hash, created_at, expires_at, person, credential)
                VALUES (\(Self.hash(value)), \(now), \(session.expiresAt), \(person), \(credential))
                """, logger: logger)
            // Expired sessions are removed as new ones open: the table stays the size of the live ones.
            try await connection.query(
                "DELETE FROM dashboard_sessions WHERE expires_at <= \(now)", logger: logger)
            try await AuditLog.append(audit, on: connection, logger: logger)
        }
        return session
    }

    /// The live session the cookie's value opens, if any: a value never issued, tampered with,
    /// signed out or expired opens none.
    /// A session opened with a credential lasts only while the credential is live.
    public func find(_ value: String, now: Double) async throws -> Session? {
        try await reads.read { connection, logger in
            guard Self.isWellFormed(value) else { return nil }
            let rows = try await connection.query(
                """
                SELECT s.person, s.credential, s.expires_at FROM dashboard_sessions s
                WHERE s.id_hash = \(Self.hash(value)) AND s.expires_at > \(now)
                  AND (s.credential IS NULL OR EXISTS (
                    SELECT 1 FROM person_credentials c
                    WHERE c.id = s.credential AND c.person = s.person AND c.revoked_at IS NULL
                        AND c.expires_at > \(now)))
                """,
                logger: logger)
            for try await (person, credential, expires) in rows.decode((String, String?, Double).self) {
                return Session(person: person, credential: credential, expiresAt: expires, cookie: value)
            }
            return nil
        }
    }

    /// Ends the session, with its audit row in the same transaction.
    public func close(_ value: String, audit: AuditLog.Entry) async throws {
        guard Self.isWellFormed(value) else { return }
        try await writes.write { connection, logger in
            try await connection.query(
                "DELETE FROM dashboard_sessions WHERE id_hash = \(Self.hash(value))", logger: logger)
            try await AuditLog.append(audit, on: connection, logger: logger)
        }
    }

    /// 43 base64url characters (256 bits), as ``open`` makes them.
    public static func isWellFormed(_ value: String) -> Bool {
        value.utf8.count == 43
            && value.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                    || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F
            }
    }

    static func hash(_ value: String) -> String {
        ByteText.hex(SHA256.hash(data: Data(value.utf8)))
    }

    /// A value derived from a cookie's secret for one purpose (`form`: a session's anti-forgery
    /// token; `sign-in`: the sign-in form's), base64url.
    public static func derive(_ purpose: String, _ secret: String) -> String {
        ByteText.base64URL(Data(SHA256.hash(data: Data("onboarding dashboard \(purpose)\n\(secret)".utf8))))
    }

    /// Whether `given` is the token `derive(purpose, secret)` gives, compared in constant time.
    public static func matches(_ given: String?, _ purpose: String, _ secret: String) -> Bool {
        guard let given else { return false }
        let expected = Array(derive(purpose, secret).utf8)
        let bytes = Array(given.utf8)
        guard bytes.count == expected.count else { return false }
        return zip(bytes, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// A signed-in dashboard request: its session and its person as they are now (their roles read
/// afresh on every request, so a role removed applies at once). The dashboard's session middleware
/// puts it in the request's context (``ServerIdentity/dashboard(_:)``).
public struct DashboardAccess: Sendable {
    public var session: DashboardSessions.Session
    public var person: Person

    public init(session: DashboardSessions.Session, person: Person) {
        self.session = session
        self.person = person
    }

    public func may(_ role: Role, in app: String) -> Bool { person.role(in: app).map { $0 >= role } ?? false }
    /// Of `apps`, those the person holds any role in.
    public func visible(_ apps: [String]) -> [String] { apps.filter { person.role(in: $0) != nil } }
}
