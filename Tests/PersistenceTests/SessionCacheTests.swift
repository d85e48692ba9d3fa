import Foundation
import Persistence
import Testing
import TourCodec
import TourCore
import TourRuntime

/// A commit reuses the session the previous commit left, but never a stale one: whatever wrote in
/// between (another connection, this connection for another user or for sync, a rollback) is seen.
@Suite("The session kept between commits")
struct SessionCacheTests {
    static let scopes = Scopes(flows: [:], state: StateScopes(.user, except: ["shared": .install]))

    /// Adds one to `name` and returns what the commit saw before.
    static func bump(_ database: OnboardingDatabase, _ user: String, _ name: String) throws -> Int {
        try database.commit(SessionKey(app: "test", user: user), scopes: scopes) { session in
            let seen = session.domain[name]?.intValue ?? 0
            session.domain[name] = .int(seen + 1)
            return (seen, nil)
        }
    }

    @Test func anotherConnectionsWriteIsSeenByTheNextCommit() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("cache.sqlite")
        let first = try OnboardingDatabase.open(path: path)
        #expect(try Self.bump(first, "ann", "n") == 0)
        #expect(try Self.bump(first, "ann", "n") == 1)
        let second = try OnboardingDatabase.open(path: path)
        #expect(try Self.bump(second, "ann", "n") == 2)
        #expect(try Self.bump(first, "ann", "n") == 3, "the first connection used the session it kept")
        // A raw write that no commit made (another process, a tool) is seen too.
        try RawSQL(path).execute("UPDATE domain_state SET value_json = '10' WHERE key = 'n'")
        #expect(try Self.bump(first, "ann", "n") == 10)
    }

    @Test func thisConnectionsOtherWritesAreSeen() throws {
        let folder = try TemporaryFolder()
        let database = try OnboardingDatabase.open(path: folder.path("cache.sqlite"))
        #expect(try Self.bump(database, "ann", "shared") == 0)
        // Bob's commit changes the install-scoped key that Ann's kept session holds.
        #expect(try Self.bump(database, "bob", "shared") == 1)
        #expect(try Self.bump(database, "ann", "shared") == 2)
        // A refused commit changes nothing, in the file or in the session kept.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try database.commit(SessionKey(app: "test", user: "ann"), scopes: Self.scopes) {
                session -> (Void, JournalAppend?) in
                session.domain["shared"] = 99
                throw Refused()
            }
        }
        #expect(try Self.bump(database, "ann", "shared") == 3)
        // Other scopes for the same user read again: kept per user, the key has no row of Ann's.
        #expect(
            try database.commit(
                SessionKey(app: "test", user: "ann"), scopes: Scopes(flows: [:], state: StateScopes(.user))
            ) {
                session in (session.domain["shared"]?.intValue, nil)
            } == nil)
    }

    /// Commits one journal row for `user` with `context`.
    static func journal(_ database: OnboardingDatabase, _ user: String, _ context: TourContext) throws {
        try database.commit(SessionKey(app: "test", user: user), scopes: scopes) { session in
            let record = JournalRecord(flow: nil, step: nil, event: .signal("tick"), outcome: "")
            return (
                (),
                JournalAppend(time: Date(), record: record, context: context, effects: [], catalogVersion: 1)
            )
        }
    }

    /// The context's text is kept from one row to the next only while the context is the same:
    /// each row holds its own event's context, whoever wrote before on this connection.
    @Test func eachJournalRowHoldsItsOwnContext() throws {
        let folder = try TemporaryFolder()
        let database = try OnboardingDatabase.open(path: folder.path("cache.sqlite"))
        let contexts: [(String, TourContext)] = [
            ("ann", ["voiceOver": false, "textSize": "large"]),
            ("ann", ["voiceOver": false, "textSize": "large"]),
            ("ann", ["voiceOver": true, "textSize": "large"]),
            ("bob", ["voiceOver": true, "textSize": "large"]),
            ("bob", ["voiceOver": true]),
            ("bob", ["voiceOver": true, "weight": .double(0)]),
            // Equal by `==`, written differently: not the same text.
            ("bob", ["voiceOver": true, "weight": .double(-0.0)]),
            ("ann", ["nested": .object(["weight": .double(-0.0)])]),
            ("ann", ["nested": .object(["weight": .double(0)])]),
            ("ann", ["list": .list([.int(1), .double(0)])]),
            ("ann", ["list": .list([.int(1), .double(-0.0)])]),
            ("ann", [:]),
        ]
        for (user, context) in contexts { try Self.journal(database, user, context) }
        let rows = try database.journal(app: "test")
        #expect(try rows.map(\.contextJSON) == contexts.map { try TourValue.object($0.1).jsonText() })
        #expect(rows[6].contextJSON.contains("-0"), "the sign of a zero is kept: \(rows[6].contextJSON)")
    }
}
