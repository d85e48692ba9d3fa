import AccountSync
import Foundation
import Logging
import OnboardingServer
import PostgresNIO
import ServerControlPlane
import ServerInsights
import ServerSyncAPI
import Testing
import TourCodec

/// v17: a journey is the subject's first run and nothing after it, however its pushes arrive.
extension SchemaTests {
    static let day0 = 1_767_603_600.0

    /// One fact as a device pushes it, at `seconds` after `day0`.
    static func item(_ seq: Int, _ seconds: Double, _ fact: TourValue) -> PushItem {
        PushItem(
            seq: Int64(seq), time: day0 + seconds, event: "next", catalogVersion: 1, facts: [fact],
            records: [:],
            appVersion: "1.0")
    }

    static func started(replay: Bool = false) -> TourValue {
        var fact: [String: TourValue] = [
            "fact": "flowStarted", "flow": "tour", "plan": .strings(["a", "b", "c"]),
        ]
        if replay { fact["replay"] = .bool(true) }
        return .object(fact)
    }

    static func entered(_ step: String, _ index: Int) -> TourValue {
        .object(["fact": "stepEntered", "flow": "tour", "step": .string(step), "index": .int(index)])
    }

    static func ended(_ ending: String) -> TourValue {
        .object(["fact": "flowEnded", "flow": "tour", "ending": .string(ending), "recorded": .string(ending)])
    }

    /// Three subjects: `s` skips at a, starts again and finishes; `r` finishes and replays; `w`
    /// waits at b. Each item is its own push, in its device's order.
    static func rerunPushes() -> [(account: String, device: String, item: PushItem)] {
        let s = [
            item(1, 0, started()), item(2, 10, entered("a", 1)), item(3, 20, ended("skipped")),
            item(4, 100, started()), item(5, 110, entered("a", 1)), item(6, 120, entered("b", 2)),
            item(7, 130, entered("c", 3)), item(8, 140, ended("completed")),
        ].map { ("s", "ds", $0) }
        let r = [
            item(1, 0, started()), item(2, 10, entered("a", 1)), item(3, 20, entered("b", 2)),
            item(4, 30, entered("c", 3)), item(5, 40, ended("completed")),
            item(6, 100, started(replay: true)), item(7, 110, entered("a", 1)),
            item(8, 120, ended("dismissed")),
        ].map { ("r", "dr", $0) }
        let w = [item(1, 0, started()), item(2, 10, entered("a", 1)), item(3, 20, entered("b", 2))].map {
            ("w", "dw", $0)
        }
        return s + r + w
    }

    static func withJourneyDatabase(_ body: (PostgresClient, Logger) async throws -> Void) async throws {
        try await TestPostgres.withClient(migrated: false) { client, logger, _ in
            try await body(client, logger)
        }
    }

    static func stages(_ client: PostgresClient, _ logger: Logger) async throws -> [String] {
        try await Insights(client: client, logger: logger).journeyStages(
            app: "growth", flow: "tour", range: nil
        )
        .map { "\($0.label) \($0.reached) \($0.skipped) \($0.waiting)" }
    }

    static func rows(_ client: PostgresClient, _ logger: Logger, _ sql: String) async throws -> [String] {
        var rows: [String] = []
        for try await row in try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(
            String.self)
        {
            rows.append(row)
        }
        return rows
    }

