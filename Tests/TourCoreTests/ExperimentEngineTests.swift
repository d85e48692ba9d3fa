import Crypto
import Foundation
import Testing
import TourCodec
import TourFixtures

/// A flow's experiment in the pure engine: who is assigned what, what each variant shows, and the
/// facts a report counts, over 2,000 simulated subjects with a holdout.
@Suite("Experiments in the engine")
struct ExperimentEngineTests {
    /// The simulated subjects, once for the suite (each test fails on its own if the simulation did).
    static let simulated = Result { try ExperimentFixture.simulate(2_000) }
    static let experiment = ExperimentFixture.experiment

    /// The variant as the documentation defines it, computed here with another SHA-256: the bucket
    /// of SHA-256("experiment/ID", NUL, subject) laid over the weights in order.
    static func expectedVariant(_ subject: String) -> String {
        let digest = Array(SHA256.hash(data: Data(("experiment/\(experiment.id)" + "\u{0}" + subject).utf8)))
        let bucket = Int(digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 10_000)
        let total = experiment.variants.map(\.weight).reduce(0, +)
        var upper = 0
        for variant in experiment.variants {
            upper += variant.weight * 10_000 / total
            if bucket < upper { return variant.name }
        }
        return experiment.variants.last?.name ?? "no variant"
    }

