import Foundation
import Permissions
import Persistence
import Testing
import TourFixtures
import TourRuntime

@Suite("Journal rebuild")
struct RebuildTests {
    /// Drives two users through long random sequences, then rebuilds from the journal alone.
    @Test(arguments: [1, 2, 3, 42] as [UInt64])
    func theJournalRebuildsTheStoredStateAfterARandomSequence(seed: UInt64) async throws {
        let folder = try TemporaryFolder()
        let database = try OnboardingDatabase.open(path: folder.path("rebuild.sqlite"))
        let product = fixtureProduct()
        let permissions = StubPermissionProvider(answers: [.screenTime: .granted, .health: .denied])
        let sessions = ["ann", "bob"].map {
            TourSession(
                product: product, user: $0, database: database, permissions: permissions,
                time: .virtual(start: Fixtures.t0))
        }
        var rng = SplitMix64(seed: seed)
        var accepted = 0
        for _ in 0..<400 {
            let session = sessions[Int.random(in: 0..<2, using: &rng)]
            let (event, wait) = randomEvent(using: &rng)
            do {
                let transitions =
                    if let event { try await session.send(event) } else {
                        try await session.advanceClock(by: wait)
                    }
                accepted += transitions.count
            } catch is TourRefusal {
                continue
            }
        }
        #expect(accepted > 100)
        let stored = try database.storedFlows(app: "test").mapValues { $0.filter { $0.value != FlowState() } }
            .filter { !$0.value.isEmpty }
        #expect(try JournalReplay.rebuild(app: "test", engine: product.engine, from: database) == stored)
        #expect(try JournalReplay.replay(app: "test", engine: product.engine, from: database) == stored)
        #expect(try database.journal(app: "test").count == accepted)
    }

    /// A database file at `path` where ann's session took `events`, closed again.
    static func file(_ path: String, of product: Product, after events: [TourEvent]) async throws {
        let database = try OnboardingDatabase.open(path: path)
        let session = TourSession(
            product: product, user: "ann", database: database, time: .virtual(start: Fixtures.t0))
        for event in events { try await session.send(event) }
    }

    /// Rows written before rows recorded their states (0.7 and earlier) replay; the rows after them
    /// fold on top. The early rows are made by taking the recorded states out of a copy's rows,
    /// which only a tool outside the package can do (the journal's trigger forbids it).
    @Test func rowsWithoutRecordedStatesReplayAndTheRowsAfterThemFoldOnTop() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("mixed.sqlite")
        let product = fixtureProduct()
        try await Self.file(
            path, of: product,
            after: [.appLaunched(version: "2.5"), .actionPerformed("next", parameters: [:])])
        let raw = try RawSQL(path)
        try raw.execute(
            """
            DROP TRIGGER journal_is_append_only_update;
            UPDATE journal SET states_json = NULL;
            """)
        #expect(try raw.rows("SELECT count(*) FROM journal WHERE states_json IS NULL") == [["2"]])
        let database = try OnboardingDatabase.open(path: path)
        let session = TourSession(
            product: product, user: "ann", database: database, time: .virtual(start: Fixtures.t0))
        try await session.send(.actionPerformed("choose", parameters: ["apps": "Instagram,TikTok"]))
        let stored = try database.storedFlows(app: "test")
        #expect(
            stored.values.contains { $0.values.contains { !$0.fields.isEmpty } },
            "the field set last is in the state")
        #expect(!stored.isEmpty)
        #expect(try JournalReplay.rebuild(app: "test", engine: product.engine, from: database) == stored)
        #expect(try JournalReplay.replay(app: "test", engine: product.engine, from: database) == stored)
    }

    /// Rows naming many flows the catalog does not have (more than the fold compares as bytes),
    /// for several users, interleaved: each flow's newest form wins, kept for the install (a flow
    /// of no known scope is the install's), whatever the user of its row.
    @Test func aJournalNamingManyFlowsRebuildsEachFromItsNewestForm() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("many.sqlite")
        let product = fixtureProduct()
        try await Self.file(path, of: product, after: [.appLaunched(version: "2.5")])
        let flows = 48  // three times the 16 spellings the fold compares as bytes
        let raw = try RawSQL(path)
        for round in 0..<2 {
            for flow in 0..<flows {
                let status = (round + flow) % 2 == 1 ? "completed" : "skipped"
                try raw.execute(
                    """
                    INSERT INTO journal (time, app, user, event, outcome, event_json, context_json, \
                    effects_json, states_json)
                    VALUES (\(1_000 + round * flows + flow), 'test', 'user\(flow % 3)', 'signal', 'no \
                    change', '{}', '{}', '[]',
                    '{"ghost\(flow)":{"format":2,"status":"\(status)","version":"2.5"}}');
                    """)
            }
        }
        let database = try OnboardingDatabase.open(path: path)
        let rebuilt = try JournalReplay.rebuild(app: "test", engine: product.engine, from: database)
        let install = try #require(rebuilt[SessionKey.installSubject])
        for flow in 0..<flows {
            let state = try #require(install[FlowID("ghost\(flow)")], "ghost\(flow)")
            #expect(state.status.rawValue == ((1 + flow) % 2 == 1 ? "completed" : "skipped"), "ghost\(flow)")
        }
        #expect(rebuilt.keys.allSatisfy { !$0.hasPrefix("user") }, "\(rebuilt.keys.sorted())")
    }

    @Test func aRebuildNoticesAStoredStateTheJournalDoesNotExplain() async throws {
        let database = try OnboardingDatabase.inMemory()
        let product = fixtureProduct()
        let session = TourSession(
            product: product, user: "ann", database: database, time: .virtual(start: Fixtures.t0))
        try await session.send(.appLaunched(version: "2.5"))
        try database.commit(SessionKey(app: "test", user: "ann"), scopes: product.scopes) {
            session -> (Void, JournalAppend?) in
            session.tour[run: "form"]?.position = 3
            return ((), nil)
        }
        let rebuilt = try JournalReplay.rebuild(app: "test", engine: product.engine, from: database)
        #expect(rebuilt != (try database.storedFlows(app: "test")))
    }
}

