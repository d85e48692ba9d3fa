import AccountSync
import Foundation
import Logging
import OnboardingServer
import PostgresNIO
import ServerDatabase
import ServerKit
import ServerSyncAPI
import TestThreads
import Testing
import TourCodec
import TourCore

/// Group commit (`PushBatcher`): pushes arriving together are written in fewer transactions than
/// pushes, and each is answered as if written alone: its duplicates, its sign-out check, its
/// account's records after the join; a push PostgreSQL refuses fails only itself.
@Suite("Push batching", .ownThread)
struct PushBatchingTests {
    /// `body` with a store on a fresh, migrated database; `writers` nil is the unbatched store.
    func withStore(writers: Int?, _ body: @escaping @Sendable (AccountStore) async throws -> Void)
        async throws
    {
        try await TestPostgres.withMigratedClient(maximumConnections: 8) { client, logger in
            // A queue for every push the tests send at once: shedding is LoadSheddingTests' subject.
            // Patient writes: the suite's load, not the subject, can pass the production bounds.
            try await body(
                AccountStore(
                    client: client, logger: logger, batchingPushes: writers, pushQueue: 10_000,
                    pushWait: .seconds(120),
                    writeBounds: .patient))
        }
    }

    static func item(
        _ seq: Int64, flow: String, standing: AccountFlowRecord.Standing, device: String,
        event: String = "next"
    )
        -> PushItem
    {
        PushItem(
            seq: seq, time: 1_764_000_000 + Double(seq), event: event, catalogVersion: 1,
            facts: [
                .object([
                    "fact": "stepEntered", "flow": .string(flow), "step": .string("s\(seq)"),
                    "index": .int(Int(seq)),
                ])
            ],
            records: [
                flow: AccountFlowRecord(epoch: 0, standing: standing, version: "1", at: seq, device: device)
            ])
    }

