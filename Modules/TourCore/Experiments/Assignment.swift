/// Which variant of an experiment a subject is in: deterministic from the subject and the
/// experiment's id alone, so every device and app of an account computes the same answer offline.
///
/// The subject's ``Rollout`` bucket under the salt `experiment/ID` (0 to 9,999) is laid over the
/// variants' weights in their declared order: with weights 50/30/20, buckets 0–4,999 are the
/// first variant, 5,000–7,999 the second, 8,000–9,999 the third. Independent of any catalog
/// rollout (another salt). Changing any weight reassigns subjects near the boundaries, so an
/// experiment's weights are fixed while it runs (a change is a new experiment id).
public enum ExperimentAssignment {
    public static func salt(experiment: String) -> String { "experiment/\(experiment)" }

    /// The index of the variant `subject` is in, given the variants' weights (positive, in their
    /// declared order); nil when no weight is positive.
    public static func variant(subject: String, experiment: String, weights: [Int]) -> Int? {
        let total = weights.reduce(0) { $0 + max(0, $1) }
        guard total > 0 else { return nil }
        let bucket = Rollout.bucket(subject: subject, salt: salt(experiment: experiment))
        // The bucket's place in the total weight, in exact integer arithmetic.
        let point = bucket * total / Rollout.buckets
        var upper = 0
        for (index, weight) in weights.enumerated() where weight > 0 {
            upper += weight
            if point < upper { return index }
        }
        return weights.lastIndex { $0 > 0 }
    }
}
