import Testing
import TourCore

/// ``GuardedRollout``'s one transition over every state and command, random sequences of looks and
/// commands, and, by simulation, what its guardrail promises: a change that lowers completion by
/// ten points is rolled back before it passes 25%, and a neutral one reaches 100% through every
/// stage. The figures are printed for the record (Docs/Publishing.md, "Guarded rollouts").
@Suite("Guarded rollouts")
struct GuardedRolloutTests {
    static let guardrail = GuardedRollout.Guardrail(metric: .completion, flow: "tour", tolerance: 0.02)
    static let plan = GuardedRollout.Plan(
        stages: [5, 25, 50, 100], minimumSeconds: 86_400, minimumSubjects: 300, guardrail: guardrail)

    // MARK: the plan as written

    @Test func theGuardrailReadsAsWrittenAndRefusesWhatItIsNot() throws {
        let completion = try #require(GuardedRollout.Guardrail("completion:-2pp", flow: "tour"))
        #expect(completion.metric == .completion && abs(completion.tolerance - 0.02) < 1e-12)
        #expect(completion.text == "completion:-2pp")
        let step = try #require(GuardedRollout.Guardrail("step:paywall:-1.5pp", flow: "tour"))
        #expect(step.metric == .step("paywall") && abs(step.tolerance - 0.015) < 1e-12)
        #expect(step.text == "step:paywall:-1.5pp")
        #expect(GuardedRollout.Guardrail("completion:2pp", flow: "tour")?.tolerance == 0.02)
        for wrong in [
            "completion", "completion:-2", "completion:-2%", "retention:-2pp", "step::-1pp",
            "completion:-60pp",
            "completion:-nanpp", "step:a:b:-1pp", "",
        ] {
            #expect(GuardedRollout.Guardrail(wrong, flow: "tour") == nil, "\(wrong)")
        }
    }

    @Test func aPlanSaysEveryProblemWithWhatIsAllowed() {
        #expect(Self.plan.problems.isEmpty)
        var plan = Self.plan
        plan.stages = [25, 5, 100]
        #expect(plan.problems.count == 1 && plan.problems[0].contains("rising percentages from 1 to 100"))
        plan.stages = [0, 100]
        #expect(plan.problems.count == 1)
        plan.stages = [5, 101]
        #expect(plan.problems.count == 1)
        plan.stages = []
        plan.minimumSeconds = -1
        plan.minimumSubjects = -5
        #expect(plan.problems.count == 3, "\(plan.problems)")
    }

