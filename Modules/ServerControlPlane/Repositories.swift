import AccountSync

// What the control plane's routes (`ControlPlaneRoutes`) ask of storage, and nothing more: the
// routes are given these, so what a request about people, keys or the audit trail may do to the
// database is read here. `PeopleStore`, `PublicationKeyStore` and `AuditLog` keep them on
// PostgreSQL. (The control plane itself, which the routes hold to authenticate and authorise, is
// not how they reach storage.)

/// People and their roles, credentials and dashboard sessions.
package protocol PeopleRepository: Sendable {
    func person(_ name: String) async throws -> Person?
    /// The people with a role in `app` (nil: everyone).
    func list(app: String?) async throws -> [Person]
    /// Gives `name` `role` in `scope`; the person, and their first credential when new.
    func grant(
        _ role: Role, in scope: RoleScope, to name: String, identity: String?, days: Int, by actor: Actor,
        now: Double
    ) async throws -> (person: Person, newCredential: PersonCredential?)
    /// Takes `name`'s role in `scope` away (nil: everything of them); the person as they were.
    func remove(_ name: String, from scope: RoleScope?, by actor: Actor, now: Double) async throws -> Person?
    /// Ends every dashboard session of `name`; how many there were.
    func endSessions(of name: String, app: String?, by actor: Actor, now: Double) async throws -> Int
}

/// An app's publication keys.
package protocol PublicationKeyRepository: Sendable {
    func all(app: String) async throws -> [PublicationKeyStore.Stored]
    func register(_ key: PublicationKey, by actor: Actor, at time: Double) async throws
        -> PublicationKeyStore.Outcome
    func retire(app: String, id: String, by actor: Actor, at time: Double) async throws
        -> PublicationKeyStore.Outcome
}

/// The audit trail, read.
package protocol AuditRepository: Sendable {
    func list(_ filter: AuditLog.Filter) async throws -> [AuditLog.Entry]
}

extension PeopleStore: PeopleRepository {}
extension PublicationKeyStore: PublicationKeyRepository {}
extension AuditLog: AuditRepository {}
