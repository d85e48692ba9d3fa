import AccountSync
import Crypto
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import ServerTokens
import TourCodec

/// What a person may do in an app. Each role includes the ones before it.
public enum Role: String, CaseIterable, Comparable, Sendable {
    /// Dashboard pages and reports.
    case viewer
    /// Catalog checks (and, with the studio, drafts).
    case editor
    /// Publish, change a rollout, withdraw (roll back), register a binary's catalog.
    case publisher
    /// The app's people (roles, ending sessions), its signing keys and its audit trail.
    case owner

    public static func < (lhs: Role, rhs: Role) -> Bool { lhs.rank < rhs.rank }

    /// Its place in the order the cases are declared, each role granting what those before it grant.
    private var rank: Int { Self.allCases.firstIndex(of: self) ?? Self.allCases.count }

    public static let names = allCases.map(\.rawValue).joined(separator: ", ")
}

/// The app a role is held in: one app, or every app (an operator).
public enum RoleScope: Equatable, Hashable, Sendable, CustomStringConvertible {
    case app(String)
    case everyApp

    /// How the row stores it: the app's id, or `*`.
    var stored: String {
        switch self {
        case .app(let app): app
        case .everyApp: "*"
        }
    }

    init(stored: String) { self = stored == "*" ? .everyApp : .app(stored) }

    public var description: String {
        switch self {
        case .app(let app): app
        case .everyApp: "every app"
        }
    }

    /// The app, or nil for every app (what ``Actor/may(_:in:)`` takes).
    public var app: String? { if case .app(let app) = self { app } else { nil } }
}

/// A person as the server knows them: a name, the identity-provider claim that signs them in,
/// their roles and credentials.
public struct Person: Equatable, Sendable {
    public var name: String
    /// The value of the identity provider's claim (`ONBOARDING_OIDC_CLAIM`, by default `email`)
    /// that signs in as this person, if they sign in that way.
    public var identity: String?
    public var roles: [RoleScope: Role]
    public var credentials: [Credential]

    public struct Credential: Equatable, Sendable {
        public var id: String
        public var createdAt: Double
        public var expiresAt: Double
        public var revokedAt: Double?
    }

    /// The role that applies in `app`: the person's role there or their every-app role, the higher.
    public func role(in app: String?) -> Role? {
        let everywhere = roles[.everyApp]
        guard let app else { return everywhere }
        return [roles[.app(app)], everywhere].compactMap { $0 }.max()
    }

    public var isOperator: Bool { roles[.everyApp] != nil }
}

/// Someone acting on the control plane, as an audit row names them.
public struct Actor: Equatable, Sendable {
    /// The person's name, or `command line (USER@HOST)` for an operator at the database.
    public var name: String
    /// Where the act came from: the client's address, or `command line`.
    public var source: String
    /// The person, when it is one (nil for the command line, which holds the database).
    public var person: Person?

    public init(name: String, source: String, person: Person?) {
        self.name = name
        self.source = source
        self.person = person
    }

    /// An operator at the command line: they hold the database URL, which is every right.
    public static func commandLine() -> Actor {
        let environment = ProcessInfo.processInfo.environment
        let user = environment["USER"] ?? environment["LOGNAME"] ?? "unknown"
        let host = ProcessInfo.processInfo.hostName
        return Actor(name: "command line (\(user)@\(host))", source: "command line", person: nil)
    }

    /// Who asked, for a kept answer's scope (``IdempotentWrites/idempotent(_:body:caller:_:)``).
    package var caller: String { "person:\(name)" }

    /// Whether this actor holds at least `role` in `app` (nil: every app).
    public func may(_ role: Role, in app: String?) -> Bool {
        guard let person else { return true }
        guard let held = person.role(in: app) else { return false }
        return held >= role
    }
}

/// The people of the control plane (migration `v9-control-plane`).
public struct PeopleStore: PostgresStore {
    let writes: WritableDatabase
    let reads: ReadOnlyDatabase
    let logger: Logger

