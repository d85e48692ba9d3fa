/// Who gets a publication (or a variant): a deterministic bucket of a subject.
///
/// The subject is the account for account-scoped flows and the install otherwise; the salt names
/// what is rolled out (`finite/catalog/3`, an experiment's id). The bucket is the first eight bytes
/// of SHA-256(salt, NUL, subject), big-endian, modulo 10,000: the same on every device and every
/// run, independent across salts, and a rollout of p% takes the buckets below p × 100, so raising
/// the percentage keeps everyone it had and adds others, and lowering it removes the newest first.
public enum Rollout {
    /// Buckets per whole: a percentage has two decimals of resolution.
    public static let buckets = 10_000

    public static func bucket(subject: String, salt: String) -> Int {
        var hasher = SHA256Hasher()
        hasher.update(salt.utf8)
        hasher.update([0])
        hasher.update(subject.utf8)
        let digest = hasher.finalize()
        let prefix = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(prefix % UInt64(buckets))
    }

    /// Whether a rollout of `percent` (0 to 100) of `salt` includes `subject`.
    public static func includes(subject: String, salt: String, percent: Int) -> Bool {
        bucket(subject: subject, salt: salt) < max(0, min(100, percent)) * (buckets / 100)
    }

    /// The salt of an app's published catalog version: the same for every rollout percentage of it.
    public static func catalogSalt(app: String, version: Int) -> String { "\(app)/catalog/\(version)" }
}
