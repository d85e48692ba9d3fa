import Foundation
import Testing
import TourCore

/// Assignment and the report's intervals, each checked against an independent computation.
@Suite("Experiment assignment and intervals")
struct ExperimentStatisticsTests {
    @Test func assignmentFollowsTheWeightsWithinSamplingErrorAndNeverChanges() {
        let weights = [50, 30, 20]
        let subjects = (0..<2_000).map { "account:user\($0)" }
        var counts = [0, 0, 0]
        for subject in subjects {
            guard
                let variant = ExperimentAssignment.variant(
                    subject: subject, experiment: "short-tour", weights: weights)
            else {
                Issue.record("no variant for \(subject)")
                continue
            }
            counts[variant] += 1
            #expect(
                ExperimentAssignment.variant(subject: subject, experiment: "short-tour", weights: weights)
                    == variant)
        }
        // Each share within four standard errors of its weight (p(1-p)/n at n = 2,000).
        for (index, weight) in weights.enumerated() {
            let p = Double(weight) / 100
            let sd = (p * (1 - p) / 2_000).squareRoot()
            let share = Double(counts[index]) / 2_000
            #expect(abs(share - p) < 4 * sd, "variant \(index): \(share) for \(p)")
        }
    }

    @Test func variantsWithoutWeightGetNoOneAndTheBucketsFollowTheDeclaredOrder() {
        for index in 0..<1_000 {
            let subject = "install:\(index)"
            let bucket = Rollout.bucket(subject: subject, salt: ExperimentAssignment.salt(experiment: "e"))
            let expected = bucket < 5_000 ? 0 : bucket < 7_500 ? 1 : 2
            #expect(
                ExperimentAssignment.variant(subject: subject, experiment: "e", weights: [2, 1, 1])
                    == expected)
            #expect(
                ExperimentAssignment.variant(subject: subject, experiment: "e", weights: [2, 0, 1, 1]) != 1)
        }
        #expect(ExperimentAssignment.variant(subject: "x", experiment: "e", weights: [0, 0]) == nil)
        #expect(ExperimentAssignment.variant(subject: "x", experiment: "e", weights: [0, 7]) == 1)
    }

    /// Wilson's interval from its textbook form, (2np + z² ± z√(z² + 4np(1-p))) / (2(n + z²)),
    /// an algebraically different route to the same bounds.
    static func textbookWilson(_ successes: Int, _ trials: Int) -> (Double, Double) {
        let n = Double(trials)
        let p = Double(successes) / n
        let z = 1.959_963_984_540_054
        let root = z * (z * z + 4 * n * p * (1 - p)).squareRoot()
        let denominator = 2 * (n + z * z)
        return ((2 * n * p + z * z - root) / denominator, (2 * n * p + z * z + root) / denominator)
    }

    @Test(arguments: [(0, 10), (1, 10), (5, 10), (10, 10), (37, 120), (412, 1_000), (999, 1_000)])
    func wilsonMatchesTheTextbookForm(_ successes: Int, _ trials: Int) throws {
        let interval = try #require(Proportion(successes: successes, trials: trials).wilson())
        let (lower, upper) = Self.textbookWilson(successes, trials)
        #expect(abs(interval.lowerBound - max(0, lower)) < 1e-12)
        #expect(abs(interval.upperBound - min(1, upper)) < 1e-12)
        #expect(Proportion(successes: 0, trials: 0).wilson() == nil)
    }

    /// Newcombe's example (Statistics in Medicine 1998, table II, 56/70 against 48/80): the
    /// difference 0.2000 with the hybrid score interval 0.0524 to 0.3339.
    @Test func theDifferenceToControlMatchesNewcombesPublishedExample() throws {
        let difference = try #require(
            Proportion(successes: 56, trials: 70).difference(to: Proportion(successes: 48, trials: 80)))
        #expect(abs(difference.estimate - 0.2) < 1e-12)
        #expect(abs(difference.interval.lowerBound - 0.0524) < 0.00005, "\(difference.interval)")
        #expect(abs(difference.interval.upperBound - 0.3339) < 0.00005, "\(difference.interval)")
    }
}
