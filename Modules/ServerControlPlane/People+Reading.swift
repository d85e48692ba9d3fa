import Logging
import PostgresNIO
import ServerDatabase

/// Reading people: one by name or by their identity provider's subject, everyone of an app, and
/// the person a live credential opens.
extension PeopleStore {

    public func person(_ name: String) async throws -> Person? {
        try await reads.read { connection, logger in
            try await Self.person(name, on: connection, logger: logger)
        }
    }

    /// The person whose identity is `identity` (the identity provider's claim), if any.
    public func person(identity: String) async throws -> Person? {
        try await reads.read { connection, logger in
            let rows = try await connection.query(
                "SELECT name FROM people WHERE identity = \(identity)", logger: logger)
            var found: String?
            for try await name in rows.decode(String.self) { found = name }
            guard let found else { return nil }
            return try await Self.person(found, on: connection, logger: logger)
        }
    }

    static func person(_ name: String, on connection: PostgresConnection, logger: Logger) async throws
        -> Person?
    {
        let rows = try await connection.query(
            "SELECT identity FROM people WHERE name = \(name)", logger: logger)
        var found: String?? = nil
        for try await identity in rows.decode(String?.self) { found = .some(identity) }
        guard let identity = found else { return nil }
        var person = Person(name: name, identity: identity, roles: [:], credentials: [])
        let roles = try await connection.query(
            "SELECT app, role FROM person_roles WHERE person = \(name)", logger: logger)
        for try await (app, role) in roles.decode((String, String).self) {
            if let role = Role(rawValue: role) { person.roles[RoleScope(stored: app)] = role }
        }
        let credentials = try await connection.query(
            """
            SELECT id, created_at, expires_at, revoked_at FROM person_credentials WHERE person = \(name)
                ORDER BY created_at
            """,
            logger: logger)
        for try await (id, created, expires, revoked) in credentials.decode(
            (String, Double, Double, Double?).self)
        {
            person.credentials.append(
                .init(id: id, createdAt: created, expiresAt: expires, revokedAt: revoked))
        }
        return person
    }

    /// Everyone, or everyone holding a role in `app` (operators included), by name.
    public func list(app: String?) async throws -> [Person] {
        try await reads.read { connection, logger in
            let rows: PostgresRowSequence
            if let app {
                rows = try await connection.query(
                    """
                    SELECT DISTINCT person FROM person_roles WHERE app = \(app) OR app = '*' ORDER BY person
                    """,
                    logger: logger)
            } else {
                rows = try await connection.query("SELECT name FROM people ORDER BY name", logger: logger)
            }
            var names: [String] = []
            for try await name in rows.decode(String.self) { names.append(name) }
            var people: [Person] = []
            for name in names {
                if let person = try await Self.person(name, on: connection, logger: logger) {
                    people.append(person)
                }
            }
            return people
        }
    }

    /// The person a credential opens, if the credential is theirs, live (not revoked, not expired)
    /// and the person still exists.
    public func person(credential: String, of name: String, now: Double) async throws -> Person? {
        try await reads.read { connection, logger in
            let rows = try await connection.query(
                """
                SELECT 1 FROM person_credentials
                WHERE id = \(credential) AND person = \(name) AND revoked_at IS NULL AND expires_at > \(now)
                """, logger: logger)
            var live = false
            for try await _ in rows { live = true }
            return live ? try await Self.person(name, on: connection, logger: logger) : nil
        }
    }
}