    /// The writers' pool cannot reach PostgreSQL (it points where nothing listens): a push a
    /// writer took out of the queue waited for the pool's connection with no bound, where the
    /// queue's deadline did not see it (a server moving to a promoted standby waited for such
    /// pushes). It is answered `DatabaseUnavailable` (503) at its wait while the pool still tries.
    @Test func aPushWhoseWriterWaitsForAConnectionIsAnsweredAtItsWait() async throws {
        var logger = Logger(label: "push-batching")
        logger.logLevel = .critical
        let url = try DatabaseURL(try TestPostgres.freshDatabase())
        let client = PostgresClient(
            configuration: url.clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        let nowhere = try DatabaseURL("postgres://onboarding@127.0.0.1:1/nowhere")
        let writers = PostgresClient(
            configuration: nowhere.clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            group.addTask { await writers.run() }
            try await PostgresSchema.migrate(client, logger: logger)
            let store = AccountStore(
                client: client, logger: logger, batchingPushes: 1, pushClient: writers,
                pushWait: .milliseconds(300))
            let answer = Locked<String?>(nil)
            // A child task: it runs on this test's own thread, as the test's wait does.
            group.addTask {
                let batch = PushBatch(
                    device: "d", items: [Self.item(1, flow: "tour", standing: .completed, device: "d")])
                do {
                    _ = try await store.push(app: "growth", account: "ann", batch)
                    answer.withLock { $0 = "stored" }
                } catch is DatabaseUnavailable {
                    answer.withLock { $0 = "unavailable" }
                } catch {
                    answer.withLock { $0 = "\(error)" }
                }
            }
            // Ten seconds, far past the 0.3 s wait: before the fix the push was still waiting.
            for _ in 0..<200 where answer.withLock({ $0 }) == nil {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(answer.withLock { $0 } == "unavailable")
            group.cancelAll()
        }
    }

    @Test func pushesArrivingTogetherShareTransactionsAndEachIsAnsweredAsIfAlone() async throws {
        try await withStore(writers: 1) { store in
            // 60 accounts × 2 devices, 3 events each, all at once; every push sent twice (a retry).
            let pushes = (0..<60).flatMap { account in
                (0..<2).flatMap { device in
                    (1...3).flatMap { seq -> [(String, PushBatch)] in
                        let name = "d\(account)-\(device)"
                        let standing: AccountFlowRecord.Standing =
                            seq == 3 && device == 1 ? .completed : .shown
                        let batch = PushBatch(
                            device: name,
                            items: [Self.item(Int64(seq), flow: "tour", standing: standing, device: name)])
                        return [("a\(account)", batch), ("a\(account)", batch)]
                    }
                }
            }
            let acks = try await withThrowingTaskGroup(of: PushAck?.self) { group in
                for (account, batch) in pushes {
                    group.addTask {
                        // A push shed because the writer falls behind (a full queue, or its wait
                        // for the writer past on a machine busy with the whole suite: answered
                        // "not stored") is sent again, as a device does, for up to two minutes: a
                        // queue that sheds for ever fails the test, not hangs it.
                        let deadline = ContinuousClock.now + Patience.limit
                        while true {
                            do {
                                return try await store.push(app: "growth", account: account, batch)
                            } catch let error
                                where error is Overloaded
                                || (error as? DatabaseUnavailable).map({ !$0.mayHaveCommitted }) == true
                            {
                                guard ContinuousClock.now < deadline else {
                                    Issue.record("\(account)'s push was shed for two minutes: \(error)")
                                    return nil
                                }
                                try await Task.sleep(for: .milliseconds(20))
                            }
                        }
                    }
                }
                var acks: [PushAck?] = []
                for try await ack in group { acks.append(ack) }
                return acks
            }
            #expect(acks.count == pushes.count)
            // Each row was new in exactly one of its two pushes; the other saw a duplicate.
            let applied: Int = acks.map { $0?.applied ?? -1 }.reduce(0, +)
            let duplicates: Int = acks.map { $0?.duplicates ?? -1 }.reduce(0, +)
            #expect(applied == 360)
            #expect(duplicates == 360)
            // Every answer carries the account's record after the join, never behind what it pushed.
            #expect(acks.allSatisfy { $0?.records["tour"] != nil })
            let rows = try await Self.query(store, "SELECT count(*), count(DISTINCT xact) FROM pushes")
            #expect(rows[0][0] == 360)
            // Fewer transactions than pushes: they were written together.
            #expect(rows[0][1] < 360, "one transaction per push: nothing was batched")
            #expect(try await Self.query(store, "SELECT count(*) FROM facts")[0][0] == 360)
            // The join per account: the completed record (pushed by device 1) wins everywhere.
            let standings = try await Self.query(
                store, "SELECT count(*) FROM account_flows WHERE app = 'growth' AND standing = 'completed'")
            #expect(standings[0][0] == 60)
            for account in ["a0", "a59"] {
                // A read past its 3 s deadline on a machine busy with the suite is read again.
                var records: AccountRecords?
                try await TestPostgres.untilCommitted {
                    records = try await store.records(app: "growth", account: account)
                }
                #expect(records?.flows["tour"]?.standing == .completed)
            }
        }
    }

    @Test func aPushPostgreSQLRefusesFailsOnlyItselfAndARevokedTokenStoresNothing() async throws {
        try await withStore(writers: 1) { store in
            // Set-up, not the subject: a machine busy with the whole suite may keep the write's
            // connection past its 1.5 s lease; sent again, it is applied once.
            try await TestPostgres.untilCommitted {
                try await store.signOutEverywhere(
                    app: "growth", account: "gone", named: "hmac:gone", at: 2_000)
            }
            // Keep the one writer busy, so the next pushes queue and go together.
            var pushes: [(String, PushBatch, Double?)] = (0..<20).map { index in
                (
                    "ok\(index)",
                    PushBatch(
                        device: "d\(index)",
                        items: [Self.item(1, flow: "tour", standing: .shown, device: "d\(index)")]), nil
                )
            }
            // A NUL in text: PostgreSQL refuses the statement that carries it.
            pushes.insert(
                (
                    "bad",
                    PushBatch(
                        device: "x",
                        items: [Self.item(1, flow: "tour", standing: .shown, device: "x", event: "ne\u{0}xt")]
                    ), nil
                ),
                at: 10)
            // Issued before the account signed out everywhere: refused, nothing stored.
            pushes.insert(
                (
                    "gone",
                    PushBatch(
                        device: "g", items: [Self.item(1, flow: "tour", standing: .shown, device: "g")]),
                    1_000
                ), at: 5)
            let outcomes = await withTaskGroup(of: (String, Result<PushAck?, any Error>).self) { group in
                for (account, batch, issued) in pushes {
                    group.addTask {
                        do {
                            return (
                                account,
                                .success(
                                    try await store.push(
                                        app: "growth", account: account, batch, tokenIssuedAt: issued,
                                        subjectNames: ["hmac:old-key", "hmac:\(account)"]))
                            )
                        } catch {
                            return (account, .failure(error))
                        }
                    }
                }
                var outcomes: [String: Result<PushAck?, any Error>] = [:]
                for await (account, outcome) in group { outcomes[account] = outcome }
                return outcomes
            }
            for index in 0..<20 {
                let ack = try #require(try outcomes["ok\(index)"]?.get())
                #expect(ack.applied == 1)
            }
            #expect(throws: (any Error).self) { try outcomes["bad"]?.get() }
            if case .success(let ack)? = outcomes["gone"] {
                #expect(ack == nil, "revoked: answered nil")
            } else {
                Issue.record("the revoked push was not answered as revoked")
            }
            let stored = try await Self.query(
                store,
                """
                SELECT count(*) FILTER (WHERE account LIKE 'ok%'), count(*) FILTER (WHERE account IN \
                ('bad', 'gone')) FROM pushes
                """
            )
            #expect(stored[0] == [20, 0])
            #expect(
                try await Self.query(
                    store, "SELECT count(*) FROM account_flows WHERE account IN ('bad', 'gone')")[0][0] == 0)
        }
    }

    /// The tracking plan's read waits as long as the push's write does: on the server's batching
    /// store, its wait (a lock on `catalogs` answers `DatabaseUnavailable` at the bound, nothing
    /// stored); on a store writing each push alone (tools, the bench's floor, tests), until the
    /// read is answered. The latter had the server's 1.5 s, and the suite's first pushes on a
    /// loaded machine failed with `DatabaseUnavailable` while their connections were opened.
    @Test func anUnbatchedPushWaitsForItsPlanAsLongAsItsWriteDoes() async throws {
        var logger = Logger(label: "push-batching")
        logger.logLevel = .critical
        let url = try TestPostgres.freshDatabase()
        let client = PostgresClient(
            configuration: try DatabaseURL(url).clientConfiguration(maximumConnections: 4),
            backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await PostgresSchema.migrate(client, logger: logger)
            let batching = AccountStore(
                client: client, logger: logger, batchingPushes: 1, pushWait: .milliseconds(500))
            let alone = AccountStore.patient(client: client, logger: logger)
            let batch = PushBatch(
                device: "d", items: [Self.item(1, flow: "tour", standing: .completed, device: "d")])
            // Held until the test ends it (a lock of a few seconds could end before a loaded
            // machine sent the pushes).
            let holder = try DashboardTests.holdLock(on: url, table: "catalogs", seconds: 120)
            defer { DashboardTests.releaseHold(on: url, holder) }
            await #expect(throws: DatabaseUnavailable.self) {
                try await batching.push(app: "growth", account: "bea", batch)
            }
            #expect(holder.isRunning, "the batching store answered at its bound, while the lock was held")
            // The store writing alone waits for the lock to go: seen waiting on it, then answered
            // once the test ends the holder's transaction.
            let waiting = Task { try await alone.push(app: "growth", account: "ann", batch) }
            let seen = try await Patience.untilAnswered({ () async throws -> Int in
                Int(
                    try await Self.query(
                        alone,
                        """
                        SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname \
                        = current_database()
                        """
                    )[0][0])
            }) { $0 == 0 }
            #expect(seen > 0, "the store writing alone did not wait for the lock")
            DashboardTests.releaseHold(on: url, holder)
            let ack = try await waiting.value
            #expect(ack?.records["tour"]?.standing == .completed)
            #expect(
                try await Self.query(
                    alone,
                    """
                    SELECT count(*) FILTER (WHERE account = 'ann'), count(*) FILTER (WHERE account = \
                    'bea') FROM pushes
                    """
                )[0] == [1, 0])
        }
    }

    static func query(_ store: AccountStore, _ sql: String) async throws -> [[Int]] {
        var result: [[Int]] = []
        let rows = try await store.client.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test"))
        for try await row in rows {
            result.append(try row.makeRandomAccess().map { cell in Int(try cell.decode(Int64.self)) })
        }
        return result
    }
}