@Suite("Two writers")
struct ConcurrencyTests {
    @Test func twoConnectionsWritingOneFileBothSucceed() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("shared.sqlite")
        let product = fixtureProduct()
        let first = try OnboardingDatabase.open(path: path)
        let second = try OnboardingDatabase.open(path: path)
        let rounds = 150
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (database, user) in [(first, "ann"), (second, "bob")] {
                group.addTask {
                    let session = TourSession(
                        product: product, user: user, database: database,
                        time: .virtual(start: Fixtures.t0))
                    for index in 0..<rounds {
                        try await session.send(
                            index.isMultiple(of: 2) ? .featureVisited("dashboard") : .signal("revealed"))
                    }
                }
            }
            try await group.waitForAll()
        }
        let journal = try first.journal()
        #expect(journal.count == 2 * rounds)
        #expect(journal.filter { $0.user == "ann" }.count == rounds)
        #expect(Set(journal.map(\.id)).count == journal.count)
    }
}

@Suite("Refused input")
struct RefusedInputTests {
    @Test func aRefusedEventLeavesTheDatabaseByteForByteUnchanged() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("refused.sqlite")
        let database = try OnboardingDatabase.open(path: path)
        let product = fixtureProduct()
        let session = TourSession(
            product: product, user: "ann", database: database, time: .virtual(start: Fixtures.t0))
        try await session.send(.appLaunched(version: "2.5"))
        try await session.send(.actionPerformed("next", parameters: [:]))
        let dump = try tableDump(database, app: "test")
        let bytes = try fingerprint(path)
        for event: TourEvent in [
            .actionPerformed("next", parameters: [:]), .actionPerformed("skip", parameters: [:]),
            .actionPerformed("choose", parameters: ["bogus": "1"]), .featureVisited("nowhere"),
            .appLaunched(version: "x.y"), .replayRequested("form"),
        ] {
            await #expect(throws: TourRefusal.self) { try await session.send(event) }
        }
        #expect(try tableDump(database, app: "test") == dump)
        #expect(try fingerprint(path) == bytes)
    }

    @Test func aPasswordNeverReachesTheDatabaseFile() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("secret.sqlite")
        let database = try OnboardingDatabase.open(path: path)
        let session = TourSession(
            product: fixtureProduct(), user: "ann", database: database,
            time: .virtual(start: Fixtures.t0))
        try await session.send(.appLaunched(version: "2.5"))
        try await session.send(.replayRequested("intro"))
        try await session.send(.actionPerformed("next", parameters: [:]))
        try await session.send(
            .actionPerformed(
                "connect", parameters: ["username": "W1AW", "password": "correct-horse-battery"]))
        #expect(try await session.snapshot().card?.step == "bye")
        var bytes = Data()
        for suffix in ["", "-wal", "-shm"] {
            bytes += FileManager.default.contents(atPath: path + suffix) ?? Data()
        }
        #expect(bytes.range(of: Data("W1AW".utf8)) != nil)
        #expect(bytes.range(of: Data("correct-horse-battery".utf8)) == nil)
    }
}
