import AccountSync
import Foundation
import Logging
import OnboardingServer
import PostgresNIO
import ServerInsights
import ServerSyncAPI
import Testing
import TourCodec

/// v19: `pushes` and `facts` partitioned by HASH (account), migrated in place.
extension SchemaTests {
    /// A database counted before v19 keeps every row, key and figure across the migration; a
    /// retried push still lands on its duplicate; new pushes are counted; retention still drops
    /// old facts in batches.
    @Test func pushesAndFactsArePartitionedInPlaceWithEveryRowAndFigureKept() async throws {
        try await Self.withJourneyDatabase { client, logger in
            _ = try await PostgresSchema.migrate(client, logger: logger, through: "v18-catalog-drafts")
            try await SchemaTests.installPushFence(client, logger: logger)
            let store = AccountStore.patient(client: client, logger: logger)
            let pushes = Self.journeyPushes()
            for (account, batch) in pushes {
                _ = try await store.push(app: "growth", account: account, batch)
            }
            for (account, device, item) in Self.rerunPushes() {
                _ = try await store.push(
                    app: "growth", account: account, PushBatch(device: device, items: [item]))
            }
            try await store.catchUpInsights(waitingUpTo: .seconds(30))
            let figures = [
                "SELECT count(*)::text FROM pushes", "SELECT count(*)::text FROM facts",
                """
                SELECT string_agg(account || ':' || n, ',' ORDER BY account) FROM (SELECT account, \
                count(*) AS n FROM facts GROUP BY account) a
                """,
                """
                SELECT md5(string_agg(app || account || device || seq || event || xact::text, ',' ORDER \
                BY app, account, device, seq)) FROM pushes
                """,
                """
                SELECT md5(string_agg(app || account || device || seq || idx || body::text, ',' ORDER BY \
                app, account, device, seq, idx)) FROM facts
                """,
            ]
            var before: [[String]] = []
            for query in figures { before.append(try await Self.rows(client, logger, query)) }
            let stagesBefore = try await Self.stages(client, logger)
            let report = try await store.report(app: "growth")

            let applied = try await PostgresSchema.migrate(
                client, logger: logger, through: "v19-partitioned-facts")
            #expect(applied == ["v19-partitioned-facts"])
            #expect(
                try await Self.rows(
                    client, logger,
                    """
                    SELECT relname FROM pg_class WHERE relname IN ('pushes', 'facts') AND relkind = 'p' \
                    ORDER BY relname
                    """
                )
                    == ["facts", "pushes"])
            #expect(
                try await Self.rows(
                    client, logger,
                    "SELECT count(*)::text FROM pg_inherits WHERE inhparent = 'pushes'::regclass") == ["8"])
            var after: [[String]] = []
            for query in figures { after.append(try await Self.rows(client, logger, query)) }
            #expect(after == before)
            #expect(try await Self.stages(client, logger) == stagesBefore)
            #expect(try await store.report(app: "growth") == report)