    @Test func durationsReadAndPrintAsPeopleWriteThem() {
        #expect(GuardedRollout.seconds("90") == 90)
        #expect(GuardedRollout.seconds("30m") == 1_800)
        #expect(GuardedRollout.seconds("2h") == 7_200)
        #expect(GuardedRollout.seconds("1d") == 86_400)
        #expect(
            GuardedRollout.seconds("-1h") == nil && GuardedRollout.seconds("h") == nil
                && GuardedRollout.seconds("1w") == nil)
        #expect(GuardedRollout.duration(40) == "40 s")
        #expect(GuardedRollout.duration(61) == "2 min")
        #expect(GuardedRollout.duration(3_700) == "1 h 2 min")
        #expect(GuardedRollout.duration(90_000) == "1 d 1 h")
    }

    // MARK: the transition

    static func evidence(_ candidate: (Int, Int), _ baseline: (Int, Int)) -> GuardedRollout.Evidence {
        .init(
            candidate: Proportion(successes: candidate.0, trials: candidate.1),
            baseline: Proportion(successes: baseline.0, trials: baseline.1))
    }

    @Test func aStageIsPassedOnlyWhenItsTimeAndSubjectsAreBothMet() {
        let start = GuardedRollout(plan: Self.plan, at: 1_000)
        #expect(start.percent == 5)
        let even = Self.evidence((210, 300), (2_100, 3_000))
        // Subjects met, time not.
        let early = start.decide(even, now: 1_000 + 86_399)
        #expect(early.1 == .wait("1 s more at this stage") && early.0 == start)
        // Time met, subjects not.
        let few = start.decide(Self.evidence((200, 299), (2_100, 3_000)), now: 1_000 + 86_400)
        #expect(few.1 == .wait("1 more subject starting tour on it") && few.0 == start)
        // Both met: the next stage, its clock and its count start now.
        let (raised, decision) = start.decide(even, now: 1_000 + 86_400)
        #expect(decision == .raise(to: 25))
        #expect(
            raised.stage == 1 && raised.percent == 25 && raised.stageSince == 1_000 + 86_400
                && raised.subjectsAtStageStart == 300)
        // The next stage needs its own 300 new subjects.
        let next = raised.decide(Self.evidence((400, 550), (2_800, 4_000)), now: 1_000 + 3 * 86_400)
        #expect(next.1 == .wait("50 more subjects starting tour on it"))
    }

    @Test func theLastStagePassedCompletesTheGuard() {
        let last = GuardedRollout(
            plan: Self.plan, status: .running, stage: 3, stageSince: 0, subjectsAtStageStart: 900)
        let (done, decision) = last.decide(Self.evidence((900, 1_300), (900, 1_300)), now: 86_400)
        #expect(decision == .complete && done.status == .complete && done.percent == 100)
        #expect(done.decide(Self.evidence((0, 2_000), (2_000, 2_000)), now: 10 * 86_400).1 == .none)
    }

    @Test func aDropBeyondTheToleranceRollsBackAtAnyStageBeforeItsMinimums() {
        let start = GuardedRollout(plan: Self.plan, at: 0)
        // 50% against 70% with 200 a side: the whole interval is below -2 points, at once.
        let drop = Self.evidence((100, 200), (1_400, 2_000))
        let difference = try! #require(drop.difference)
        #expect(difference.interval.upperBound < -0.02)
        let (after, decision) = start.decide(drop, now: 60)
        #expect(decision == .rollBack && after.status == .rolledBack)
        // The same counts with a tolerance wider than the drop: no rollback, a wait.
        var lenient = start
        lenient.plan.guardrail.tolerance = 0.5
        #expect(lenient.decide(drop, now: 60).1 != .rollBack)
        // A drop inside the interval's noise (few subjects) is not shown.
        #expect(start.decide(Self.evidence((5, 10), (14, 20)), now: 60).1 != .rollBack)
    }

    @Test func everyCommandInEveryStateDoesWhatItSaysOrIsRefused() {
        for status in GuardedRollout.Status.allCases {
            let value = GuardedRollout(
                plan: Self.plan, status: status, stage: 1, stageSince: 10, subjectsAtStageStart: 5)
            for command in GuardedRollout.Command.allCases {
                let result = value.applying(command, now: 500)
                switch (command, status) {
                case (.pause, .running):
                    #expect(try! result.get().status == .paused)
                case (.resume, .paused):
                    let resumed = try! result.get()
                    #expect(resumed.status == .running && resumed.stageSince == 500 && resumed.stage == 1)
                case (.end, .running), (.end, .paused):
                    #expect(try! result.get().status == .ended)
                default:
                    guard case .failure(let refusal) = result else {
                        Issue.record("\(command) on \(status) was applied")
                        continue
                    }
                    #expect(refusal.message.contains(status.rawValue), "\(refusal.message)")
                }
                // A command never moves the stage or the rollout.
                if case .success(let next) = result {
                    #expect(next.stage == value.stage && next.percent == value.percent)
                }
            }
            // Only a running guard acts on a look.
            let look = value.decide(Self.evidence((0, 5_000), (5_000, 5_000)), now: 1e9)
            #expect((look.1 == .none) == (status != .running), "\(status)")
        }
    }

    /// Random looks and commands: the stage never falls, the percentage is always a stage's, a
    /// rollback or completion is final, and only a running guard changes the rollout.
    @Test func randomSequencesKeepTheInvariants() {
        var random = SequentialTestingTests.SplitMix64(state: 65)
        for _ in 0..<2_000 {
            var value = GuardedRollout(plan: Self.plan, at: 0)
            var now = 0.0
            var candidate = (0, 0)
            var baseline = (0, 0)
            for _ in 0..<40 {
                now += Double(Int.random(in: 0...100_000, using: &random))
                let added = Int.random(in: 0...400, using: &random)
                candidate.1 += added
                candidate.0 += Int.random(in: 0...added, using: &random)
                baseline.1 += added * 3
                baseline.0 += Int.random(in: 0...(added * 3), using: &random)
                let before = value
                if Int.random(in: 0..<5, using: &random) == 0 {
                    let command = GuardedRollout.Command.allCases.anyElement(using: &random)
                    if case .success(let next) = value.applying(command, now: now) { value = next }
                } else {
                    let (next, decision) = value.decide(Self.evidence(candidate, baseline), now: now)
                    value = next
                    switch decision {
                    case .raise(let percent):
                        #expect(
                            before.status == .running && percent == value.percent
                                && value.stage == before.stage + 1)
                    case .rollBack: #expect(before.status == .running && value.status == .rolledBack)
                    case .complete: #expect(before.status == .running && value.status == .complete)
                    case .wait, .none: #expect(value == before)
                    }
                }
                #expect(value.stage >= before.stage && Self.plan.stages.contains(value.percent))
                if [.rolledBack, .complete].contains(before.status) { #expect(value == before) }
            }
        }
    }

    // MARK: what the guardrail promises, by simulation

    struct Run {
        var status: GuardedRollout.Status
        /// The highest percentage the publication reached.
        var highest: Int
        var days: Double
    }

    /// `count` guarded rollouts of a flow `perDay` new subjects start, looked at every hour for
    /// up to 30 days. Each new subject is in the rollout with the current percentage's chance and
    /// completes with its version's rate; the evidence is every subject since the start.
    static func simulate(count: Int, perDay: Int, baseline: Double, candidate: Double, seed: UInt64) -> [Run]
    {
        var random = SequentialTestingTests.SplitMix64(state: seed)
        return (0..<count).map { _ in
            var value = GuardedRollout(plan: plan, at: 0)
            var highest = value.percent
            var evidence = evidence((0, 0), (0, 0))
            for hour in 1...(30 * 24) {
                let percent = Double(value.status == .rolledBack ? 0 : value.percent) / 100
                for _ in 0..<(perDay / 24) {
                    let inRollout = Double.random(in: 0..<1, using: &random) < percent
                    let completes =
                        Double.random(in: 0..<1, using: &random) < (inRollout ? candidate : baseline)
                    if inRollout {
                        evidence.candidate.trials += 1
                        evidence.candidate.successes += completes ? 1 : 0
                    } else {
                        evidence.baseline.trials += 1
                        evidence.baseline.successes += completes ? 1 : 0
                    }
                }
                value = value.decide(evidence, now: Double(hour) * 3_600).0
                highest = max(highest, value.percent)
                if value.status != .running {
                    return Run(status: value.status, highest: highest, days: Double(hour) / 24)
                }
            }
            return Run(status: value.status, highest: highest, days: 30)
        }
    }

    @Test func aTenPointDropIsRolledBackBeforeItPassesAQuarter() {
        let runs = Self.simulate(count: 300, perDay: 4_800, baseline: 0.70, candidate: 0.60, seed: 7)
        let rolledBack = runs.filter { $0.status == .rolledBack }
        let beforeAQuarter = rolledBack.filter { $0.highest <= 25 }
        let days = rolledBack.map(\.days).sorted()
        print(
            "guarded rollout, 10-point drop, 4,800 starters a day: "
                + "rolled back in \(rolledBack.count) of \(runs.count), "
                    + """
                    \(beforeAQuarter.count) before passing 25%, \
                    median \(days.isEmpty ? 0 : days[days.count / 2]) days
                    """
        )
        #expect(Double(beforeAQuarter.count) >= 0.95 * Double(runs.count))
    }

    @Test func aNeutralChangeReachesEveryStageAndIsAlmostNeverRolledBack() {
        let runs = Self.simulate(count: 300, perDay: 4_800, baseline: 0.70, candidate: 0.70, seed: 8)
        let complete = runs.filter { $0.status == .complete }
        let rolledBack = runs.filter { $0.status == .rolledBack }
        let days = complete.map(\.days).sorted()
        print(
            "guarded rollout, no change: complete in \(complete.count) of \(runs.count) "
                + "(median \(days.isEmpty ? 0 : days[days.count / 2]) days), "
                + "rolled back in \(rolledBack.count)")
        #expect(complete.count + rolledBack.count == runs.count)
        // The always-valid test's error rate bounds a rollback of a change that drops nothing.
        #expect(Double(rolledBack.count) <= 0.05 * Double(runs.count))
        #expect(complete.allSatisfy { $0.highest == 100 && $0.days >= 4 })
    }
}