    public init(writes: WritableDatabase, reads: ReadOnlyDatabase, logger: Logger) {
        self.writes = writes
        self.reads = reads
        self.logger = logger
    }

    /// Names of people: the id rule of apps and accounts.
    public static func isValidName(_ name: String) -> Bool { SyncAPI.isValidName(name) }

    /// How long a credential lasts unless told otherwise, and at most.
    public static let defaultDays = 90
    public static let maximumDays = 365

    // MARK: - Writing

    /// A new credential's id: 128 random bits, base64url.
    static func newCredentialID() -> String {
        ByteText.base64URL(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) })
    }

    /// Gives `name` `role` in `scope`, creating the person when new. Returns the person and, when
    /// the person was created, the id of their first credential (valid `days` days).
    public func grant(
        _ role: Role, in scope: RoleScope, to name: String, identity: String?, days: Int, by actor: Actor,
        now: Double
    ) async throws -> (person: Person, newCredential: PersonCredential?) {
        return try await writes.write { connection, logger in
            let existing = try await Self.person(name, on: connection, logger: logger)
            var credential: PersonCredential?
            let auditApp: String? = if case .app(let app) = scope { app } else { nil }
            if existing == nil {
                try await connection.query(
                    """
                    INSERT INTO people (name, identity, created_at, created_by) VALUES (\(name),
                        \(identity), \(now), \(actor.name))
                    """,
                    logger: logger)
                credential = try await Self.insertCredential(
                    for: name, days: days, now: now, on: connection, logger: logger)
                // One act, one row: the person with the role they were added with.
                try await AuditLog.append(
                    .init(
                        at: now, actor: actor, app: auditApp, action: "person.added", target: name,
                        details: .members([
                            "identity": identity.map(TourValue.string),
                            "credential": credential.map { .string($0.id) },
                            "role": .string(role.rawValue), "scope": .string(scope.description),
                        ])),
                    on: connection, logger: logger)
            } else if let identity, identity != existing?.identity {
                try await connection.query(
                    "UPDATE people SET identity = \(identity) WHERE name = \(name)", logger: logger)
                try await AuditLog.append(
                    .init(
                        at: now, actor: actor, app: auditApp, action: "person.identity-changed", target: name,
                        details: ["identity": .string(identity)]),
                    on: connection, logger: logger)
            }
            try await connection.query(
                """
                INSERT INTO person_roles (person, app, role) VALUES (\(name), \(scope.stored),
                    \(role.rawValue))
                ON CONFLICT (person, app) DO UPDATE SET role = EXCLUDED.role
                """, logger: logger)
            let before = existing?.roles[scope]
            // A new person's role is in their person.added row.
            if existing != nil, before != role {
                try await AuditLog.append(
                    .init(
                        at: now, actor: actor, app: auditApp, action: "role.granted", target: name,
                        details: .members([
                            "role": .string(role.rawValue), "scope": .string(scope.description),
                            "previous": before.map { .string($0.rawValue) },
                        ])),
                    on: connection, logger: logger)
            }
            guard let person = try await Self.person(name, on: connection, logger: logger) else {
                throw PeopleError("\(name) could not be read back")
            }
            return (person, credential)
        }
    }

    /// Takes `name`'s role in `scope` away (nil: the person, every credential and session). A
    /// person left with no role is removed too. Returns the person as they were, or nil if unknown.
    public func remove(_ name: String, from scope: RoleScope?, by actor: Actor, now: Double) async throws
        -> Person?
    {
        return try await writes.write { connection, logger in
            guard let before = try await Self.person(name, on: connection, logger: logger) else { return nil }
            let auditApp: String? = if case .app(let app) = scope { app } else { nil }
            var removedRole: (role: Role, scope: RoleScope)?
            if let scope {
                guard let role = before.roles[scope] else { return before }
                try await connection.query(
                    "DELETE FROM person_roles WHERE person = \(name) AND app = \(scope.stored)",
                    logger: logger)
                removedRole = (role, scope)
            }
            let left = try await connection.query(
                "SELECT 1 FROM person_roles WHERE person = \(name)", logger: logger)
            var hasRoles = false
            for try await _ in left { hasRoles = true }
            let roleDetails: TourValue =
                removedRole.map {
                    ["role": .string($0.role.rawValue), "scope": .string($0.scope.description)]
                } ?? [:]
            // One act, one row: a person whose last role goes is removed (credentials, roles and
            // sessions with them, ON DELETE CASCADE), and that row names the role too.
            if scope == nil || !hasRoles {
                try await connection.query("DELETE FROM people WHERE name = \(name)", logger: logger)
                try await AuditLog.append(
                    .init(
                        at: now, actor: actor, app: auditApp, action: "person.removed", target: name,
                        details: roleDetails),
                    on: connection, logger: logger)
            } else if removedRole != nil {
                try await AuditLog.append(
                    .init(
                        at: now, actor: actor, app: auditApp, action: "role.removed", target: name,
                        details: roleDetails),
                    on: connection, logger: logger)
            }
            return before
        }
    }

    /// Revokes every live credential of `name` and issues a new one. Nil when there is no such person.
    public func rotate(_ name: String, days: Int, by actor: Actor, now: Double) async throws
        -> PersonCredential?
    {
        return try await writes.write { connection, logger in
            guard try await Self.person(name, on: connection, logger: logger) != nil else { return nil }
            try await connection.query(
                """
                UPDATE person_credentials SET revoked_at = \(now) WHERE person = \(name)
                    AND revoked_at IS NULL
                """,
                logger: logger)
            // Sessions opened with a revoked credential end with it.
            try await connection.query(
                "DELETE FROM dashboard_sessions WHERE person = \(name)", logger: logger)
            let credential = try await Self.insertCredential(
                for: name, days: days, now: now, on: connection, logger: logger)
            try await AuditLog.append(
                .init(
                    at: now, actor: actor, app: nil, action: "credential.rotated", target: name,
                    details: ["credential": .string(credential.id)]),
                on: connection, logger: logger)
            return credential
        }
    }

    /// Ends every dashboard session of `name`; how many there were.
    public func endSessions(of name: String, app: String?, by actor: Actor, now: Double) async throws -> Int {
        return try await writes.write { connection, logger in
            let rows = try await connection.query(
                """
                WITH ended AS (DELETE FROM dashboard_sessions WHERE person = \(name) RETURNING 1)
                    SELECT count(*) FROM ended
                """,
                logger: logger)
            var ended = 0
            for try await count in rows.decode(Int64.self) { ended = Int(count) }
            try await AuditLog.append(
                .init(
                    at: now, actor: actor, app: app, action: "sessions.ended", target: name,
                    details: ["sessions": .int(ended)]),
                on: connection, logger: logger)
            return ended
        }
    }

    static func insertCredential(
        for name: String, days: Int, now: Double, on connection: PostgresConnection, logger: Logger
    ) async throws -> PersonCredential {
        let credential = PersonCredential(
            person: name, id: newCredentialID(), issuedAt: now, expires: Int64(now) + Int64(days) * 86_400)
        try await connection.query(
            """
            INSERT INTO person_credentials (id, person, created_at, expires_at)
            VALUES (\(credential.id), \(name), \(now), \(Double(credential.expires)))
            """, logger: logger)
        return credential
    }
}

/// A credential issued to a person: sign it with the key ring (``TokenSigner``) to get the text
/// the person keeps. The server stores its id and dates, never the signed text.
public struct PersonCredential: Equatable, Sendable {
    public var person: String
    public var id: String
    public var issuedAt: Double
    public var expires: Int64

    public var claims: TokenClaims {
        TokenClaims(
            subject: person, scope: .person, app: nil, issuedAt: issuedAt, expires: expires, credential: id)
    }
}

public struct PeopleError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
