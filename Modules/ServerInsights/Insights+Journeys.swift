import Foundation
import InsightsPages
import Logging
import PostgresNIO
import ServerDatabase
import TourCore

/// The journey reads (`InsightsSchema.v16`): a flow's first runs by the day they
/// started, each a few grouped sums over `insight_cohorts` or `insight_stage_times`, or one bounded
/// lookup through an index (the drill-down and a subject's timeline).
extension Insights {
    /// What a flow's journeys can be split by.
    public enum Split: String, CaseIterable, Sendable {
        case catalog, app, variant, locale, accessibility, device

        /// As a sentence names it ("by app version").
        public var title: String {
            switch self {
            case .catalog: "catalog version"
            case .app: "app version"
            case .variant: "experiment variant"
            case .locale: "locale"
            case .accessibility: "accessibility settings"
            case .device: "device kind"
            }
        }

        /// A value as a table names it.
        public func label(_ value: String) -> String {
            guard !value.isEmpty else { return self == .variant ? "in no experiment" : "not reported" }
            return switch self {
            case .catalog: "catalog \(value)"
            case .app: "app \(value)"
            default: value
            }
        }

        /// Values in the order a person reads them: versions numerically, the rest by name, the
        /// unreported last.
        func ordered(_ values: [String]) -> [String] {
            switch self {
            case .catalog: values.sorted { (Int($0) ?? Int.max) < (Int($1) ?? Int.max) }
            case .app: values.sorted { Insights.versionOrder($0, $1) }
            default: values.sorted { $0.isEmpty != $1.isEmpty ? !$0.isEmpty : $0 < $1 }
            }
        }
    }

    /// A stage of a flow's journeys, before titles and conversions.
    public struct JourneyStage: Equatable, Sendable {
        /// `started`, `step` or `completed`.
        public var measure: String
        public var step: String
        public var index: Int64
        public var reached: Int
        public var skipped: Int
        public var waiting: Int
        public var times: [(millis: Int, count: Int)]

        public var label: String { measure == "step" ? "step \(step)" : measure }

        public static func == (a: Self, b: Self) -> Bool {
            a.measure == b.measure && a.step == b.step && a.index == b.index && a.reached == b.reached
                && a.skipped == b.skipped && a.waiting == b.waiting
                && a.times.elementsEqual(b.times, by: { $0 == $1 })
        }
    }

    /// The condition on a journey's start day for `range` (none: all time).
    private static func rangeBinds(_ range: DayRange?) -> (String?, String?) { (range?.first, range?.last) }