            // A push retried after the migration is a duplicate; a new one is stored and counted.
            let (account, batch) = pushes[0]
            let retried = try await store.push(app: "growth", account: account, batch)
            #expect(retried?.applied == 0 && retried?.duplicates == batch.items.count)
            let late = Self.journeyPushes()[3]
            _ = try await store.push(app: "growth", account: "late", late.batch)
            try await store.catchUpInsights(waitingUpTo: .seconds(30))
            #expect(
                try await Self.stages(client, logger).first
                    == "started \((Int(stagesBefore.first?.split(separator: " ")[1] ?? "0") ?? 0) + 1) 0 0")

            // Retention (as this release runs it, on the schema it migrates to) drops every counted
            // push's facts (0 days), pushes kept.
            _ = try await PostgresSchema.migrate(client, logger: logger)
            let dropped = try await FactRetention(client: client, logger: logger).run(days: 0)
            #expect(dropped == Int(after[1].first ?? "0")! + late.batch.items.count)
            #expect(try await Self.rows(client, logger, "SELECT count(*)::text FROM facts") == ["0"])
            #expect(
                try await Self.rows(client, logger, "SELECT count(*)::text FROM pushes") == [
                    "\(Int(after[0].first ?? "0")! + late.batch.items.count)"
                ])
        }
    }

    /// v28: each partition of `facts` references its own partition of `pushes`. Every row is kept,
    /// and the rows the key refused before are refused still: a fact with no push, a push whose
    /// facts are still stored deleted, in every partition.
    @Test func eachPartitionOfFactsReferencesItsOwnPartitionOfPushesAndRefusesWhatTheKeyRefused() async throws
    {
        try await Self.withJourneyDatabase { client, logger in
            _ = try await PostgresSchema.migrate(client, logger: logger, through: "v27-count-by-push")
            let store = AccountStore.patient(client: client, logger: logger)
            let pushes = Self.journeyPushes()
            for (account, batch) in pushes {
                _ = try await store.push(app: "growth", account: account, batch)
            }
            let figures = [
                "SELECT count(*)::text FROM pushes", "SELECT count(*)::text FROM facts",
                """
                SELECT md5(string_agg(app || account || device || seq || idx || body::text, ',' ORDER BY \
                app, account, device, seq, idx)) FROM facts
                """,
                // Every account's partition: the refusals below must reach more than one.
                "SELECT count(DISTINCT tableoid)::text FROM facts",
            ]
            var before: [[String]] = []
            for query in figures { before.append(try await Self.rows(client, logger, query)) }
            #expect(Int(before[3].first ?? "0")! > 1)

            let applied = try await PostgresSchema.migrate(
                client, logger: logger, through: "v28-facts-reference-their-partition")
            #expect(applied == ["v28-facts-reference-their-partition"])
            var after: [[String]] = []
            for query in figures { after.append(try await Self.rows(client, logger, query)) }
            #expect(after == before)
            let keys = try await Self.rows(
                client, logger,
                """
                SELECT conrelid::regclass::text || '>' || confrelid::regclass::text FROM pg_constraint
                WHERE contype = 'f' AND conrelid::regclass::text LIKE 'facts%' ORDER BY 1
                """)
            #expect(keys == (0..<8).map { "facts_p\($0)>pushes_p\($0)" })

            // In every partition: a fact with no push is refused, and so is deleting a push with facts.
            for index in 0..<pushes.count {
                let account = pushes[index].account
                let orphan = try await Self.sqlState(
                    client, logger,
                    """
                    INSERT INTO facts (app, account, device, seq, idx, kind, flow, body)
                    VALUES ('growth', '\(account)', 'no-such-device', 1, 0, 'flowStarted', 'tour', '{}')
                    """)
                #expect(orphan == "23503", "a fact without its push, account \(account)")
                let deleted = try await Self.sqlState(
                    client, logger, "DELETE FROM pushes WHERE app = 'growth' AND account = '\(account)'")
                #expect(deleted == "23503", "a push with facts deleted, account \(account)")
            }
            var untouched: [[String]] = []
            for query in figures { untouched.append(try await Self.rows(client, logger, query)) }
            #expect(untouched == before)

            // A retried push is still its duplicate; a new one is stored.
            let (account, batch) = pushes[0]
            let retried = try await store.push(app: "growth", account: account, batch)
            #expect(retried?.applied == 0 && retried?.duplicates == batch.items.count)
            let late = try await store.push(app: "growth", account: "late", pushes[3].batch)
            #expect(late?.applied == pushes[3].batch.items.count)
        }
    }

    /// The SQLSTATE PostgreSQL refused `sql` with, or nil when it ran.
    static func sqlState(_ client: PostgresClient, _ logger: Logger, _ sql: String) async throws -> String? {
        do {
            _ = try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
            return nil
        } catch let error as PSQLError {
            return error.serverInfo?[.sqlState]
        }
    }
}
