import AccountSync
import Foundation
import InsightsPages
import Logging
import OnboardingServer
import PostgresNIO
import TestThreads
import Testing
import TourCodec

/// Stage times are kept as a histogram: the server's bucket (`insight_time_bucket`) and
/// the pages' (`StageTimes.bucket`) are the same rule; percentiles are nearest rank.
@Suite("Stage times", .ownThread)
struct StageTimesTests {
    @Test func theServersBucketIsThePagesBucket() async throws {
        try await TestPostgres.withClient(migrated: true, maximumConnections: 1) { client, logger, _ in
            var generator = SystemRandomNumberGenerator()
            let values: [Int64] =
                [0, 1, 99, 100, 149, 150, 995, 999, 1_234, 1_250, 9_950, 99_999, 86_400_000]
                + (0..<500).map { _ in
                    Int64.random(
                        in: 0...(Int64(1) << Int64.random(in: 1...40, using: &generator)), using: &generator)
                }
            let rows = try await client.query(
                "SELECT v, insight_time_bucket(v / 1000.0) FROM unnest(\(values)::bigint[]) AS v",
                logger: logger)
            var compared = 0
            for try await (value, bucket) in rows.decode((Int64, Int64).self) {
                #expect(Int(bucket) == StageTimes.bucket(milliseconds: Int(value)), "\(value)")
                compared += 1
            }
            #expect(compared == values.count)
        }
        #expect(StageTimes.bucket(milliseconds: 1_234) == 1_200)
        #expect(StageTimes.bucket(milliseconds: 1_250) == 1_300)
        #expect(StageTimes.bucket(milliseconds: 87) == 87)
    }

    @Test func percentilesAreNearestRank() {
        let histogram = [(millis: 300, count: 1), (millis: 100, count: 2), (millis: 200, count: 1)]
        #expect(StageTimes.percentile(histogram, 0.5) == 100)
        #expect(StageTimes.percentile(histogram, 0.75) == 200)
        #expect(StageTimes.percentile(histogram, 1) == 300)
        #expect(StageTimes.percentile([], 0.5) == nil)
        #expect(StageTimes.text(milliseconds: 1_500) == "1.5 s")
        #expect(StageTimes.text(milliseconds: 90_000) == "1.5 min")
    }

    /// A start's context is checked like the rest of a push: a known member of text, short.
    @Test func aStartsContextIsCheckedByThePushRules() {
        func item(_ context: TourValue) -> PushItem {
            PushItem(
                seq: 1, time: 1_767_603_600, event: "launch", catalogVersion: 1,
                facts: [
                    .object([
                        "fact": "flowStarted", "flow": "tour", "plan": .strings(["a"]), "catalogVersion": 1,
                        "context": context,
                    ])
                ],
                records: [:])
        }
        #expect(
            SyncAPI.problem(
                with: item(
                    StartContext(locale: "pt-BR", accessibility: "VoiceOver", device: "phone").tourValue),
                device: "d") == nil)
        for bad: TourValue in [
            "phone", ["os": "ios"], ["locale": .int(3)],
            ["locale": .string(String(repeating: "x", count: 65))], ["device": ""],
        ] {
            let problem = SyncAPI.problem(with: item(bad), device: "d")
            #expect(problem?.contains("locale, accessibility and device") == true, "\(bad)")
        }
    }
}