    /// A flow's journeys started in `range` (all time without one): started, each step, completed;
    /// skipped and waiting at each; the stage times.
    public func journeyStages(app: String, flow: String, range: DayRange?) async throws -> [JourneyStage] {
        let (first, last) = Self.rangeBinds(range)
        return try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            var started = JourneyStage(
                measure: "started", step: "", index: 0, reached: 0, skipped: 0, waiting: 0, times: [])
            var completed = JourneyStage(
                measure: "completed", step: "", index: Int64.max, reached: 0, skipped: 0, waiting: 0,
                times: [])
            var steps: [String: JourneyStage] = [:]
            /// The stage a row is about: completed, the start (no step), or its step.
            func update(_ measure: String, _ step: String, _ body: (inout JourneyStage) -> Void) {
                if measure == "completed" {
                    body(&completed)
                } else if step.isEmpty {
                    body(&started)
                } else {
                    var stage =
                        steps[step]
                        ?? JourneyStage(
                            measure: "step", step: step, index: Int64.max, reached: 0, skipped: 0, waiting: 0,
                            times: [])
                    body(&stage)
                    steps[step] = stage
                }
            }
            let counts = try await connection.query(
                """
                SELECT measure, step, min(step_index), sum(subjects)::bigint FROM insight_cohorts
                WHERE app = \(app) AND flow = \(flow) AND split = 'all' AND value = ''
                    AND (\(first)::date IS NULL OR start_day >= \(first)::date) AND (\(last)::date IS NULL
                        OR start_day <= \(last)::date)
                GROUP BY measure, step
                """, logger: logger)
            for try await (measure, step, index, count) in counts.decode((String, String, Int64, Int64).self)
            {
                let count = Int(count)
                // `waiting` and `skipped` rows name the stage by its step ('' for the start).
                switch measure {
                case "started", "completed": update(measure, step) { $0.reached += count }
                case "step":
                    update(measure, step) {
                        $0.reached += count
                        $0.index = min($0.index, index)
                    }
                case "skipped": update("step", step) { $0.skipped += count }
                case "waiting": update("step", step) { $0.waiting += count }
                default: break
                }
            }
            let times = try await connection.query(
                """
                SELECT milestone, step, millis, sum(subjects)::bigint FROM insight_stage_times
                WHERE app = \(app) AND flow = \(flow)
                    AND (\(first)::date IS NULL OR start_day >= \(first)::date) AND (\(last)::date IS NULL
                        OR start_day <= \(last)::date)
                GROUP BY milestone, step, millis
                """, logger: logger)
            for try await (milestone, step, millis, count) in times.decode(
                (String, String, Int64, Int64).self)
            {
                update(milestone, step) { $0.times.append((Int(millis), Int(count))) }
            }
            let ordered = steps.values.sorted { ($0.index, $0.step) < ($1.index, $1.step) }
            return [started] + ordered + [completed]
        }
    }

    /// Per value of `split`, how many of the journeys started in `range` reached each stage, by
    /// stage label (`started`, `step ID`, `completed`); values in reading order.
    public func splitStages(app: String, flow: String, split: Split, range: DayRange?) async throws -> [(
        value: String, reached: [String: Int]
    )] {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let (first, last) = Self.rangeBinds(range)
            let rows = try await connection.query(
                """
                SELECT value, measure, step, sum(subjects)::bigint FROM insight_cohorts
                WHERE app = \(app) AND flow = \(flow) AND split = \(split.rawValue)
                    AND measure IN ('started', 'step', 'completed')
                    AND (\(first)::date IS NULL OR start_day >= \(first)::date) AND (\(last)::date IS NULL
                        OR start_day <= \(last)::date)
                GROUP BY value, measure, step
                """, logger: logger)
            var byValue: [String: [String: Int]] = [:]
            for try await (value, measure, step, count) in rows.decode((String, String, String, Int64).self) {
                byValue[value, default: [:]][measure == "step" ? "step \(step)" : measure, default: 0] += Int(
                    count)
            }
            return split.ordered(Array(byValue.keys)).map { ($0, byValue[$0] ?? [:]) }
        }
    }

    /// For each week (Monday, UTC) or day of start in `range`, journeys started and completed, every
    /// period from the first with a start to the last included.
    public func cohortTrend(app: String, flow: String, range: DayRange?, weekly: Bool) async throws
        -> [CohortTrendFigures.Period]
    {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let (first, last) = Self.rangeBinds(range)
            let unit = weekly ? "week" : "day"
            let rows = try await connection.query(
                """
                SELECT to_char(date_trunc(\(unit), start_day)::date, 'YYYY-MM-DD'), measure,
                    sum(subjects)::bigint FROM insight_cohorts
                WHERE app = \(app) AND flow = \(flow) AND split = 'all' AND value = ''
                    AND measure IN ('started', 'completed')
                    AND (\(first)::date IS NULL OR start_day >= \(first)::date) AND (\(last)::date IS NULL
                        OR start_day <= \(last)::date)
                GROUP BY 1, 2
                """, logger: logger)
            var periods: [String: (Int, Int)] = [:]
            for try await (start, measure, count) in rows.decode((String, String, Int64).self) {
                var entry = periods[start] ?? (0, 0)
                if measure == "started" { entry.0 += Int(count) } else { entry.1 += Int(count) }
                periods[start] = entry
            }
            guard let earliest = periods.keys.compactMap(DayRange.parse).min(),
                let latest = periods.keys.compactMap(DayRange.parse).max()
            else { return [] }
            let stride = weekly ? 7 : 1
            return Swift.stride(from: earliest, through: latest, by: stride).map { number in
                let day = DayRange.text(number)
                return CohortTrendFigures.Period(
                    start: day, started: periods[day]?.0 ?? 0, completed: periods[day]?.1 ?? 0)
            }
        }
    }

    /// Where a journey stands at a stage: still there with no further step, or skipped there.
    public enum Standing: String, Sendable, CaseIterable {
        case abandoned, skipped
    }

    /// The subjects whose journeys started in `range` and stand `standing` at `step` ('' for the
    /// start), after `after` in their order, at most `limit`: one indexed range read.
    /// Each with when its journey started and when any device of it last pushed a row of the app
    /// (by the devices' clocks), so an abandoned journey is told from one in progress.
    public func journeySubjects(
        app: String, flow: String, step: String, standing: Standing, range: DayRange?, after: String,
        limit: Int
    ) async throws -> [JourneySubject] {
        let (first, last) = Self.rangeBinds(range)
        let query: PostgresQuery =
            switch standing {
            case .abandoned:
                """
                SELECT subject, started_at, (SELECT max(p.time) FROM pushes p WHERE p.app = j.app
                    AND p.account = j.subject)
                FROM insight_journeys j
                WHERE app = \(app) AND flow = \(flow) AND furthest_step = \(step) AND NOT completed
                    AND skipped_step IS NULL
                    AND subject > \(after)
                    AND (\(first)::date IS NULL OR start_day >= \(first)::date) AND (\(last)::date IS NULL
                        OR start_day <= \(last)::date)
                ORDER BY subject LIMIT \(limit)
                """
            case .skipped:
                """
                SELECT subject, started_at, (SELECT max(p.time) FROM pushes p WHERE p.app = j.app
                    AND p.account = j.subject)
                FROM insight_journeys j
                WHERE app = \(app) AND flow = \(flow) AND skipped_step = \(step) AND subject > \(after)
                    AND (\(first)::date IS NULL OR start_day >= \(first)::date) AND (\(last)::date IS NULL
                        OR start_day <= \(last)::date)
                ORDER BY subject LIMIT \(limit)
                """
            }
        return try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            var subjects: [JourneySubject] = []
            for try await (subject, started, lastActivity) in try await connection.query(
                query, logger: logger
            ).decode(
                (String, Double, Double?).self)
            {
                subjects.append(
                    JourneySubject(
                        subject: subject, startedAt: started, lastActivityAt: lastActivity ?? started))
            }
            return subjects
        }
    }

    /// A subject of the drill-down.
    public struct JourneySubject: Equatable, Sendable {
        public var subject: String
        /// When its first run of the flow started.
        public var startedAt: Double
        /// When a device of it last pushed a row of the app.
        public var lastActivityAt: Double
    }

    /// One fact of a subject's timeline, as its device pushed it.
    public struct TimelineEntry: Equatable, Sendable {
        public var time: Double
        public var device: String
        public var seq: Int64
        public var catalogVersion: Int64
        public var appVersion: String
        public var fact: String
        public var flow: String
        public var step: String
        public var detail: String
    }

    /// A subject's facts across its devices and catalog versions, oldest first, at most `limit`
    /// (one range read of the facts' key).
    public func timeline(app: String, subject: String, limit: Int) async throws -> [TimelineEntry] {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let rows = try await connection.query(
                """
                SELECT p.time, p.device, p.seq, p.catalog_version, coalesce(p.app_version, ''), f.kind,
                    f.flow, coalesce(f.step, ''),
                    coalesce(f.ending, f.body->>'variant', f.body->>'outcome', '')
                FROM facts f JOIN pushes p ON p.app = f.app AND p.account = f.account
                    AND p.device = f.device AND p.seq = f.seq
                WHERE f.app = \(app) AND f.account = \(subject)
                ORDER BY p.time, p.device, p.seq, f.idx LIMIT \(limit)
                """, logger: logger)
            var entries: [TimelineEntry] = []
            for try await (time, device, seq, catalog, version, fact, flow, step, detail) in rows.decode(
                (Double, String, Int64, Int64, String, String, String, String, String).self)
            {
                entries.append(
                    TimelineEntry(
                        time: time, device: device, seq: seq, catalogVersion: catalog, appVersion: version,
                        fact: fact, flow: flow,
                        step: step, detail: detail))
            }
            return entries
        }
    }

    /// A subject's journeys in `app`: flow, start day, standing and furthest step.
    public func journeys(app: String, subject: String) async throws -> [(
        flow: String, started: String, standing: String, furthest: String
    )] {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let rows = try await connection.query(
                """
                SELECT flow, to_char(start_day, 'YYYY-MM-DD'),
                    CASE WHEN completed THEN 'completed' WHEN skipped_step IS NOT NULL THEN 'skipped'
                        ELSE 'waiting' END, furthest_step
                FROM insight_journeys WHERE app = \(app) AND subject = \(subject) ORDER BY flow
                """, logger: logger)
            var journeys: [(String, String, String, String)] = []
            for try await row in rows.decode((String, String, String, String).self) { journeys.append(row) }
            return journeys
        }
    }

    /// First assignments to each variant of `experiment` from `first` to `last` (days, both included).
    public func assignments(app: String, experiment: String, first: String, last: String) async throws
        -> [String: Int]
    {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let rows = try await connection.query(
                """
                SELECT variant, sum(subjects)::bigint FROM insight_arm_days
                WHERE app = \(app) AND experiment = \(experiment) AND day >= \(first)::date
                    AND day <= \(last)::date
                GROUP BY variant
                """, logger: logger)
            var counts: [String: Int] = [:]
            for try await (variant, count) in rows.decode((String, Int64).self) {
                counts[variant] = Int(count)
            }
            return counts
        }
    }

    /// The catalog versions whose journeys reached each step (for the steps' titles).
    public func catalogVersionsByStep(app: String, flow: String) async throws -> [String: [Int]] {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let rows = try await connection.query(
                """
                SELECT DISTINCT step, value FROM insight_cohorts
                WHERE app = \(app) AND flow = \(flow) AND split = 'catalog' AND measure = 'step'
                """, logger: logger)
            var versions: [String: [Int]] = [:]
            for try await (step, value) in rows.decode((String, String).self) {
                if let version = Int(value) { versions[step, default: []].append(version) }
            }
            return versions
        }
    }
}
