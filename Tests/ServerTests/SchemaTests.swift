import AccountSync
import Foundation
import Logging
import OnboardingServer
import PostgresNIO
import ServerSyncAPI
import TestThreads
import Testing
import TourCodec
import TourCore

/// What the migrations leave behind, as a release upgrading a stored database meets it.
@Suite("Schema", .ownThread)
struct SchemaTests {
    /// The pushes of today's code on an earlier release's schema: they call `push_fence` (v21, v22),
    /// which these tests add beside the earlier schema (each replaces it when it is applied).
    static func installPushFence(_ client: PostgresClient, logger: Logger) async throws {
        for id in ["v21-subject-fence", "v22-pseudonymous-cutoffs"] {
            let fence = try #require(PostgresSchema.history.migrations.first { $0.id == id })
            for statement in fence.statements {
                try await client.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }

    /// Facts are read only by their key (the insights job joins them to the pushes it counts). The
    /// index on (app, flow, kind) that v1 made cost every push an entry per fact, and with stale
    /// statistics the planner used it for that join, reading all of an app's facts per push
    /// counted; v8 drops it. A database stored by the release before upgrades with its facts and
    /// reports intact.
    @Test func factsAreIndexedByTheirKeyOnlyFromV8AndAnUpgradedDatabaseReportsTheSame() async throws {
        try await TestPostgres.withClient(migrated: false) { client, logger, _ in
            func factIndexes() async throws -> [String] {
                var names: [String] = []
                let rows = try await client.query(
                    """
                    SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'facts' \
                    ORDER BY 1
                    """,
                    logger: logger)
                for try await name in rows.decode(String.self) { names.append(name) }
                return names
            }
            // The previous release's schema, with pushes stored.
            _ = try await PostgresSchema.migrate(client, logger: logger, through: "v7-display-budget")
            try await SchemaTests.installPushFence(client, logger: logger)
            #expect(try await factIndexes() == ["facts_by_app_flow_kind", "facts_pkey"])
            let store = AccountStore.patient(client: client, logger: logger)
            for account in 0..<4 {
                for seq in 1...3 {
                    let device = "d\(account)"
                    let standing: AccountFlowRecord.Standing =
                        seq == 3 && account.isMultiple(of: 2) ? .completed : .shown
                    _ = try await store.push(
                        app: "growth", account: "a\(account)",
                        PushBatch(
                            device: device,
                            items: [
                                PushBatchingTests.item(
                                    Int64(seq), flow: "tour", standing: standing, device: device)
                            ]))
                }
            }
            // Before v10 the watermark is the whole cluster's oldest transaction: other tests hold
            // some for up to 12 s (DashboardTests+HeldTransactions), so this waits up to 30.
            try await store.catchUpInsights(waitingUpTo: .seconds(30))
            let before = try await store.report(app: "growth")

            let applied = try await PostgresSchema.migrate(
                client, logger: logger, through: "v8-facts-by-key-only")
            #expect(applied == ["v8-facts-by-key-only"])
            #expect(try await factIndexes() == ["facts_pkey"])
            try await store.catchUpInsights(waitingUpTo: .seconds(30))
            let after = try await store.report(app: "growth")
            #expect(after == before)
            #expect(after == (try await store.reportByScan(app: "growth")))
            #expect(after.accounts == 4)
            #expect(after.flows.first?.steps.map(\.accounts) == [4, 4, 4])
        }
    }
}
