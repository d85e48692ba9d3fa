// The C library's log, exp and sin, which FoundationEssentials does not re-export.
#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An always-valid comparison of a variant's goal rate with the control's: an interval and a
/// p-value that stay valid however often they are looked at, so a team may read the experiment
/// page every morning and act on the first verdict it shows.
///
/// The method is the mixture sequential probability ratio test (mSPRT) of Johari, Koomen, Pekelis
/// and Walsh ("Peeking at A/B Tests", KDD 2017; "Always Valid Inference", Operations Research 2022),
/// as Optimizely's Stats Engine runs it, on the normal approximation of the difference of two
/// rates. With the difference D = p₁ − p₂, its estimated variance
/// V = p₁(1−p₁)/n₁ + p₂(1−p₂)/n₂ and a normal mixture of standard deviation τ over the
/// true difference θ, the likelihood ratio against θ is
///
///     Λ(θ) = √(V / (V + τ²)) · exp( τ² (D − θ)² / (2 V (V + τ²)) )
///
/// Under θ it is a nonnegative martingale of mean 1, so by Ville's inequality it crosses 1/α with
/// probability at most α at any time: the always-valid p-value is 1/Λ(0) (capped at 1) and the 95%
/// confidence sequence is every θ with Λ(θ) < 1/α:
///
///     |D − θ| ≤ √( V (V + τ²) / τ² · (2 ln(1/α) + ln((V + τ²) / V)) )
///
/// Chosen over Howard et al.'s (2021) empirical-Bernstein sequences because it is closed-form from
/// the counts the report already has (no history of looks is needed), is what the feature-flag
/// platforms teams know run, and its guarantee is checked here by simulation
/// (`SequentialTestingTests`: A/A experiments looked at daily for 30 days). The price is width:
/// the interval is wider than the fixed-horizon one at any one sample size.
public enum AlwaysValid {
    /// The error rate: 5%, as the fixed-horizon intervals beside it.
    public static let alpha = 0.05
    /// τ, the standard deviation of the mixture over the true difference: 5 points, the size of
    /// effect onboarding changes are tried for (the sample-size form's default is 5 points too).
    /// A smaller τ is tighter for small effects and slower for large ones.
    public static let mixingDeviation = 0.05

    /// A difference's always-valid interval and p-value.
    public struct Difference: Equatable, Sendable {
        public var interval: ClosedRange<Double>
        public var pValue: Double
    }

    /// `variant`'s rate minus `control`'s: the always-valid interval and p-value, or nil when
    /// either has no subjects.
    public static func difference(
        _ variant: Proportion, to control: Proportion, alpha: Double = alpha, tau: Double = mixingDeviation
    ) -> Difference? {
        guard let p1 = variant.rate, let p2 = control.rate else { return nil }
        let d = p1 - p2
        // The variance from rates pulled half a subject toward 1/2: a rate of 0 or 1 does not
        // claim a variance of 0 (which would make any difference certain).
        func smoothed(_ proportion: Proportion) -> Double {
            let rate = (Double(proportion.successes) + 0.5) / (Double(proportion.trials) + 1)
            return rate * (1 - rate) / Double(proportion.trials)
        }
        let v = smoothed(variant) + smoothed(control)
        let tau2 = tau * tau
        let halfWidth = (v * (v + tau2) / tau2 * (2 * log(1 / alpha) + log((v + tau2) / v))).squareRoot()
        let logLambda = 0.5 * log(v / (v + tau2)) + tau2 * d * d / (2 * v * (v + tau2))
        let pValue = min(1, exp(-logLambda))
        return Difference(interval: max(-1, d - halfWidth)...min(1, d + halfWidth), pValue: pValue)
    }
}
