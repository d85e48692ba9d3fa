/// How many subjects each variant of a two-variant comparison needs to detect a difference in a
/// rate (Docs/Server.md, "Experiments"): the normal approximation for two independent
/// proportions, without continuity correction (Fleiss, *Statistical Methods for Rates and
/// Proportions*, 3rd ed., eq. 4.14 without its correction):
///
///     n = ( z(1-α/2)·√(2·p̄·(1-p̄)) + z(1-β)·√(p₁(1-p₁) + p₂(1-p₂)) )²
///         / (p₂ - p₁)²,
///     p̄ = (p₁ + p₂) / 2
///
/// rounded up, with α = 5% two-sided and power 1-β = 80% by default. p₁ is the control's rate and
/// p₂ = p₁ + the smallest effect the team wants to detect. 10% → 15% needs 686 a variant.
public enum SampleSize {
    /// z of the 97.5th percentile (α = 5%, two-sided).
    public static let zAlpha = Proportion.z95
    /// z of the 80th percentile (power 80%).
    public static let zPower = 0.841_621_233_572_914_3

    /// Subjects each variant needs, or nil when no sample can tell the rates apart (an effect of
    /// 0, or a rate outside 0...1).
    public static func perVariant(
        baseline: Double, effect: Double, zAlpha: Double = zAlpha, zPower: Double = zPower
    ) -> Int? {
        let p1 = baseline
        let p2 = baseline + effect
        guard effect != 0, (0...1).contains(p1), (0...1).contains(p2), p1.isFinite, p2.isFinite else {
            return nil
        }
        let mean = (p1 + p2) / 2
        let spread =
            zAlpha * (2 * mean * (1 - mean)).squareRoot() + zPower
            * (p1 * (1 - p1) + p2 * (1 - p2)).squareRoot()
        let n = spread * spread / (effect * effect)
        guard n.isFinite, n < Double(Int.max / 2) else { return nil }
        // A hair under an integer from floating point (685.9999999) is that integer.
        return max(1, Int((n - 1e-9).rounded(.up)))
    }
}
