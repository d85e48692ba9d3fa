import AccountSync
import Foundation
import ServerKit
import ServerTokens

/// What an app's owner may do to its people, and the rules each change keeps, whichever way it
/// arrives: the `/v1/apps/{app}/people` routes and the dashboard's people page both call these, so
/// the rules live here once. (Each caller parses its own input and keeps its own idempotency: a
/// JSON body under `Idempotency-Key`, a form under its hidden key.) A refusal is an ``APIError``
/// with its status; the dashboard shows its message on the page.
package struct PeopleChanges: Sendable {
    let people: any PeopleRepository
    /// Signs a new person's first credential, which is answered once and never stored.
    let tokens: TokenSigner

    package init(people: any PeopleRepository, tokens: TokenSigner) {
        self.people = people
        self.tokens = tokens
    }

    /// The longest identity-provider claim a person is given.
    package static let maximumIdentity = 320

    /// Gives `name` `role` in `app` (creating the person), and the new person's first credential,
    /// signed, when they are new (their credential lasts ``PeopleStore/defaultDays``).
    ///
    /// Who signs in as a person is theirs and their operators' to say: an owner sets the identity
    /// only of someone who holds roles in this app alone.
    package func grant(
        _ role: Role, in app: String, to name: String, identity: String?, by actor: Actor
    ) async throws -> (person: Person, credential: String?) {
        if let identity, let existing = try await people.person(name), existing.identity != identity,
            existing.roles.keys.contains(where: { $0 != .app(app) })
        {
            throw APIError(
                status: .forbidden, code: "forbidden",
                message:
                    """
                    \(name) holds roles outside \(app); only an operator changes their identity \
                    (onboarding-server people add)
                    """
            )
        }
        let (person, credential) = try await people.grant(
            role, in: .app(app), to: name, identity: identity, days: PeopleStore.defaultDays, by: actor,
            now: Date().timeIntervalSince1970)
        guard let credential else { return (person, nil) }
        return (person, await tokens.sign(credential.claims))
    }

    /// Takes `name`'s role in `app` away; the person as they were. Not found when they held none.
    @discardableResult
    package func remove(_ name: String, from app: String, by actor: Actor) async throws -> Person {
        let removed = try await people.remove(
            name, from: .app(app), by: actor, now: Date().timeIntervalSince1970)
        guard let removed, removed.roles[.app(app)] != nil else {
            throw APIError(status: .notFound, code: "not_found", message: "\(name) holds no role in \(app)")
        }
        return removed
    }

    /// Ends `name`'s dashboard sessions for an owner of `app`; how many there were. Sessions are a
    /// person's, across apps, so an owner ends only those of people whose every role is in apps
    /// they own; an operator, anyone's.
    package func endSessions(of name: String, app: String, by actor: Actor) async throws -> Int {
        guard let person = try await people.person(name), person.role(in: app) != nil else {
            throw APIError(status: .notFound, code: "not_found", message: "\(name) holds no role in \(app)")
        }
        let beyond = person.roles.keys.filter { !actor.may(.owner, in: $0.app) }
        guard beyond.isEmpty else {
            throw APIError(
                status: .forbidden, code: "forbidden",
                message:
                    """
                    \(name) also holds roles in \(beyond.map(\.description).sorted().joined(separator: ", "))\
                    ; only an owner of those, or an operator, ends their sessions
                    """
            )
        }
        return try await people.endSessions(of: name, app: app, by: actor, now: Date().timeIntervalSince1970)
    }
}
