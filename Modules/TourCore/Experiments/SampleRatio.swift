// The C library's log, exp and sin, which FoundationEssentials does not re-export.
#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The sample ratio check: whether an experiment's assignment counts match its weights.
///
/// A mismatch (a sample ratio mismatch, SRM) means the assignment or the counting is broken: a
/// variant that crashes before its assignment is journalled, a bucket computed two ways, a
/// platform that never reports. Its comparisons are then biased whatever their intervals say, so
/// a flagged experiment shows why and names no verdict. Pearson's chi-square goodness of fit of
/// the assigned counts against the declared weights, flagged at p < 0.001 (the threshold
/// experimentation platforms use: with a check run on every look, a lower false alarm rate than
/// 0.05 matters more than catching a tiny mismatch).
public struct SampleRatio: Equatable, Sendable {
    /// Subjects expected per variant at the weights, for the subjects counted.
    public var expected: [String: Double]
    public var chiSquare: Double
    public var degreesOfFreedom: Int
    /// The chance of counts at least this far from the weights if the assignment is right.
    public var pValue: Double

    /// The p-value under which a mismatch is flagged.
    public static let threshold = 0.001

    public var isMismatch: Bool { pValue < Self.threshold }

    /// The check of `assigned` (per variant) against `experiment`'s weights; nil with fewer than
    /// two variants or no subject. Subjects counted in a variant the experiment does not declare
    /// count against it (they can only come from a broken assignment).
    public init?(experiment: Experiment, assigned: [String: Int]) {
        let weights = experiment.variants.map { ($0.name, Double($0.weight)) }
        let totalWeight = weights.reduce(0) { $0 + $1.1 }
        let total = assigned.values.reduce(0, +)
        guard weights.count >= 2, totalWeight > 0, total > 0 else { return nil }
        var expected: [String: Double] = [:]
        var chiSquare = 0.0
        for (name, weight) in weights {
            let expectation = Double(total) * weight / totalWeight
            expected[name] = expectation
            let observed = Double(assigned[name] ?? 0)
            if expectation > 0 {
                chiSquare += (observed - expectation) * (observed - expectation) / expectation
            } else if observed > 0 {
                chiSquare = .infinity
            }
        }
        let undeclared = assigned.filter { name, count in count > 0 && expected[name] == nil }
        if !undeclared.isEmpty { chiSquare = .infinity }
        self.expected = expected
        self.chiSquare = chiSquare
        degreesOfFreedom = weights.count - 1
        pValue =
            chiSquare.isInfinite
            ? 0 : Self.upperTail(chiSquare: chiSquare, degreesOfFreedom: degreesOfFreedom)
    }

    /// P(X ≥ x) for X chi-square with `k` degrees of freedom: Q(k/2, x/2), the regularized upper
    /// incomplete gamma function (a series below a + 1, Lentz's continued fraction above).
    public static func upperTail(chiSquare x: Double, degreesOfFreedom k: Int) -> Double {
        guard x > 0 else { return 1 }
        let a = Double(k) / 2
        let z = x / 2
        let logPrefix = a * log(z) - z - logGamma(a)
        if z < a + 1 {
            var term = 1 / a
            var sum = term
            var n = a
            for _ in 0..<1_000 {
                n += 1
                term *= z / n
                sum += term
                if abs(term) < abs(sum) * 1e-15 { break }
            }
            return max(0, min(1, 1 - sum * exp(logPrefix)))
        }
        let tiny = 1e-300
        var b = z + 1 - a
        var c = 1 / tiny
        var d = 1 / b
        var h = d
        for i in 1...1_000 {
            let an = -Double(i) * (Double(i) - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-15 { break }
        }
        return max(0, min(1, exp(logPrefix) * h))
    }

    /// ln Γ(x) for x > 0 (Lanczos, g = 7, nine coefficients: about 15 significant digits).
    static func logGamma(_ x: Double) -> Double {
        let coefficients = [
            0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059,
            12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
        ]
        if x < 0.5 {
            return log(Double.pi / abs(sin(Double.pi * x))) - logGamma(1 - x)
        }
        let y = x - 1
        var sum = coefficients[0]
        for index in 1..<coefficients.count { sum += coefficients[index] / (y + Double(index)) }
        let t = y + 7.5
        let head: Double = 0.5 * log(2 * Double.pi)
        let body: Double = (y + 0.5) * log(t) - t
        return head + body + log(sum)
    }
}
