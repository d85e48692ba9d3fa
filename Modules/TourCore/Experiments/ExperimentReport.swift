import TourCodec

/// One experiment's results: per variant, the subjects assigned, exposed, reaching each step and
/// reaching the goal; the goal rate with its 95% Wilson interval; the difference to the control
/// with two intervals, each for what it promises: Newcombe's fixed-horizon interval (valid when
/// read once, at the sample size planned before the experiment) and the always-valid interval
/// with its p-value (``AlwaysValid``: valid at every look). The verdict uses the always-valid one,
/// so a team that reads the page every day is wrong no more often than 5% of the time. The device
/// (`APP report --by variant`) and the server (`GET /v1/apps/{app}/report?by=variant`) count
/// differently and build the same report.
///
/// Below ``Experiment/minimumSubjects`` assigned subjects in any variant the report says so and
/// names no winner: intervals that wide decide nothing.
public struct ExperimentReport: Equatable, Sendable {
    /// Distinct subjects per variant, as counted from facts.
    public struct Counts: Equatable, Sendable {
        public var assigned: Int
        public var exposed: Int
        public var goalReached: Int
        /// Subjects that entered each step, in the flow's order.
        public var steps: [(step: String, reached: Int)]

        public init(
            assigned: Int = 0, exposed: Int = 0, goalReached: Int = 0,
            steps: [(step: String, reached: Int)] = []
        ) {
            self.assigned = assigned
            self.exposed = exposed
            self.goalReached = goalReached
            self.steps = steps
        }

        public static func == (a: Counts, b: Counts) -> Bool {
            a.assigned == b.assigned && a.exposed == b.exposed && a.goalReached == b.goalReached
                && a.steps.map(\.step) == b.steps.map(\.step)
                && a.steps.map(\.reached) == b.steps.map(\.reached)
        }
    }

    public enum Verdict: String, Sendable, Equatable {
        /// The control itself.
        case control
        /// The difference's always-valid interval lies above zero.
        case better
        /// It lies below zero.
        case worse
        /// It contains zero.
        case unclear
    }

    public struct Arm: Equatable, Sendable {
        public var variant: String
        public var holdout: Bool
        public var counts: Counts
        public var rate: Double?
        public var interval: ClosedRange<Double>?
        /// This variant's rate minus the control's, and its fixed-horizon interval (Newcombe's;
        /// nil for the control).
        public var difference: Double?
        public var differenceInterval: ClosedRange<Double>?
        /// Nil while there are too few subjects, or without a known control.
        public var verdict: Verdict?
        /// The difference's always-valid interval and p-value (``AlwaysValid``), which the verdict uses.
        public var alwaysValidInterval: ClosedRange<Double>? = nil
        public var alwaysValidPValue: Double? = nil
    }

    public var experiment: String
    public var flow: String
    /// Nil when the experiment is in no catalog the reporter knows (its control is unknown).
    public var control: String?
    public var goal: String?
    public var minimumSubjects: Int
    public var arms: [Arm]
    /// The assignment counts against the declared weights (nil without a declared experiment or
    /// subjects). A mismatch withholds every verdict (``SampleRatio``).
    public var sampleRatio: SampleRatio?

    /// - Parameters:
    ///   - declared: the experiment as its catalog declares it (order of variants, control, goal);
    ///     nil when no known catalog has it.
    ///   - counts: per variant name; variants counted but not declared follow the declared ones.
    public init(
        experiment id: String, flow: String, declared: Experiment?, counts: [String: Counts],
        minimumSubjects: Int = Experiment.minimumSubjects
    ) {
        experiment = id
        self.flow = flow
        self.minimumSubjects = minimumSubjects
        control = declared?.control
        goal = declared?.goal.summary
        let names =
            (declared?.variants.map(\.name) ?? [])
            + counts.keys.sorted().filter { name in
                !(declared?.variants.contains { $0.name == name } ?? false)
            }
        let controlProportion = declared.flatMap { counts[$0.control] }.map {
            Proportion(successes: $0.goalReached, trials: $0.assigned)
        }
        let ratio = declared.flatMap { SampleRatio(experiment: $0, assigned: counts.mapValues(\.assigned)) }
        sampleRatio = ratio
        // A mismatch in the assignment makes every comparison suspect: no verdict until explained.
        let enough =
            names.allSatisfy { (counts[$0]?.assigned ?? 0) >= minimumSubjects } && ratio?.isMismatch != true
        arms = names.map { name in
            let tally = counts[name] ?? Counts()
            let proportion = Proportion(successes: tally.goalReached, trials: tally.assigned)
            var arm = Arm(
                variant: name, holdout: declared?.variant(name)?.isHoldout ?? false, counts: tally,
                rate: proportion.rate, interval: proportion.wilson())
            if name == declared?.control {
                arm.verdict = enough ? .control : nil
            } else if let controlProportion, let difference = proportion.difference(to: controlProportion),
                let sequential = AlwaysValid.difference(proportion, to: controlProportion)
            {
                arm.difference = difference.estimate
                arm.differenceInterval = difference.interval
                arm.alwaysValidInterval = sequential.interval
                arm.alwaysValidPValue = sequential.pValue
                if enough {
                    arm.verdict =
                        sequential.interval.lowerBound > 0
                        ? .better : sequential.interval.upperBound < 0 ? .worse : .unclear
                }
            }
            return arm
        }
    }

