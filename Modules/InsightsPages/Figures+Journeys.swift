import TourCore

/// A flow's first runs as journeys: for each stage, how many reached it, that as a
/// share of those who started and of the stage before, how many skipped there (an explicit skip
/// or dismissal) and how many are still there with no further step (abandoned), and the median and
/// 75th percentile time from their start to reaching it.
public struct JourneyFigures: Equatable, Sendable {
    public struct Stage: Equatable, Sendable {
        /// `started`, `step ID` or `completed`.
        public var label: String
        /// The step's id (nil for started and completed).
        public var step: String?
        /// The step's title in the catalog's source language, from the newest catalog version that
        /// counted it (nil when no catalog the server has names it).
        public var title: String?
        public var reached: Int
        public var fromFirst: Double?
        public var fromPrevious: Double?
        public var skipped: Int
        public var abandoned: Int
        public var medianMillis: Int?
        public var p75Millis: Int?
        /// Where the subjects behind `skipped` and `abandoned` are listed (nil: the person may see
        /// counts only, or there are none).
        public var skippedHref: String?
        public var abandonedHref: String?

        public init(
            label: String, step: String? = nil, title: String? = nil, reached: Int, fromFirst: Double?,
            fromPrevious: Double?,
            skipped: Int, abandoned: Int, medianMillis: Int? = nil, p75Millis: Int? = nil
        ) {
            self.label = label
            self.step = step
            self.title = title
            self.reached = reached
            self.fromFirst = fromFirst
            self.fromPrevious = fromPrevious
            self.skipped = skipped
            self.abandoned = abandoned
            self.medianMillis = medianMillis
            self.p75Millis = p75Millis
        }
    }

    public var title: String
    public var stages: [Stage]

    public init(title: String, stages: [Stage]) {
        self.title = title
        self.stages = stages
    }

    /// Fills in each stage's conversions from `reached`: from the first stage and from the one before.
    public static func conversions(_ stages: [Stage]) -> [Stage] {
        let first = stages.first?.reached ?? 0
        return stages.enumerated().map { index, stage in
            var stage = stage
            stage.fromFirst = first > 0 ? Double(stage.reached) / Double(first) : nil
            let previous = index > 0 ? stages[index - 1].reached : stage.reached
            stage.fromPrevious = previous > 0 ? Double(stage.reached) / Double(previous) : nil
            return stage
        }
    }
}

/// One split of a flow's journeys (catalog version, app version, variant, locale, accessibility
/// setting, device kind), each value's journeys side by side on one scale: per stage, how many of
/// those who started reached it, with a 95% interval.
public struct SplitFigures: Equatable, Sendable {
    public struct Group: Equatable, Sendable {
        /// The value as shown ("App version 2.0", "pt-BR", "not reported").
        public var label: String
        public var value: String
        /// Reached, per stage (the same stages for every group); the first is the started count.
        public var reached: [Int]

        public init(label: String, value: String, reached: [Int]) {
            self.label = label
            self.value = value
            self.reached = reached
        }

        /// Stage `index` reached, of those who started.
        public func conversion(_ index: Int) -> Proportion {
            Proportion(successes: reached[index], trials: reached.first ?? 0)
        }
    }

    /// What the split is by ("app version").
    public var split: String
    public var stages: [String]
    public var groups: [Group]

    public init(split: String, stages: [String], groups: [Group]) {
        self.split = split
        self.stages = stages
        self.groups = groups
    }
}

/// The completion rate of the journeys started in each week (or day), with its 95% interval: a
/// release that changed the rate shows as a step.
public struct CohortTrendFigures: Equatable, Sendable {
    public struct Period: Equatable, Sendable {
        /// The period's first day, YYYY-MM-DD (weeks start on Monday, UTC).
        public var start: String
        public var started: Int
        public var completed: Int

        public init(start: String, started: Int, completed: Int) {
            self.start = start
            self.started = started
            self.completed = completed
        }

