import Testing
import TourCore

/// The experiment page's statistics proved by simulation, with the report's own code
/// (``ExperimentReport``, which the device, the server and the dashboard all build): experiments
/// looked at after every day of assignments for 30 days, as product managers read the page.
///
/// - A/A (no true difference): the always-valid verdict names a difference in at most 5% of them;
///   the fixed-horizon interval, read the same way, in many more (the reason for the change).
/// - A true difference of the planned size: how often and how soon each rule finds it, against the
///   fixed-horizon design read once at the planned sample size.
///
/// The figures are printed for the record (Docs/Publishing.md, "Experiments you may peek at").
@Suite("Sequential testing, by simulation")
struct SequentialTestingTests {
    /// A small, seeded generator: the same figures on every run and machine.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let experiment = Experiment(
        "trial", variants: [.init("control", weight: 1), .init("b", weight: 1)], control: "control")

    struct Outcome {
        /// The first day each rule declared a difference, if it did.
        var alwaysValid: Int?
        /// Whether the always-valid verdict, when it came, said the variant is worse.
        var saidWorse = false
        var fixedPeeking: Int?
        /// The fixed-horizon interval read once, on the day the planned sample size is reached.
        var fixedAtPlan: Bool
    }

    /// `count` experiments of `days` days with `perDay` new subjects a variant a day, at the rates
    /// given; every day, the report of the counts so far.
    static func simulate(
        count: Int, days: Int, perDay: Int, control: Double, variant: Double, plannedDay: Int, seed: UInt64
    ) -> [Outcome] {
        var random = SplitMix64(state: seed)
        func reached(_ subjects: Int, _ rate: Double) -> Int {
            var successes = 0
            for _ in 0..<subjects where Double.random(in: 0..<1, using: &random) < rate { successes += 1 }
            return successes
        }
        return (0..<count).map { _ in
            var totals = (control: 0, variant: 0)
            var outcome = Outcome(alwaysValid: nil, fixedPeeking: nil, fixedAtPlan: false)
            for day in 1...days {
                totals.control += reached(perDay, control)
                totals.variant += reached(perDay, variant)
                let subjects = day * perDay
                let report = ExperimentReport(
                    experiment: "trial", flow: "tour", declared: experiment,
                    counts: [
                        "control": .init(assigned: subjects, exposed: subjects, goalReached: totals.control),
                        "b": .init(assigned: subjects, exposed: subjects, goalReached: totals.variant),
                    ])
                let arm = report.arms[1]
                if outcome.alwaysValid == nil, arm.verdict == .better || arm.verdict == .worse {
                    outcome.alwaysValid = day
                    outcome.saidWorse = arm.verdict == .worse
                }
                let fixed = arm.differenceInterval.map { $0.lowerBound > 0 || $0.upperBound < 0 } ?? false
                if outcome.fixedPeeking == nil, fixed, report.hasEnoughSubjects { outcome.fixedPeeking = day }
                if day == plannedDay { outcome.fixedAtPlan = fixed }
            }
            return outcome
        }
    }

    static func share(_ outcomes: [Outcome], _ rule: (Outcome) -> Bool) -> Double {
        Double(outcomes.filter(rule).count) / Double(outcomes.count)
    }

    static func median(_ days: [Int]) -> Double {
        let sorted = days.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1
            ? Double(sorted[sorted.count / 2])
            : Double(sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// 2,000 A/A experiments at a 20% goal rate, 100 new subjects a variant a day, looked at daily
    /// for 30 days.
    @Test func peekingDailyAtAnAAExperimentDeclaresADifferenceAtMostFivePercentOfTheTime() {
        let outcomes = Self.simulate(
            count: 2_000, days: 30, perDay: 100, control: 0.2, variant: 0.2, plannedDay: 30, seed: 65)
        let alwaysValid = Self.share(outcomes) { $0.alwaysValid != nil }
        let peeking = Self.share(outcomes) { $0.fixedPeeking != nil }
        let once = Self.share(outcomes) { $0.fixedAtPlan }
        print(
            """
            sequential A/A: always-valid declared a difference in \(alwaysValid * 100)% of 2000; the \
            fixed-horizon interval read daily in \(peeking * 100)%, read once on day 30 in \(once * 100)%
            """
        )
        #expect(alwaysValid <= 0.05)
        // The reason for the change: reading the fixed-horizon interval every day is wrong far
        // more often than its 5% (and read once, as designed, it is about 5%).
        #expect(peeking > 0.15)
        #expect(abs(once - 0.05) < 0.02)
    }

    /// A true difference of 5 points (20% → 25%), the planned effect: the fixed-horizon design
    /// reads once at the planned sample size (80% power); the always-valid verdict may be read
    /// every day and stops at its first.
    @Test func aTrueDifferenceOfThePlannedSizeIsFoundAndHowSoon() throws {
        let planned = try #require(SampleSize.perVariant(baseline: 0.2, effect: 0.05))
        let perDay = 100
        let plannedDay = (planned + perDay - 1) / perDay
        let outcomes = Self.simulate(
            count: 1_000, days: 30, perDay: perDay, control: 0.2, variant: 0.25, plannedDay: plannedDay,
            seed: 66)
        let power = Self.share(outcomes) { $0.alwaysValid != nil }
        let fixedPower = Self.share(outcomes) { $0.fixedAtPlan }
        let days = outcomes.compactMap(\.alwaysValid)
        let byPlannedDay = Self.share(outcomes) { ($0.alwaysValid ?? .max) <= plannedDay }
        print(
            """
            sequential power: planned \(planned) a variant (day \(plannedDay)); fixed-horizon read once \
            then: \(fixedPower * 100)%; always-valid within 30 days: \(power * 100)%, by \
            day \(plannedDay): \(byPlannedDay * 100)%, median day of its verdict \(Self.median(days))
            """
        )
        #expect(abs(fixedPower - 0.8) < 0.05, "the fixed-horizon design has the power it was planned for")
        #expect(power > 0.8, "given the month, the always-valid test finds the difference at least as often")
        // Its verdicts name the right direction.
        #expect(outcomes.filter(\.saidWorse).count <= 1)
    }

    /// The always-valid interval contains the fixed-horizon one (it is the price of peeking), and
    /// both contain the estimate; its p-value is under 5% exactly when its interval excludes zero.
    @Test(arguments: [
        (40, 200, 30, 200), (60, 300, 45, 300), (10, 50, 10, 50), (500, 1000, 430, 1000), (0, 80, 5, 80),
    ])
    func theAlwaysValidIntervalIsTheWiderAndAgreesWithItsPValue(
        b: Int, bTrials: Int, control: Int, controlTrials: Int
    ) throws {
        let variant = Proportion(successes: b, trials: bTrials)
        let base = Proportion(successes: control, trials: controlTrials)
        let fixed = try #require(variant.difference(to: base))
        let sequential = try #require(AlwaysValid.difference(variant, to: base))
        #expect(sequential.interval.lowerBound <= fixed.interval.lowerBound)
        #expect(sequential.interval.upperBound >= fixed.interval.upperBound)
        #expect(sequential.interval.contains(fixed.estimate))
        #expect((sequential.pValue < AlwaysValid.alpha) == !sequential.interval.contains(0))
    }
}
