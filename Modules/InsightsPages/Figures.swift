import TourCore

/// The numbers an insights page shows, the same whether the account server's dashboard or a
/// device's `report --html` draws them: every chart is drawn from one of these, and the table beside
/// it, the CSV and the JSON export are made of the same values.

/// One funnel: how many reached each stage of a flow (started, each step, completed), how many of
/// those did not reach the next stage, and that as a share.
public struct FunnelFigures: Equatable, Sendable {
    public struct Stage: Equatable, Sendable {
        public var label: String
        public var reached: Int
        /// Reached this stage but not the next (0 for the last stage).
        public var dropped: Int
        /// `dropped / reached`, nil when nothing reached the stage.
        public var dropOff: Double?
    }

    /// What the funnel is of ("All accounts", "Catalog version 3", "Variant short").
    public var title: String
    public var stages: [Stage]

    /// Stages in order: `started`, then each step, then `completed`. A stage's drop is what did
    /// not reach the next one, never negative (a step reached without a start, as a migrated run
    /// can, counts as reached and drops nothing).
    public init(title: String, started: Int, steps: [(step: String, reached: Int)], completed: Int) {
        self.title = title
        let counts =
            [("started", started)] + steps.map { ("step \($0.step)", $0.reached) } + [
                ("completed", completed)
            ]
        stages = counts.enumerated().map { index, stage in
            let next = index + 1 < counts.count ? counts[index + 1].1 : stage.1
            let dropped = max(0, stage.1 - next)
            return Stage(
                label: stage.0, reached: stage.1, dropped: dropped,
                dropOff: stage.1 > 0 ? Double(dropped) / Double(stage.1) : nil)
        }
    }

    public init(title: String, stages: [Stage]) {
        self.title = title
        self.stages = stages
    }
}

/// Per day, how many first started and first completed a flow (or any flow of an app).
public struct TrendFigures: Equatable, Sendable {
    public struct Day: Equatable, Sendable {
        /// YYYY-MM-DD (UTC).
        public var day: String
        public var started: Int
        public var completed: Int

        public init(day: String, started: Int, completed: Int) {
            self.day = day
            self.started = started
            self.completed = completed
        }
    }

    public var title: String
    public var days: [Day]

    public init(title: String, days: [Day]) {
        self.title = title
        self.days = days
    }
}

/// An experiment's variants: subjects, goal rate with its 95% interval, the difference to control.
public struct ArmFigures: Equatable, Sendable {
    public struct Arm: Equatable, Sendable {
        public var variant: String
        public var control: Bool
        public var assigned: Int
        public var exposed: Int
        public var goalReached: Int
        public var rate: Double?
        public var interval: ClosedRange<Double>?
        public var difference: Double?
        public var differenceInterval: ClosedRange<Double>?
        public var verdict: String?
        /// The always-valid interval of the difference and its p-value (the verdict's).
        public var alwaysValidInterval: ClosedRange<Double>?
        public var alwaysValidPValue: Double?

        public init(
            variant: String, control: Bool, assigned: Int, exposed: Int, goalReached: Int, rate: Double?,
            interval: ClosedRange<Double>?, difference: Double?, differenceInterval: ClosedRange<Double>?,
            verdict: String?,
            alwaysValidInterval: ClosedRange<Double>? = nil, alwaysValidPValue: Double? = nil
        ) {
            self.alwaysValidInterval = alwaysValidInterval
            self.alwaysValidPValue = alwaysValidPValue
            self.variant = variant
            self.control = control
            self.assigned = assigned
            self.exposed = exposed
            self.goalReached = goalReached
            self.rate = rate
            self.interval = interval
            self.difference = difference
            self.differenceInterval = differenceInterval
            self.verdict = verdict
        }
    }

    public var experiment: String
    public var goal: String
    public var conclusion: String
    public var arms: [Arm]

    public init(experiment: String, goal: String, conclusion: String, arms: [Arm]) {
        self.experiment = experiment
        self.goal = goal
        self.conclusion = conclusion
        self.arms = arms
    }
}

extension ArmFigures {
    /// An experiment report's variants as the pages draw them.
    public init(_ report: ExperimentReport) {
        self.init(
            experiment: report.experiment, goal: report.goal ?? "unknown (no catalog declares it)",
            conclusion: report.conclusion,
            arms: report.arms.map { arm in
                Arm(
                    variant: arm.variant, control: arm.variant == report.control,
                    assigned: arm.counts.assigned,
                    exposed: arm.counts.exposed, goalReached: arm.counts.goalReached, rate: arm.rate,
                    interval: arm.interval, difference: arm.difference,
                    differenceInterval: arm.differenceInterval,
                    verdict: arm.verdict?.rawValue, alwaysValidInterval: arm.alwaysValidInterval,
                    alwaysValidPValue: arm.alwaysValidPValue)
            })
    }
}
