import Foundation
import InsightsPages
import Logging
import PostgresNIO
import ServerDatabase
import TourCodec
import TourCore

/// A range of days (UTC, both ends included) the dashboard's numbers are limited to. A count in a
/// range is of subjects who *first* reached the stage on one of its days (the aggregates keep
/// first reaches by day), so ranges add up and nobody is counted twice within one.
public struct DayRange: Equatable, Sendable {
    public var first: String
    public var last: String

    /// Why a range was refused: one sentence saying what is allowed.
    public struct Refusal: Error, Equatable {
        public var message: String
        init(_ message: String) { self.message = message }
    }

    /// The longest range a page answers: two years of days.
    public static let maximumDays = 731

    /// `from` and `to` as a request gives them (YYYY-MM-DD, either may be missing); nil when both
    /// are. Refuses a malformed day, an end before its start, a day outside 2000–2100, or more than
    /// ``maximumDays`` days, with what is allowed.
    public init?(from: String?, to: String?, today: Date) throws(DayRange.Refusal) {
        let from = from.flatMap { $0.isEmpty ? nil : $0 }
        let to = to.flatMap { $0.isEmpty ? nil : $0 }
        guard from != nil || to != nil else { return nil }
        let end =
            try to.map { day throws(DayRange.Refusal) in try Self.day(day, "to") } ?? Self.dayNumber(today)
        let start = try from.map { day throws(DayRange.Refusal) in try Self.day(day, "from") } ?? (end - 29)
        guard start <= end else { throw Refusal("the range's start (from) must not be after its end (to)") }
        guard end - start + 1 <= Self.maximumDays else {
            throw Refusal("a date range is at most \(Self.maximumDays) days; this one has \(end - start + 1)")
        }
        first = Self.text(start)
        last = Self.text(end)
    }

    public init(first: String, last: String) {
        self.first = first
        self.last = last
    }

    /// Every day of the range, in order.
    public var days: [String] {
        guard let start = Self.parse(first), let end = Self.parse(last), start <= end else { return [] }
        return (start...end).map(Self.text)
    }

    /// The 30 days up to `latest` (a YYYY-MM-DD day), or up to `today` when there is none or it is
    /// later than today: the trend of a page without a range.
    public static func recent(upTo latest: String?, today: Date) -> DayRange {
        let end = min(latest.flatMap(parse) ?? dayNumber(today), dayNumber(today))
        return DayRange(first: text(end - 29), last: text(end))
    }

    // Days as numbers since 1970-01-01 (UTC), so ranges need no calendar.
    static let earliest = CivilDate.daysSince1970(year: 2000, month: 1, day: 1)
    static let latest = CivilDate.daysSince1970(year: 2100, month: 12, day: 31)

    static func day(_ text: String, _ name: String) throws(DayRange.Refusal) -> Int {
        guard let day = parse(text), (earliest...latest).contains(day) else {
            throw Refusal("\(name) takes a day written YYYY-MM-DD between 2000-01-01 and 2100-12-31")
        }
        return day
    }

    public static func dayNumber(_ date: Date) -> Int {
        Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    static func parse(_ text: String) -> Int? { CivilDate.daysSince1970(text) }

    public static func text(_ number: Int) -> String { CivilDate.text(daysSince1970: number) }
}

/// What the dashboard shows, read from the aggregates (`InsightsSchema`): small sums over counters,
/// never a scan of the facts.
public struct Insights: Sendable {
    let reads: ReadOnlyDatabase
    let logger: Logger

    public init(reads: ReadOnlyDatabase, logger: Logger) {
        self.reads = reads
        self.logger = logger
    }

    /// Reads through `client`, each read a `READ ONLY` transaction (tools, tests).
    public init(client: PostgresClient, logger: Logger) {
        self.init(reads: ReadOnlyDatabase(sharing: client, logger: logger), logger: logger)
    }

    /// One flow's headline numbers.
    public struct FlowSummary: Equatable, Sendable {
        public var flow: String
        public var started: Int
        public var completed: Int
        public var skipped: Int
    }