    @Test func assignmentFollowsTheWeightsWithinSamplingErrorAndTheDocumentedHash() throws {
        let subjects = try Self.simulated.get()
        let n = Double(subjects.count)
        for variant in Self.experiment.variants {
            let share = Double(variant.weight) / 100
            let count = Double(subjects.filter { $0.variant == variant.name }.count)
            // Four standard deviations of a binomial count: fails by chance about once in 16,000 runs
            // of a new seed (the seed is fixed, so this run is deterministic).
            let bound = 4 * (n * share * (1 - share)).squareRoot()
            #expect(
                abs(count - n * share) <= bound,
                "\(variant.name): \(count) of \(n), expected \(n * share) ± \(bound)")
        }
        for subject in subjects {
            #expect(
                subject.variant == Self.expectedVariant("account:\(subject.account)"), "\(subject.account)")
        }
    }

    @Test func eachSubjectIsAssignedOnceAndEachVariantShowsWhatItSays() throws {
        for subject in try Self.simulated.get() {
            let facts = subject.rows.flatMap { $0 }
            let assigned = facts.filter { if case .assigned = $0 { true } else { false } }
            #expect(assigned.count == 1, "\(subject.account) assigned \(assigned.count) times")
            #expect(assigned.first?.arm?.subject == "account:\(subject.account)")
            let exposed = facts.filter { if case .exposed = $0 { true } else { false } }
            let entered = facts.compactMap { fact -> String? in
                if case .stepEntered(_, let step, _) = fact { return step.rawValue }
                return nil
            }
            let skipped = facts.contains {
                if case .flowEnded(_, .skipped, _, _) = $0 { true } else { false }
            }
            switch subject.variant {
            case "holdout":
                #expect(exposed.isEmpty && entered.isEmpty, "\(subject.account): a holdout saw \(entered)")
                #expect(
                    facts.contains {
                        $0
                            == .flowEnded(
                                flow: ExperimentFixture.flow, ending: .heldOut, recorded: .skipped,
                                version: "1.0")
                    })
                #expect(!facts.contains { if case .flowStarted = $0 { true } else { false } })
            case "short":
                #expect(exposed.count == 1)
                #expect(
                    entered == (skipped ? ["welcome"] : ["welcome", "done"]), "\(subject.account): \(entered)"
                )
            default:
                #expect(exposed.count == 1)
                #expect(
                    entered == (skipped ? ["welcome"] : ["welcome", "features", "tips", "done"]),
                    "\(subject.account): \(entered)")
            }
            // The goal once, however often the effect is performed.
            let goals = facts.filter { if case .goalReached = $0 { true } else { false } }
            #expect(goals.count == (subject.activated ? 1 : 0), "\(subject.account): \(goals.count) goals")
            #expect(goals.first?.arm?.variant == (subject.activated ? subject.variant : nil))
        }
    }

    @Test func everyDeviceOfAnAccountIsInTheSameVariantAndAReplayIsNotPartOfIt() throws {
        let engine = TourEngine(catalog: ExperimentFixture.catalog())
        for account in ["ann", "bo", "cy", "di", "ed", "flo"] {
            var variants: Set<String> = []
            for device in ["phone", "tablet", "laptop"] {
                let subjects = ExperimentSubjects(
                    install: "install:\(account)-\(device)", account: "account:\(account)")
                let state = try engine.reduce(
                    TourState(), .appLaunched(version: "1.0"), at: Fixtures.t0, subjects: subjects
                ).state
                variants.insert(try #require(state.experiments[Self.experiment.id]).variant)
            }
            #expect(variants.count == 1, "\(account) is in \(variants) on its devices")
        }
        // Without an account (a user who does not sync) the install is the subject.
        let alone = try engine.reduce(
            TourState(), .appLaunched(version: "1.0"), at: Fixtures.t0,
            subjects: ExperimentSubjects(install: "install:x"))
        #expect(alone.state.experiments[Self.experiment.id]?.subject == "install:x")
        // Without any subject the control runs and nothing is assigned.
        let none = try engine.reduce(TourState(), .appLaunched(version: "1.0"), at: Fixtures.t0)
        #expect(none.state.experiments.isEmpty)
        #expect(none.state[flow: ExperimentFixture.flow].plan.count == 4)
        #expect(!none.record.facts.contains { $0.arm != nil })
        // A replay of a short-tour subject shows the whole tour and journals no exposure again;
        // a relaunch assigns nothing again.
        let short = try #require(
            try Self.simulated.get().first {
                $0.variant == "short"
                    && !$0.rows.joined().contains { fact in
                        if case .flowEnded(_, .skipped, _, _) = fact { true } else { false }
                    }
            })
        let subjects = ExperimentSubjects(install: "install:other", account: "account:\(short.account)")
        var state = TourState()
        for event: TourEvent in [
            .appLaunched(version: "1.0"), .actionPerformed("next", parameters: [:]),
            .actionPerformed("next", parameters: [:]),
        ] {
            state = try engine.reduce(state, event, at: Fixtures.t0, subjects: subjects).state
        }
        #expect(state[flow: ExperimentFixture.flow].status == .completed)
        let replay = try engine.reduce(
            state, .replayRequested(ExperimentFixture.flow), at: Fixtures.t0, subjects: subjects)
        #expect(replay.state[flow: ExperimentFixture.flow].plan.count == 4)
        #expect(!replay.record.facts.contains { $0.arm != nil })
        let relaunch = try engine.reduce(
            replay.state, .appLaunched(version: "1.0"), at: Fixtures.t0, subjects: subjects)
        #expect(!relaunch.record.facts.contains { $0.arm != nil })
    }

    @Test func theReportsIntervalsAreWilsonsAndNewcombesComputedIndependently() throws {
        let subjects = try Self.simulated.get()
        var counts: [String: ExperimentReport.Counts] = [:]
        for subject in subjects {
            let facts = subject.rows.flatMap { $0 }
            var tally = counts[subject.variant, default: .init()]
            tally.assigned += 1
            if facts.contains(where: { if case .exposed = $0 { true } else { false } }) { tally.exposed += 1 }
            if facts.contains(where: { if case .goalReached = $0 { true } else { false } }) {
                tally.goalReached += 1
            }
            counts[subject.variant] = tally
        }
        let report = ExperimentReport(
            experiment: Self.experiment.id, flow: "tour", declared: Self.experiment, counts: counts)
        #expect(report.arms.map(\.variant) == ["full", "short", "holdout"])
        #expect(report.hasEnoughSubjects)
        let control = try #require(counts["full"])
        for arm in report.arms {
            let tally = try #require(counts[arm.variant])
            #expect(arm.counts == tally)
            let expected = IndependentStatistics.wilson(tally.goalReached, tally.assigned)
            #expect(abs(arm.interval!.lowerBound - expected.lower) < 1e-9, "\(arm.variant)")
            #expect(abs(arm.interval!.upperBound - expected.upper) < 1e-9, "\(arm.variant)")
            guard arm.variant != "full" else {
                #expect(arm.verdict == .control)
                continue
            }
            let difference = IndependentStatistics.newcombe(
                tally.goalReached, tally.assigned, control.goalReached, control.assigned)
            #expect(abs(arm.difference! - difference.estimate) < 1e-12)
            #expect(abs(arm.differenceInterval!.lowerBound - difference.lower) < 1e-9)
            #expect(abs(arm.differenceInterval!.upperBound - difference.upper) < 1e-9)
            let verdict: ExperimentReport.Verdict =
                difference.lower > 0 ? .better : difference.upper < 0 ? .worse : .unclear
            #expect(arm.verdict == verdict)
        }
        // The simulated short tour activates 50% against the full tour's 40%: over about 900 each,
        // the interval lies above zero and the report names it.
        #expect(report.winner == "short", "\(report.conclusion)")
    }

    @Test func belowTheMinimumSampleTheReportNamesNoWinner() {
        let small: [String: ExperimentReport.Counts] = [
            "full": .init(assigned: 150, exposed: 150, goalReached: 30),
            "short": .init(assigned: 140, exposed: 140, goalReached: 90),
            "holdout": .init(assigned: 40, exposed: 0, goalReached: 5),
        ]
        let report = ExperimentReport(
            experiment: Self.experiment.id, flow: "tour", declared: Self.experiment, counts: small)
        #expect(!report.hasEnoughSubjects)
        #expect(report.winner == nil)
        #expect(report.arms.allSatisfy { $0.verdict == nil })
        #expect(report.conclusion.contains("not enough subjects yet"), "\(report.conclusion)")
        #expect(report.conclusion.contains("the smallest has 40"))
        // The intervals are still given.
        #expect(report.arms.allSatisfy { $0.interval != nil })
        // Without a known control nothing is compared.
        let unknown = ExperimentReport(experiment: "gone", flow: "tour", declared: nil, counts: small)
        #expect(unknown.control == nil && unknown.winner == nil)
        #expect(unknown.arms.allSatisfy { $0.difference == nil })
    }
}
