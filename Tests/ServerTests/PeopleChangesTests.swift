import AccountSync
import Foundation
import ServerKit
import ServerTokens
import Synchronization
import Testing

@testable import ServerControlPlane

/// The rules of an owner's changes to an app's people (`PeopleChanges`), which the `/v1` routes
/// and the dashboard's people page both call: over a repository of the test's own, in process, so
/// each rule is checked once for both ways in (ControlPlaneTests sends the same refusals through
/// the real server and PostgreSQL).
@Suite("People changes and their rules")
struct PeopleChangesTests {
    /// People in memory; records every grant, removal and session ending it is asked for.
    final class MemoryPeople: PeopleRepository, Sendable {
        let state = Mutex<(people: [String: Person], asked: [String])>(([:], []))

        init(_ people: [Person]) {
            state.withLock { $0.people = Dictionary(uniqueKeysWithValues: people.map { ($0.name, $0) }) }
        }

        var asked: [String] { state.withLock { $0.asked } }

        func person(_ name: String) async throws -> Person? { state.withLock { $0.people[name] } }
        func person(identity: String) async throws -> Person? {
            state.withLock { $0.people.values.first { $0.identity == identity } }
        }
        func list(app: String?) async throws -> [Person] { state.withLock { Array($0.people.values) } }

        func grant(
            _ role: Role, in scope: RoleScope, to name: String, identity: String?, days: Int, by actor: Actor,
            now: Double
        ) async throws -> (person: Person, newCredential: PersonCredential?) {
            state.withLock { state in
                state.asked.append("grant \(role.rawValue) \(scope) \(name) \(identity ?? "-") \(days)")
                let isNew = state.people[name] == nil
                var person =
                    state.people[name] ?? Person(name: name, identity: nil, roles: [:], credentials: [])
                person.roles[scope] = role
                if let identity { person.identity = identity }
                state.people[name] = person
                let credential = PersonCredential(
                    person: name, id: "c-\(name)", issuedAt: now, expires: Int64(now) + Int64(days) * 86_400)
                return (person, isNew ? credential : nil)
            }
        }

        func remove(_ name: String, from scope: RoleScope?, by actor: Actor, now: Double) async throws
            -> Person?
        {
            state.withLock { state in
                state.asked.append("remove \(name) \(scope.map { "\($0)" } ?? "everything")")
                guard let before = state.people[name] else { return nil }
                if let scope { state.people[name]?.roles[scope] = nil } else { state.people[name] = nil }
                return before
            }
        }

        func endSessions(of name: String, app: String?, by actor: Actor, now: Double) async throws -> Int {
            state.withLock { $0.asked.append("end sessions \(name) \(app ?? "-")") }
            return 2
        }
    }

    static let owner = Person(name: "olga", identity: nil, roles: [.app("growth"): .owner], credentials: [])
    static let actor = Actor(name: "olga", source: "203.0.113.9", person: owner)

    func changes(_ people: MemoryPeople) throws -> PeopleChanges {
        PeopleChanges(people: people, tokens: try TokenSigner(secret: String(repeating: "s", count: 40)))
    }

    /// The refusal `body` throws, as the API and the page carry it.
    func refusal(_ body: () async throws -> Void) async -> APIError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? APIError
        }
    }

    @Test func aNewPersonGetsTheirRoleAndOneSignedCredential() async throws {
        let people = MemoryPeople([Self.owner])
        let (person, credential) = try await changes(people).grant(
            .viewer, in: "growth", to: "ann", identity: "ann@example.com", by: Self.actor)
        #expect(person.roles == [.app("growth"): .viewer])
        let text = try #require(credential)
        let claims = try await TokenSigner(secret: String(repeating: "s", count: 40)).verify(
            text, now: Date())
        #expect(claims.subject == "ann")
        #expect(claims.credential == "c-ann")
        #expect(people.asked == ["grant viewer growth ann ann@example.com \(PeopleStore.defaultDays)"])
        // Someone who has a role already gets no new credential.
        let (_, again) = try await changes(people).grant(
            .publisher, in: "growth", to: "ann", identity: nil, by: Self.actor)
        #expect(again == nil)
    }

    @Test func anOwnerSetsTheIdentityOnlyOfSomeoneWhoseRolesAreAllInTheirApp() async throws {
        let ann = Person(
            name: "ann", identity: "ann@old.example",
            roles: [.app("growth"): .viewer, .app("finite"): .viewer],
            credentials: [])
        let people = MemoryPeople([Self.owner, ann])
        let refused = await refusal {
            _ = try await changes(people).grant(
                .viewer, in: "growth", to: "ann", identity: "mallory@example.com", by: Self.actor)
        }
        #expect(refused?.status == .forbidden)
        #expect(refused?.message.contains("only an operator changes their identity") == true)
        #expect(people.asked.isEmpty, "a refused change asks nothing of storage")
        // The same identity, or none, is no change of it: the role is given.
        _ = try await changes(people).grant(
            .publisher, in: "growth", to: "ann", identity: "ann@old.example", by: Self.actor)
        _ = try await changes(people).grant(
            .publisher, in: "growth", to: "ann", identity: nil, by: Self.actor)
        #expect(people.asked.count == 2)
        // Of someone whose roles are all in this app, the owner sets it.
        let bob = Person(
            name: "bob", identity: "bob@old.example", roles: [.app("growth"): .viewer], credentials: [])
        let onlyHere = MemoryPeople([Self.owner, bob])
        let (person, _) = try await changes(onlyHere).grant(
            .viewer, in: "growth", to: "bob", identity: "bob@new.example", by: Self.actor)
        #expect(person.identity == "bob@new.example")
    }

    @Test func removingSomeoneWithNoRoleInTheAppIsNotFound() async throws {
        let ann = Person(name: "ann", identity: nil, roles: [.app("finite"): .viewer], credentials: [])
        let people = MemoryPeople([Self.owner, ann])
        for name in ["ann", "nobody"] {
            let refused = await refusal {
                try await changes(people).remove(name, from: "growth", by: Self.actor)
            }
            #expect(refused?.status == .notFound, "\(name)")
            #expect(refused?.message == "\(name) holds no role in growth")
        }
        let removed = try await changes(people).remove("olga", from: "growth", by: Self.actor)
        #expect(removed.roles[.app("growth")] == .owner)
    }

    @Test func anOwnerEndsOnlyTheSessionsOfPeopleWhollyInAppsTheyOwn() async throws {
        let ann = Person(
            name: "ann", identity: nil, roles: [.app("growth"): .viewer, .app("finite"): .viewer],
            credentials: [])
        let bob = Person(name: "bob", identity: nil, roles: [.app("growth"): .publisher], credentials: [])
        let people = MemoryPeople([Self.owner, ann, bob])
        let refused = await refusal {
            _ = try await changes(people).endSessions(of: "ann", app: "growth", by: Self.actor)
        }
        #expect(refused?.status == .forbidden)
        #expect(refused?.message.contains("also holds roles in finite") == true)
        let absent = await refusal {
            _ = try await changes(people).endSessions(of: "cy", app: "growth", by: Self.actor)
        }
        #expect(absent?.status == .notFound)
        #expect(try await changes(people).endSessions(of: "bob", app: "growth", by: Self.actor) == 2)
        #expect(people.asked == ["end sessions bob growth"])
    }
}