    /// An app at a glance.
    public struct AppSummary: Equatable, Sendable {
        public var app: String
        /// Every account and device the app has seen (all time).
        public var accounts: Int
        public var devices: Int
        public var flows: [FlowSummary]
        public var trend: TrendFigures
    }

    /// Every app the server has counts or catalogs for, by name.
    public func apps() async throws -> [String] {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let rows = try await connection.query(
                "SELECT app FROM insight_totals UNION SELECT app FROM catalogs ORDER BY 1", logger: logger)
            var apps: [String] = []
            for try await app in rows.decode(String.self) { apps.append(app) }
            return apps
        }
    }

    /// The days a page's trend covers: the range when one is given, else the 30 days up to the last
    /// day any of `apps` has a start or completion counted (today when none has, or when that day is
    /// later than today), so a page without a range shows the newest activity, not 30 empty days.
    /// `excluding` names flows as `app/flow` that do not count (the overview's archived flows).
    public func trendRange(apps: [String], range: DayRange?, today: Date, excluding: Set<String> = [])
        async throws -> DayRange
    {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            if let range { return range }
            let excluded = excluding.sorted()
            let rows = try await connection.query(
                """
                SELECT to_char(max(day), 'YYYY-MM-DD') FROM insight_counts
                WHERE app = ANY(\(apps)) AND milestone IN ('started', 'completed')
                    AND NOT (app || '/' || flow = ANY(\(excluded)))
                """, logger: logger)
            var latest: String?
            for try await day in rows.decode(String?.self) { latest = day }
            return .recent(upTo: latest, today: today)
        }
    }

    /// Whether any account of `app` has reached `flow` (any milestone, any day).
    public func hasFlow(app: String, flow: String) async throws -> Bool {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let rows = try await connection.query(
                "SELECT EXISTS (SELECT 1 FROM insight_counts WHERE app = \(app) AND flow = \(flow))",
                logger: logger)
            var found = false
            for try await exists in rows.decode(Bool.self) { found = exists }
            return found
        }
    }

    /// The app's totals, each flow's starts and completions in `range` (all time without one), and
    /// the daily trend over `trendRange` (``trendRange(apps:range:today:excluding:)``). Flows named in
    /// `excluding` (the overview's archived flows) are left out of the flows and the trend.
    public func summary(
        app: String, range: DayRange?, trendRange: DayRange, excluding: Set<String> = []
    ) async throws -> AppSummary {
        let (first, last) = (range?.first, range?.last)
        let excluded = excluding.sorted()
        return try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            var accounts = 0
            var devices = 0
            let totals = try await connection.query(
                "SELECT kind, sum(subjects)::bigint FROM insight_totals WHERE app = \(app) GROUP BY kind",
                logger: logger)
            for try await (kind, count) in totals.decode((String, Int64).self) {
                if kind == "account" { accounts = Int(count) } else { devices = Int(count) }
            }
            var flows: [String: FlowSummary] = [:]
            let milestones = try await connection.query(
                """
                SELECT flow, milestone, sum(subjects)::bigint FROM insight_counts
                WHERE app = \(app) AND milestone IN ('started', 'completed', 'skipped')
                    AND (\(first)::date IS NULL OR day >= \(first)::date) AND (\(last)::date IS NULL
                        OR day <= \(last)::date)
                    AND NOT (flow = ANY(\(excluded)))
                GROUP BY flow, milestone
                """, logger: logger)
            for try await (flow, milestone, count) in milestones.decode((String, String, Int64).self) {
                var summary = flows[flow] ?? FlowSummary(flow: flow, started: 0, completed: 0, skipped: 0)
                switch milestone {
                case "started": summary.started = Int(count)
                case "completed": summary.completed = Int(count)
                default: summary.skipped = Int(count)
                }
                flows[flow] = summary
            }
            var byDay: [String: (Int, Int)] = [:]
            let days = try await connection.query(
                """
                SELECT to_char(day, 'YYYY-MM-DD'), milestone, sum(subjects)::bigint FROM insight_counts
                WHERE app = \(app) AND milestone IN ('started', 'completed')
                    AND day >= \(trendRange.first)::date AND day <= \(trendRange.last)::date
                    AND NOT (flow = ANY(\(excluded)))
                GROUP BY day, milestone
                """, logger: logger)
            for try await (day, milestone, count) in days.decode((String, String, Int64).self) {
                var entry = byDay[day] ?? (0, 0)
                if milestone == "started" { entry.0 = Int(count) } else { entry.1 = Int(count) }
                byDay[day] = entry
            }
            let trend = TrendFigures(
                title: "Flows started and completed per day",
                days: trendRange.days.map { day in
                    TrendFigures.Day(day: day, started: byDay[day]?.0 ?? 0, completed: byDay[day]?.1 ?? 0)
                })
            return AppSummary(
                app: app, accounts: accounts, devices: devices,
                flows: flows.values.sorted { $0.flow < $1.flow },
                trend: trend)
        }
    }

    /// One flow's funnel in `range` (all time without one): all accounts, then split by the catalog
    /// version and by the app version each stage was first reached under.
    public struct FlowFunnels: Equatable, Sendable {
        public var app: String
        public var flow: String
        public var all: FunnelFigures
        public var byCatalogVersion: [FunnelFigures]
        public var byAppVersion: [FunnelFigures]
    }

    public func funnels(app: String, flow: String, range: DayRange?) async throws -> FlowFunnels {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let (first, last) = (range?.first, range?.last)
            struct Tally {
                var started = 0
                var completed = 0
                var steps: [String: (index: Int64, reached: Int)] = [:]

                mutating func add(_ milestone: String, _ step: String, _ index: Int64, _ count: Int) {
                    switch milestone {
                    case "started": started += count
                    case "completed": completed += count
                    case "step":
                        let known = steps[step]
                        steps[step] = (min(known?.index ?? index, index), (known?.reached ?? 0) + count)
                    default: break
                    }
                }

                func figures(_ title: String) -> FunnelFigures {
                    let ordered = steps.sorted { ($0.value.index, $0.key) < ($1.value.index, $1.key) }
                    return FunnelFigures(
                        title: title, started: started, steps: ordered.map { ($0.key, $0.value.reached) },
                        completed: completed)
                }
            }
            var all = Tally()
            var byCatalog: [Int64: Tally] = [:]
            var byApp: [String: Tally] = [:]
            let rows = try await connection.query(
                """
                SELECT milestone, step, catalog_version, app_version, min(step_index), sum(subjects)::bigint
                    FROM insight_counts
                WHERE app = \(app) AND flow = \(flow) AND milestone IN ('started', 'step', 'completed')
                    AND (\(first)::date IS NULL OR day >= \(first)::date) AND (\(last)::date IS NULL
                        OR day <= \(last)::date)
                GROUP BY milestone, step, catalog_version, app_version
                """, logger: logger)
            for try await (milestone, step, catalog, appVersion, index, count) in rows.decode(
                (String, String, Int64, String, Int64, Int64).self)
            {
                all.add(milestone, step, index, Int(count))
                byCatalog[catalog, default: Tally()].add(milestone, step, index, Int(count))
                byApp[appVersion, default: Tally()].add(milestone, step, index, Int(count))
            }
            return FlowFunnels(
                app: app, flow: flow, all: all.figures("All accounts"),
                byCatalogVersion: byCatalog.sorted { $0.key < $1.key }.map { version, tally in
                    tally.figures("Catalog version \(version)")
                },
                byAppVersion: byApp.sorted { Self.versionOrder($0.key, $1.key) }.map { version, tally in
                    tally.figures(version.isEmpty ? "App version not reported" : "App version \(version)")
                })
        }
    }

    /// Versions in numeric order ("1.10" after "1.9"), the unreported one last.
    static func versionOrder(_ a: String, _ b: String) -> Bool {
        if a.isEmpty || b.isEmpty { return !a.isEmpty && b.isEmpty }
        let x = a.split(separator: ".").map { Int($0) ?? 0 }
        let y = b.split(separator: ".").map { Int($0) ?? 0 }
        return x.lexicographicallyPrecedes(y)
    }
}