    /// Every variant has the minimum sample (and the control is known).
    public var hasEnoughSubjects: Bool {
        control != nil && arms.allSatisfy { $0.counts.assigned >= minimumSubjects }
    }

    /// The assignment counts do not match the weights (p < 0.001): no verdict is given.
    public var hasSampleRatioMismatch: Bool { sampleRatio?.isMismatch == true }

    /// The variant clearly better than the control with the highest rate; nil when none is, or
    /// while there are too few subjects.
    public var winner: String? {
        guard hasEnoughSubjects, !hasSampleRatioMismatch else { return nil }
        return arms.filter { $0.verdict == .better }.max { ($0.rate ?? 0) < ($1.rate ?? 0) }?.variant
    }

    /// One sentence on what the report lets a team conclude.
    public var conclusion: String {
        guard let control else {
            return
                """
                no catalog known here declares experiment \(experiment), so there is no control to compare \
                with
                """
        }
        if let ratio = sampleRatio, ratio.isMismatch {
            let observed = arms.map { "\($0.variant) \($0.counts.assigned)" }.joined(separator: ", ")
            let expected = arms.compactMap { arm in
                ratio.expected[arm.variant].map { "\(arm.variant) \(Int($0.rounded()))" }
            }
            .joined(separator: ", ")
            return
                """
                the assignment does not match the weights (assigned \(observed); expected \(expected); \
                chi-square p \(Self.pText(ratio.pValue)), flagged under 0.001): something assigns or counts \
                subjects wrongly, so no verdict is given until it is explained
                """
        }
        guard hasEnoughSubjects else {
            let smallest = arms.map(\.counts.assigned).min() ?? 0
            return
                """
                not enough subjects yet: each variant needs \(minimumSubjects) assigned (the smallest has \
                \(smallest)); no winner is named
                """
        }
        if let winner {
            return "\(winner) beats \(control) (its always-valid interval of the difference is above zero)"
        }
        if arms.contains(where: { $0.verdict == .worse }), !arms.contains(where: { $0.verdict == .unclear }) {
            return "\(control) beats every other variant"
        }
        return "no variant is clearly better than \(control)"
    }

    /// A p-value as people read it: "= 0.0003", or "< 0.0001".
    public static func pText(_ p: Double) -> String {
        if p < 0.0001 { return "< 0.0001" }
        let scaled = Int((p * 10_000).rounded())
        let fraction = String(scaled % 10_000)
        return "= \(scaled / 10_000).\(String(repeating: "0", count: 4 - fraction.count))\(fraction)"
    }
}

extension ExperimentReport: TourValueEncodable {
    public var tourValue: TourValue {
        func interval(_ range: ClosedRange<Double>?) -> TourValue? {
            range.map { .list([.double($0.lowerBound), .double($0.upperBound)]) }
        }
        return .members([
            "experiment": .string(experiment), "flow": .string(flow),
            "control": control.map(TourValue.string),
            "goal": goal.map(TourValue.string), "minimumSubjects": .int(minimumSubjects),
            "enoughSubjects": .bool(hasEnoughSubjects), "winner": winner.map(TourValue.string),
            "conclusion": .string(conclusion),
            "sampleRatio": sampleRatio.map { ratio in
                .members([
                    "chiSquare": ratio.chiSquare.isFinite ? .double(ratio.chiSquare) : nil,
                    "degreesOfFreedom": .int(ratio.degreesOfFreedom), "pValue": .double(ratio.pValue),
                    "mismatch": .bool(ratio.isMismatch),
                    "expected": .object(ratio.expected.mapValues { .double($0) }),
                ])
            },
            "variants": .list(
                arms.map { arm in
                    .members([
                        "variant": .string(arm.variant), "holdout": arm.holdout ? .bool(true) : nil,
                        "assigned": .int(arm.counts.assigned), "exposed": .int(arm.counts.exposed),
                        "goalReached": .int(arm.counts.goalReached),
                        "steps": .list(
                            arm.counts.steps.map {
                                .object(["step": .string($0.step), "reached": .int($0.reached)])
                            }),
                        "goalRate": arm.rate.map(TourValue.double),
                        "goalRateInterval": interval(arm.interval),
                        "differenceToControl": arm.difference.map(TourValue.double),
                        "differenceInterval": interval(arm.differenceInterval),
                        "alwaysValidInterval": interval(arm.alwaysValidInterval),
                        "alwaysValidPValue": arm.alwaysValidPValue.map(TourValue.double),
                        "verdict": arm.verdict.map { .string($0.rawValue) },
                    ])
                }),
        ])
    }
}
