import Foundation
import Testing
import TourCore
import TourFixtures

/// The sample ratio check (``SampleRatio``): its p-values against the chi-square table, its false
/// alarm rate over thousands of correct assignments by the real bucket function, and a biased
/// assignment flagged, with the report withholding every verdict.
@Suite("Sample ratio check")
struct SampleRatioTests {
    /// Critical values from any chi-square table: P(X ≥ x) for 1, 2 and 4 degrees of freedom.
    @Test(arguments: [
        (3.841, 1, 0.05), (6.635, 1, 0.01), (10.828, 1, 0.001), (5.991, 2, 0.05), (13.816, 2, 0.001),
        (9.488, 4, 0.05), (18.467, 4, 0.001), (0.455, 1, 0.5), (1.386, 2, 0.5),
    ])
    func theUpperTailMatchesTheTable(_ row: (x: Double, k: Int, p: Double)) {
        let p = SampleRatio.upperTail(chiSquare: row.x, degreesOfFreedom: row.k)
        #expect(abs(p - row.p) < row.p * 0.002, "P(X ≥ \(row.x); \(row.k)) = \(p), the table says \(row.p)")
    }

    static let experiment = Experiment(
        "tourLength",
        variants: [.init("full", weight: 45), .init("short", weight: 45), .init("holdout", weight: 10)],
        control: "full", goal: .completion)

    /// 2,000 experiments of 300 subjects each, assigned by the engine's own bucket function:
    /// flagged in about 0.1% of them (2 expected; more than 10 would be a broken check, p < 1e-5).
    @Test func aCorrectAssignmentIsFlaggedAboutOnceInAThousand() {
        var flagged = 0
        for run in 0..<2_000 {
            var assigned: [String: Int] = [:]
            for subject in 0..<300 {
                let index = ExperimentAssignment.variant(
                    subject: "account:r\(run)s\(subject)", experiment: "tourLength", weights: [45, 45, 10])!
                assigned[Self.experiment.variants[index].name, default: 0] += 1
            }
            if SampleRatio(experiment: Self.experiment, assigned: assigned)!.isMismatch { flagged += 1 }
        }
        #expect(flagged <= 10, "\(flagged) of 2,000 correct assignments flagged")
    }

    /// One variant's subjects lost 15% of the time (a crash before the assignment is journalled):
    /// flagged at 2,000 subjects, and the report names no verdict and says why.
    @Test func aBiasedAssignmentIsFlaggedAndTheReportWithholdsItsVerdict() throws {
        var assigned: [String: Int] = [:]
        var random = SplitMix64(seed: 61)
        for subject in 0..<2_000 {
            let index = ExperimentAssignment.variant(
                subject: "account:b\(subject)", experiment: "tourLength", weights: [45, 45, 10])!
            let name = Self.experiment.variants[index].name
            if name == "short", random.next() % 100 < 15 { continue }
            assigned[name, default: 0] += 1
        }
        let ratio = try #require(SampleRatio(experiment: Self.experiment, assigned: assigned))
        #expect(ratio.isMismatch, "p = \(ratio.pValue) for \(assigned)")
        let counts = assigned.mapValues {
            ExperimentReport.Counts(assigned: $0, exposed: $0, goalReached: $0 / 2)
        }
        var skewed = counts
        let shortAssigned = skewed["short"]?.assigned ?? 0
        skewed["short"]?.goalReached = shortAssigned * 9 / 10  // a "winner" that must not be named
        let report = ExperimentReport(
            experiment: "tourLength", flow: "tour", declared: Self.experiment, counts: skewed)
        #expect(report.hasSampleRatioMismatch)
        #expect(report.winner == nil)
        #expect(report.arms.allSatisfy { $0.verdict == nil }, "\(report.arms.map(\.verdict))")
        #expect(report.conclusion.contains("does not match the weights"), "\(report.conclusion)")
        // The same counts without the loss: no flag, and the winner is named.
        var fair: [String: Int] = [:]
        for subject in 0..<2_000 {
            let index = ExperimentAssignment.variant(
                subject: "account:b\(subject)", experiment: "tourLength", weights: [45, 45, 10])!
            fair[Self.experiment.variants[index].name, default: 0] += 1
        }
        var fairCounts = fair.mapValues {
            ExperimentReport.Counts(assigned: $0, exposed: $0, goalReached: $0 / 2)
        }
        let fairShort = fairCounts["short"]?.assigned ?? 0
        fairCounts["short"]?.goalReached = fairShort * 9 / 10
        let fairReport = ExperimentReport(
            experiment: "tourLength", flow: "tour", declared: Self.experiment, counts: fairCounts)
        #expect(!fairReport.hasSampleRatioMismatch, "p = \(fairReport.sampleRatio?.pValue ?? -1) for \(fair)")
        #expect(fairReport.winner == "short")
    }

    /// Subjects in a variant the experiment does not declare can only come from a broken
    /// assignment: flagged.
    @Test func subjectsInAnUndeclaredVariantAreAMismatch() throws {
        let ratio = try #require(
            SampleRatio(
                experiment: Self.experiment,
                assigned: ["full": 450, "short": 450, "holdout": 100, "ghost": 3]))
        #expect(ratio.isMismatch)
        #expect(SampleRatio(experiment: Self.experiment, assigned: [:]) == nil)
    }
}
