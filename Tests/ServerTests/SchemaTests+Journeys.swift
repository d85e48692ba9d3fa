import AccountSync
import Foundation
import Logging
import OnboardingServer
import PostgresNIO
import ServerInsights
import ServerSyncAPI
import Testing
import TourCodec

extension SchemaTests {
    /// The pushes of twelve accounts: each starts `tour`, enters some of its three steps, and
    /// completes it, skips it or stops, over two catalog versions and two app versions.
    static func journeyPushes() -> [(account: String, batch: PushBatch)] {
        (0..<12).map { index in
            let reach = 1 + index % 3
            var facts: [[TourValue]] = [
                [
                    .object([
                        "fact": "flowStarted", "flow": "tour", "plan": .strings(["a", "b", "c"]),
                        "catalogVersion": .int(1 + index % 2),
                    ])
                ]
            ]
            for step in 0..<reach {
                facts.append([
                    .object([
                        "fact": "stepEntered", "flow": "tour", "step": .string(["a", "b", "c"][step]),
                        "index": .int(step + 1),
                    ])
                ])
            }
            if reach == 3 {
                facts.append([
                    .object([
                        "fact": "flowEnded", "flow": "tour", "ending": "completed", "recorded": "completed",
                    ])
                ])
            } else if index % 4 == 1 {
                facts.append([
                    .object(["fact": "flowEnded", "flow": "tour", "ending": "skipped", "recorded": "skipped"])
                ])
            }
            let items = facts.enumerated().map { seq, facts in
                PushItem(
                    seq: Int64(seq + 1), time: 1_767_603_600 + Double(index * 86_400 + seq * 7),
                    event: "next",
                    catalogVersion: 1 + index % 2, facts: facts, records: [:],
                    appVersion: index < 6 ? "1.0" : "2.0")
            }
            return ("a\(index)", PushBatch(device: "d\(index)", items: items))
        }
    }

    /// (Reach 1, 2 or 3 steps by index mod 3; every fourth from the second skips: at a, index 9; at
    /// b, index 1; 4 complete, 6 stop.)
    /// A database counted before v16 carries its journeys over: every stage's reached, skipped and
    /// abandoned, and every split, equal to what a database that counted the same pushes under v16
    /// shows (times of reaches counted before it are unknown, so it shows none).
    @Test func journeysAreCarriedOverFromWhatWasCountedBeforeV16() async throws {
        var logger = Logger(label: "schema")
        logger.logLevel = .error
        func withDatabase(_ body: (PostgresClient) async throws -> Void) async throws {
            let url = try DatabaseURL(try TestPostgres.freshDatabase())
            let client = PostgresClient(
                configuration: url.clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                try await body(client)
            }
        }
        func push(_ client: PostgresClient) async throws {
            let store = AccountStore.patient(client: client, logger: logger)
            for (account, batch) in Self.journeyPushes() {
                _ = try await store.push(app: "growth", account: account, batch)
            }
            try await store.catchUpInsights(waitingUpTo: .seconds(30))
        }
        typealias Figures = (stages: [String], splits: [String])
        func figures(_ client: PostgresClient) async throws -> Figures {
            let insights = Insights(client: client, logger: logger)
            let stages = try await insights.journeyStages(app: "growth", flow: "tour", range: nil)
            var splits: [String] = []
            for split in Insights.Split.allCases {
                for row in try await insights.splitStages(
                    app: "growth", flow: "tour", split: split, range: nil)
                {
                    splits.append("\(split.rawValue)=\(row.value): \(row.reached.sorted { $0.key < $1.key })")
                }
            }
            return (stages.map { "\($0.label) \($0.reached) \($0.skipped) \($0.waiting)" }, splits)
        }
        var fresh: Figures = ([], [])
        var freshTimes = 0
        try await withDatabase { client in
            _ = try await PostgresSchema.migrate(client, logger: logger)
            try await push(client)
            fresh = try await figures(client)
            freshTimes = try await Insights(client: client, logger: logger).journeyStages(
                app: "growth", flow: "tour", range: nil
            )
            .map(\.times.count).reduce(0, +)
        }
        #expect(
            fresh.stages == [
                "started 12 0 0", "step a 12 1 3", "step b 8 1 3", "step c 4 0 0", "completed 4 0 0",
            ])
        #expect(freshTimes > 0)
        try await withDatabase { client in
            _ = try await PostgresSchema.migrate(client, logger: logger, through: "v15-archived-flows")
            try await SchemaTests.installPushFence(client, logger: logger)
            try await push(client)
            let applied = try await PostgresSchema.migrate(client, logger: logger, through: "v16-journeys")
            #expect(applied == ["v16-journeys"])
            let carried = try await figures(client)
            #expect(carried.stages == fresh.stages)
            #expect(carried.splits == fresh.splits)
            // Counting goes on from there: one more account's journey is counted by the new job.
            let store = AccountStore.patient(client: client, logger: logger)
            let extra = Self.journeyPushes()[2]
            _ = try await store.push(app: "growth", account: "late", extra.batch)
            try await store.catchUpInsights(waitingUpTo: .seconds(30))
            let after = try await Insights(client: client, logger: logger).journeyStages(
                app: "growth", flow: "tour", range: nil)
            #expect(after.first?.reached == 13)
            #expect(after.last?.reached == 5)
        }
    }
}
