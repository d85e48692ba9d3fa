import Foundation
import Synchronization

/// Limits failed sign-ins and failed tokens (Docs/Security.md, "Rate limits"): token buckets kept
/// in this process's memory, one per source address and one per person.
///
/// - **Per source**: every failure costs one of ``sourceBurst``, refilled one per ``sourceRefill``.
///   While a source's bucket is empty, its sign-ins and its requests bearing a token are answered
///   `429 Too Many Requests` with `Retry-After` without being checked, so a guessing source is
///   slowed to one try per refill. A source that fails nothing is never limited.
/// - **Per person**: failures that name a person (a revoked or expired credential of theirs, their
///   name at sign-in) cost one of ``personBurst``, refilled one per ``personRefill``. While empty,
///   such failures are answered 429; a person's valid credential is never refused by it, so no
///   one can lock a person out by failing in their name.
///
/// Each process limits on its own: behind a balancer, N processes allow N times the rate.
public final class RateLimiter: Sendable {
    public struct Limits: Sendable {
        public var sourceBurst: Double
        public var sourceRefill: Double
        public var personBurst: Double
        public var personRefill: Double

        public init(sourceBurst: Double, sourceRefill: Double, personBurst: Double, personRefill: Double) {
            self.sourceBurst = sourceBurst
            self.sourceRefill = sourceRefill
            self.personBurst = personBurst
            self.personRefill = personRefill
        }

        /// 20 failures, then one per 3 s, per source; 10 failures, then one per 30 s, per person.
        public static let standard = Limits(
            sourceBurst: 20, sourceRefill: 3, personBurst: 10, personRefill: 30)
    }

    public let limits: Limits
    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    private let sources = Mutex<[String: Bucket]>([:])
    private let people = Mutex<[String: Bucket]>([:])
    /// At most this many buckets per kind are kept; past it, the full ones (nobody limited) go.
    static let capacity = 100_000

    public init(limits: Limits = .standard) { self.limits = limits }

    /// Seconds to wait before `source` may try again, or nil when it may now.
    public func retryAfter(source: String, now: Double) -> Double? {
        Self.wait(in: sources, source, burst: limits.sourceBurst, refill: limits.sourceRefill, now: now)
    }

    public func retryAfter(person: String, now: Double) -> Double? {
        Self.wait(in: people, person, burst: limits.personBurst, refill: limits.personRefill, now: now)
    }

    /// Counts a failure of `source` (and of `person`, when the failure names one); whether this
    /// failure used the source's last try (it is limited from now on).
    @discardableResult
    public func failed(source: String, person: String? = nil, now: Double) -> Bool {
        let limited = Self.spend(
            in: sources, source, burst: limits.sourceBurst, refill: limits.sourceRefill, now: now)
        if let person {
            Self.spend(in: people, person, burst: limits.personBurst, refill: limits.personRefill, now: now)
        }
        return limited
    }

    private static func refilled(_ bucket: Bucket?, burst: Double, refill: Double, now: Double) -> Bucket {
        guard let bucket else { return Bucket(tokens: burst, updated: now) }
        let tokens = min(burst, bucket.tokens + max(0, now - bucket.updated) / refill)
        return Bucket(tokens: tokens, updated: now)
    }

    private static func wait(
        in buckets: borrowing Mutex<[String: Bucket]>, _ key: String, burst: Double, refill: Double,
        now: Double
    ) -> Double? {
        buckets.withLock { buckets in
            let bucket = refilled(buckets[key], burst: burst, refill: refill, now: now)
            return bucket.tokens >= 1 ? nil : (1 - bucket.tokens) * refill
        }
    }

    @discardableResult
    private static func spend(
        in buckets: borrowing Mutex<[String: Bucket]>, _ key: String, burst: Double, refill: Double,
        now: Double
    ) -> Bool {
        buckets.withLock { buckets in
            // At capacity, the buckets that refilled (nobody limited) go; if that frees too little,
            // all go (a flood of addresses forgets the limits rather than the server's memory), so
            // a full scan happens at most once per capacity / 2 new addresses.
            if buckets.count >= capacity {
                buckets = buckets.filter {
                    refilled($0.value, burst: burst, refill: refill, now: now).tokens < burst
                }
                if buckets.count >= capacity / 2 { buckets.removeAll(keepingCapacity: true) }
            }
            var bucket = refilled(buckets[key], burst: burst, refill: refill, now: now)
            let before = bucket.tokens
            bucket.tokens = max(0, bucket.tokens - 1)
            buckets[key] = bucket
            return before >= 1 && bucket.tokens < 1
        }
    }
}
