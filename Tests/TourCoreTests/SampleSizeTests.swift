import Foundation
import Testing
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#endif

/// The sample size an experiment's page shows: the closed form, checked against a
/// textbook value and against an independent route, the normal power function searched for the
/// smallest n that reaches 80%.
@Suite("Sample size")
struct SampleSizeTests {
    @Test func tenToFifteenPercentNeeds686AVariant() {
        #expect(SampleSize.perVariant(baseline: 0.10, effect: 0.05) == 686)
        // The same distance the other way round (15% → 10%) needs the same.
        #expect(SampleSize.perVariant(baseline: 0.15, effect: -0.05) == 686)
    }

    @Test func noSampleTellsNoDifferenceOrARateOutsideZeroToOne() {
        #expect(SampleSize.perVariant(baseline: 0.3, effect: 0) == nil)
        #expect(SampleSize.perVariant(baseline: 0.95, effect: 0.1) == nil)
        #expect(SampleSize.perVariant(baseline: -0.1, effect: 0.1) == nil)
        #expect(SampleSize.perVariant(baseline: .nan, effect: 0.1) == nil)
    }

    /// Over a grid of baselines and effects, the closed form equals the smallest n at which the
    /// power, Φ((|d|·√n − z·√(2p̄q̄)) / √(p₁q₁ + p₂q₂)), reaches 80%.
    @Test func theClosedFormEqualsASearchOfThePowerFunction() {
        func phi(_ x: Double) -> Double { 0.5 * erfc(-x / 2.0.squareRoot()) }
        func searched(_ p1: Double, _ d: Double) -> Int {
            let p2 = p1 + d
            let mean = (p1 + p2) / 2
            var n = 1
            while phi(
                (abs(d) * Double(n).squareRoot() - SampleSize.zAlpha * (2 * mean * (1 - mean)).squareRoot())
                    / (p1 * (1 - p1) + p2 * (1 - p2)).squareRoot()) < 0.8
            {
                n += 1
            }
            return n
        }
        for p1 in stride(from: 0.05, through: 0.8, by: 0.15) {
            for d in [0.02, 0.05, 0.1, -0.03] where (0...1).contains(p1 + d) {
                #expect(SampleSize.perVariant(baseline: p1, effect: d) == searched(p1, d), "\(p1) \(d)")
            }
        }
    }
}
