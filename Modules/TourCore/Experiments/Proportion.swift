#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A rate with its 95% interval: how many of the subjects of a variant reached its goal.
///
/// The interval is Wilson's score interval (good at small counts and at rates near 0 or 1, where
/// the normal approximation is not); the difference between two rates uses Newcombe's method
/// (hybrid score, no continuity correction), built from the two Wilson intervals.
public struct Proportion: Equatable, Sendable {
    public var successes: Int
    public var trials: Int

    public init(successes: Int, trials: Int) {
        self.successes = successes
        self.trials = trials
    }

    /// The z of a two-sided 95% interval.
    public static let z95 = 1.959_963_984_540_054

    public var rate: Double? { trials > 0 ? Double(successes) / Double(trials) : nil }

    /// Wilson's score interval; nil without trials.
    public func wilson(z: Double = Proportion.z95) -> ClosedRange<Double>? {
        guard trials > 0 else { return nil }
        let n = Double(trials)
        let p = Double(successes) / n
        let z2 = z * z
        let centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        let margin = z / (1 + z2 / n) * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        return max(0, centre - margin)...min(1, centre + margin)
    }

    /// This rate minus `control`'s, with Newcombe's 95% interval; nil when either has no trials.
    public func difference(to control: Proportion, z: Double = Proportion.z95) -> (
        estimate: Double, interval: ClosedRange<Double>
    )? {
        guard let p1 = rate, let p2 = control.rate, let w1 = wilson(z: z), let w2 = control.wilson(z: z)
        else {
            return nil
        }
        let d = p1 - p2
        let lower =
            d
            - ((p1 - w1.lowerBound) * (p1 - w1.lowerBound) + (w2.upperBound - p2) * (w2.upperBound - p2))
            .squareRoot()
        let upper =
            d
            + ((w1.upperBound - p1) * (w1.upperBound - p1) + (p2 - w2.lowerBound) * (p2 - w2.lowerBound))
            .squareRoot()
        return (d, lower...upper)
    }
}