        public var rate: Proportion { Proportion(successes: completed, trials: started) }
    }

    public var title: String
    /// `week` or `day`.
    public var period: String
    public var periods: [Period]

    public init(title: String, period: String, periods: [Period]) {
        self.title = title
        self.period = period
        self.periods = periods
    }
}

/// Stage times as the server keeps them: a histogram of durations, each to two significant
/// figures of milliseconds.
public enum StageTimes {
    /// The bucket of a duration: whole milliseconds below 100 ms, else two significant figures,
    /// halves rounded up (1,234 → 1,200; 1,250 → 1,300). The server's `insight_time_bucket`.
    public static func bucket(milliseconds: Int) -> Int {
        let ms = max(0, milliseconds)
        guard ms >= 100 else { return ms }
        var power = 1
        while ms / power >= 100 { power *= 10 }
        return (ms + power / 2) / power * power
    }

    /// The `fraction` percentile of a histogram (nearest rank: the smallest value with at least
    /// ⌈fraction·n⌉ of the n values at or below it); nil when it is empty.
    public static func percentile(_ histogram: [(millis: Int, count: Int)], _ fraction: Double) -> Int? {
        let total = histogram.reduce(0) { $0 + max(0, $1.count) }
        guard total > 0 else { return nil }
        let rank = max(1, Int((fraction * Double(total) - 1e-9).rounded(.up)))
        var seen = 0
        for bucket in histogram.sorted(by: { $0.millis < $1.millis }) {
            seen += max(0, bucket.count)
            if seen >= rank { return bucket.millis }
        }
        return histogram.map(\.millis).max()
    }

    /// A duration as a person reads it: "850 ms", "12 s", "1.5 min", "2.3 h", "4.1 d".
    public static func text(milliseconds: Int?) -> String {
        guard let ms = milliseconds else { return "–" }
        func oneDecimal(_ value: Double) -> String {
            let tenths = Int((value * 10).rounded())
            return tenths % 10 == 0 || tenths >= 100
                ? "\(Int((value).rounded()))" : "\(tenths / 10).\(tenths % 10)"
        }
        let seconds = Double(ms) / 1000
        if ms < 1000 { return "\(ms) ms" }
        if seconds < 60 { return oneDecimal(seconds) + " s" }
        if seconds < 3600 { return oneDecimal(seconds / 60) + " min" }
        if seconds < 86_400 { return oneDecimal(seconds / 3600) + " h" }
        return oneDecimal(seconds / 86_400) + " d"
    }
}

/// An experiment's sample size and when it will have it: what each variant needs to detect the
/// team's smallest effect (``SampleSize``), what it has, and from the last 7 days' assignments the
/// day it will have enough.
public struct SampleSizeFigures: Equatable, Sendable {
    public struct Arm: Equatable, Sendable {
        public var variant: String
        public var assigned: Int
        /// First assignments in the last 7 days (to today, UTC).
        public var lastWeek: Int
        /// The day it will have `needed`, YYYY-MM-DD: nil when it has them or gets none.
        public var expected: String?

        public init(variant: String, assigned: Int, lastWeek: Int, expected: String?) {
            self.variant = variant
            self.assigned = assigned
            self.lastWeek = lastWeek
            self.expected = expected
        }
    }

    public var experiment: String
    /// The control's goal rate the estimate starts from.
    public var baseline: Double?
    /// The smallest difference to detect, as a share (0.05: five percentage points).
    public var effect: Double
    /// Subjects each variant needs; nil when it cannot be estimated (no control rate yet).
    public var needed: Int?
    public var arms: [Arm]

    public init(experiment: String, baseline: Double?, effect: Double, needed: Int?, arms: [Arm]) {
        self.experiment = experiment
        self.baseline = baseline
        self.effect = effect
        self.needed = needed
        self.arms = arms
    }
}
