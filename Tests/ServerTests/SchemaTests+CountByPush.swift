import AccountSync
import Foundation
import Logging
import OnboardingServer
import PostgresNIO
import ServerSyncAPI
import Testing
import TourCodec

/// v27: the catch-up looks up each counted push's facts by its key, without JIT.
extension SchemaTests {
    /// The same pushes (journeys, skips, reruns, experiment arms) counted by v26's catch-up and by
    /// v27's leave every insights table the same, whether counted one catch-up per push or all in one.
    @Test(arguments: [false, true]) func theCatchUpByPushCountsWhatItCountedBefore(oneAtATime: Bool)
        async throws
    {
        var tables: [[String]] = []
        for through in ["v26-held-facts", nil] {
            try await Self.withJourneyDatabase { client, logger in
                _ = try await PostgresSchema.migrate(client, logger: logger, through: through)
                let store = AccountStore.patient(client: client, logger: logger)
                for (account, batch) in Self.armedJourneyPushes() {
                    _ = try await store.push(app: "growth", account: account, batch)
                    if oneAtATime { try await store.catchUpInsights(waitingUpTo: .seconds(30)) }
                }
                for (account, device, item) in Self.rerunPushes() {
                    _ = try await store.push(
                        app: "growth", account: account, PushBatch(device: device, items: [item]))
                    if oneAtATime { try await store.catchUpInsights(waitingUpTo: .seconds(30)) }
                }
                try await store.catchUpInsights(waitingUpTo: .seconds(30))
                tables.append(try await Self.insightTables(client, logger))
            }
        }
        #expect(tables.count == 2)
        #expect(tables.first?.contains { $0.hasPrefix("insight_arm_counts ") && !$0.hasSuffix(" 0") } == true)
        #expect(tables.first == tables.last)
    }

    /// A catch-up reads `facts` only through the counted pushes' keys: however many facts are
    /// stored, none of its partitions is read from end to end (v26 hashed all of them at every
    /// run), and its statements are not compiled by JIT.
    @Test func theCatchUpReadsTheFactsOfWhatItCountsOnly() async throws {
        try await Self.withJourneyDatabase { client, logger in
            _ = try await PostgresSchema.migrate(client, logger: logger)
            // 20,000 counted pushes of one fact each, then the new ones to count, the statistics
            // as the migrations left them (empty tables): PostgreSQL's estimates lag what is stored.
            try await client.query(
                """
                INSERT INTO pushes (app, account, device, seq, time, event, catalog_version)
                SELECT 'bulk', 'b' || i, 'd' || i, 1, 1767603600, 'next', 1 FROM generate_series(1, 20000) i
                """, logger: logger)
            try await client.query(
                """
                INSERT INTO facts (app, account, device, seq, idx, kind, flow, step, body)
                SELECT 'bulk', 'b' || i, 'd' || i, 1, 0, 'stepEntered', 'tour', 'a', '{}'
                FROM generate_series(1, 20000) i
                """, logger: logger)
            let store = AccountStore.patient(client: client, logger: logger)
            try await store.catchUpInsights(waitingUpTo: .seconds(30))
            for (account, batch) in Self.armedJourneyPushes() {
                _ = try await store.push(app: "growth", account: account, batch)
            }
            #expect(
                try await Self.rows(
                    client, logger,
                    "SELECT array_to_string(proconfig, ',') FROM pg_proc WHERE proname = 'insight_catch_up'")
                    == ["plan_cache_mode=force_custom_plan,jit=off"])

            let before = try await Self.factScans(client, logger)
            try await client.withConnection { connection in
                try await connection.query("SELECT insight_catch_up()", logger: logger)
                // The counters of this session's reads, flushed at its next idle moment.
                try await connection.query("SELECT pg_stat_force_next_flush()", logger: logger)
            }
            var after = before
            let deadline = ContinuousClock.now + Patience.limit
            while after.byIndex == before.byIndex, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                after = try await Self.factScans(client, logger)
            }
            #expect(
                after.byIndex > before.byIndex,
                "the catch-up's reads of facts never showed in pg_stat_user_tables")
            #expect(
                after.sequential == before.sequential, "a catch-up read a partition of facts from end to end")
            #expect(try await Self.stages(client, logger).first == "started 12 0 0")
            #expect(
                try await Self.rows(client, logger, "SELECT count(*)::text FROM insight_run_facts") == ["0"])
        }
    }

    /// Sequential and index scans of every partition of `facts` so far.
    static func factScans(_ client: PostgresClient, _ logger: Logger) async throws -> (
        sequential: Int, byIndex: Int
    ) {
        let row = try await Self.rows(
            client, logger,
            """
            SELECT sum(seq_scan) || ' ' || sum(coalesce(idx_scan, 0)) FROM pg_stat_user_tables
            WHERE relname LIKE 'facts\\_p%'
            """)
        let numbers = (row.first ?? "").split(separator: " ").compactMap { Int($0) }
        return (numbers.first ?? 0, numbers.last ?? 0)
    }

    /// Every insights table's rows, but the watermark's, the standings' (whose shards are the
    /// writing connection's) and the catch-up's scratch table (empty between runs), one line per
    /// table: its name, a digest of its sorted rows, and its row count.
    static func insightTables(_ client: PostgresClient, _ logger: Logger) async throws -> [String] {
        let names = try await Self.rows(
            client, logger,
            """
            SELECT tablename::text FROM pg_tables WHERE tablename LIKE 'insight\\_%'
                AND tablename NOT IN ('insight_progress', 'insight_standings', 'insight_run_facts') ORDER BY 1
            """)
        var lines: [String] = []
        for name in names {
            let digest = try await Self.rows(
                client, logger,
                """
                SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') || ' ' || count(*)
                FROM \(name) t
                """)
            lines.append("\(name) \(digest.first ?? "")")
        }
        return lines
    }

    /// The journey pushes, each account's first push also assigning it an arm (and the completed
    /// ones reaching the goal), so the arm statements count too.
    static func armedJourneyPushes() -> [(account: String, batch: PushBatch)] {
        journeyPushes().enumerated().map { index, push in
            var batch = push.batch
            let arm: [String: TourValue] = [
                "fact": "assigned", "flow": "tour", "experiment": "length",
                "variant": .string(index % 2 == 0 ? "short" : "long"),
                "subject": .string("account:\(push.account)"),
            ]
            batch.items[0].facts.insert(.object(arm), at: 0)
            if index % 3 == 2, let last = batch.items.indices.last {
                var goal = arm
                goal["fact"] = "goalReached"
                batch.items[last].facts.append(.object(goal))
            }
            return (push.account, batch)
        }
    }
}
