import AccountSync

// What the control plane's routes (`ControlPlaneRoutes`) and the dashboard ask of storage, and
// nothing more: they are given these, so what a request about people, keys, sessions or the audit
// trail may do to the database is read here. `PeopleStore`, `PublicationKeyStore`, `AuditLog` and
// `DashboardSessions` keep them on PostgreSQL. (The control plane itself, which the routes hold to
// authenticate and authorise, is not how they reach storage.)

/// People and their roles, credentials and dashboard sessions.
package protocol PeopleRepository: Sendable {
    func person(_ name: String) async throws -> Person?
    /// The person who signs in with the identity provider's `identity`.
    func person(identity: String) async throws -> Person?
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

/// The audit trail: read, and an entry of the caller's own (a refused sign-in) appended.
package protocol AuditRepository: Sendable {
    func list(_ filter: AuditLog.Filter) async throws -> [AuditLog.Entry]
    func record(_ entry: AuditLog.Entry) async throws
}

/// The dashboard's sessions: opened at a sign-in, found by their cookie, closed at a sign-out.
package protocol SessionRepository: Sendable {
    func open(person: String, credential: String?, expires: Double, now: Double, audit: AuditLog.Entry)
        async throws -> DashboardSessions.Session
    func find(_ value: String, now: Double) async throws -> DashboardSessions.Session?
    func close(_ value: String, audit: AuditLog.Entry) async throws
}

extension PeopleStore: PeopleRepository {}
extension PublicationKeyStore: PublicationKeyRepository {}
extension AuditLog: AuditRepository {}
extension DashboardSessions: SessionRepository {}