    /// Skip, start again, finish: the journey is skipped at a and not completed, whether the pushes
    /// are counted one catch-up each or all in one (v16 counted it both skipped and completed, or
    /// only completed); a replay starts no journey; each split and stage time agrees; the first
    /// reaches by day (v4) still count every run.
    @Test(arguments: [false, true]) func aJourneyIsItsFirstRunHoweverItsPushesAreCounted(oneAtATime: Bool)
        async throws
    {
        try await Self.withJourneyDatabase { client, logger in
            _ = try await PostgresSchema.migrate(client, logger: logger)
            let store = AccountStore.patient(client: client, logger: logger)
            for (account, device, item) in Self.rerunPushes() {
                _ = try await store.push(
                    app: "growth", account: account, PushBatch(device: device, items: [item]))
                if oneAtATime { try await store.catchUpInsights(waitingUpTo: .seconds(30)) }
            }
            try await store.catchUpInsights(waitingUpTo: .seconds(30))
            #expect(
                try await Self.stages(client, logger)
                    == ["started 3 0 0", "step a 3 1 0", "step b 2 0 1", "step c 1 0 0", "completed 1 0 0"])
            #expect(
                try await Self.rows(
                    client, logger,
                    """
                    SELECT subject || ' ' || completed || ' ' || coalesce(skipped_step, '-') || ' ' || \
                    furthest_step FROM insight_journeys ORDER BY subject
                    """
                )
                    == ["r true - c", "s false a a", "w false - b"])
            // Every split counts the same three journeys (one value each here).
            for split in Insights.Split.allCases {
                let rows = try await Insights(client: client, logger: logger).splitStages(
                    app: "growth", flow: "tour", split: split, range: nil)
                #expect(rows.count == 1, "split \(split.rawValue)")
                #expect(rows.first.map { $0.reached.values.max() } == 3, "split \(split.rawValue)")
            }
            // Stage times: b only for w and r (s reached b in its second run), completed only for r.
            #expect(
                try await Self.rows(
                    client, logger,
                    """
                    SELECT milestone || ' ' || step || ' ' || sum(subjects) FROM insight_stage_times \
                    GROUP BY milestone, step ORDER BY 1
                    """
                )
                    == ["completed  1", "step a 3", "step b 2", "step c 1"])
            // The first reaches by day count every run, as before: s completed too.
            #expect(
                try await Self.rows(
                    client, logger,
                    "SELECT sum(subjects)::text FROM insight_counts WHERE milestone = 'completed'") == ["2"])
        }
    }

    /// A reach counted after the skip (another device's, earlier than the skip) moves the skip to
    /// the further step, as it moves a waiting journey.
    @Test func aLateReachMovesTheSkipWithIt() async throws {
        try await Self.withJourneyDatabase { client, logger in
            _ = try await PostgresSchema.migrate(client, logger: logger)
            let store = AccountStore.patient(client: client, logger: logger)
            func push(_ device: String, _ items: [PushItem]) async throws {
                _ = try await store.push(app: "growth", account: "m", PushBatch(device: device, items: items))
                try await store.catchUpInsights(waitingUpTo: .seconds(30))
            }
            try await push(
                "phone", [Self.item(1, 0, Self.started()), Self.item(2, 10, Self.entered("a", 1))])
            try await push("tablet", [Self.item(1, 30, Self.ended("dismissed"))])
            #expect(
                try await Self.rows(
                    client, logger, "SELECT skipped_step FROM insight_journeys WHERE subject = 'm'") == ["a"])
            try await push("phone", [Self.item(3, 20, Self.entered("b", 2))])
            let stages = try await Self.stages(client, logger)
            #expect(stages.contains("step a 1 0 0"))
            #expect(stages.contains("step b 1 1 0"))
            #expect(
                try await Self.rows(
                    client, logger, "SELECT skipped_step FROM insight_journeys WHERE subject = 'm'") == ["b"])
            #expect(
                try await Self.rows(
                    client, logger,
                    """
                    SELECT step || ' ' || sum(subjects) FROM insight_cohorts WHERE split = 'all' AND \
                    measure = 'skipped' GROUP BY step HAVING sum(subjects) <> 0
                    """
                )
                    == ["b 1"])
        }
    }

    /// A database v16 counted keeps, for a journey left both completed and skipped, the ending that
    /// came first (the skip, from the stored facts), and its counters and stage times agree.
    @Test func v17CarriesOverTheFirstEndingOfAJourneyV16CountedTwice() async throws {
        try await Self.withJourneyDatabase { client, logger in
            _ = try await PostgresSchema.migrate(client, logger: logger, through: "v16-journeys")
            try await SchemaTests.installPushFence(client, logger: logger)
            let store = AccountStore.patient(client: client, logger: logger)
            for (account, device, item) in Self.rerunPushes() {
                _ = try await store.push(
                    app: "growth", account: account, PushBatch(device: device, items: [item]))
                try await store.catchUpInsights(waitingUpTo: .seconds(30))
            }
            let journey =
                """
                SELECT completed || ' ' || coalesce(skipped_step, '-') FROM insight_journeys WHERE \
                subject = 's'
                """
            // v16's count: both (the bug this migration mends).
            #expect(try await Self.rows(client, logger, journey) == ["true a"])
            let applied = try await PostgresSchema.migrate(
                client, logger: logger, through: "v17-journey-ends")
            #expect(applied == ["v17-journey-ends"])
            #expect(try await Self.rows(client, logger, journey) == ["false a"])
            let cohort = """
                SELECT measure || ' ' || sum(subjects) FROM insight_cohorts WHERE split = 'all' AND measure \
                IN ('completed', 'skipped')
                GROUP BY measure ORDER BY measure
                """
            #expect(try await Self.rows(client, logger, cohort) == ["completed 1", "skipped 1"])
            #expect(
                try await Self.rows(
                    client, logger,
                    "SELECT sum(subjects)::text FROM insight_stage_times WHERE milestone = 'completed'") == [
                        "1"
                    ])
            #expect(
                try await Self.rows(
                    client, logger,
                    "SELECT count(*)::text FROM insight_firsts WHERE milestone = 'completed' AND cohort") == [
                        "1"
                    ])
            // Every journey has its end from the stored facts (w's has none yet).
            #expect(
                try await Self.rows(
                    client, logger,
                    "SELECT subject || ' ' || (ended_at IS NOT NULL) FROM insight_journeys ORDER BY subject")
                    == ["r true", "s true", "w false"])
        }
    }

    /// An experiment subject's first assignment is taken off the day it was counted on: device B's
    /// later-dated assignment counted first, device A's earlier one after it, and another subject
    /// assigned on A's day; erasing the account leaves the other subject's day whole (v16 took it
    /// off A's day and left B's).
    @Test func erasureTakesAFirstAssignmentOffTheDayItWasCountedOn() async throws {
        try await Self.withJourneyDatabase { client, logger in
            _ = try await PostgresSchema.migrate(client, logger: logger)
            let store = AccountStore.patient(client: client, logger: logger)
            func assigned(_ subject: String) -> TourValue {
                .object([
                    "fact": "assigned", "flow": "tour", "experiment": "copy", "variant": "short",
                    "subject": .string(subject),
                ])
            }
            func push(_ account: String, _ device: String, day: Double) async throws {
                _ = try await store.push(
                    app: "growth", account: account,
                    PushBatch(device: device, items: [Self.item(1, day * 86_400, assigned(account))]))
                try await store.catchUpInsights(waitingUpTo: .seconds(30))
            }
            try await push("y", "tablet", day: 2)
            try await push("y", "phone", day: 0)
            try await push("z", "z-phone", day: 0)
            let days =
                "SELECT day::text || ' ' || subjects FROM insight_arm_days WHERE app = 'growth' ORDER BY day"
            #expect(try await Self.rows(client, logger, days) == ["2026-01-05 1", "2026-01-07 1"])
            _ = try await TestPostgres.untilCommitted {
                try await store.erase(
                    app: "growth", subject: "y", pseudonym: "hmac:test",
                    by: Actor(name: "test", source: "test", person: nil),
                    at: Self.day0 + 864_000)
            }
            #expect(try await Self.rows(client, logger, days) == ["2026-01-05 1", "2026-01-07 0"])
            #expect(
                try await Self.rows(client, logger, "SELECT subject FROM insight_arm_first_days") == ["z"])
        }
    }
}
