/// How many requests the server answers at once (``RequestsInFlight``): `burst` while it keeps up,
/// `steady` under an overload.
///
/// An accepted request waits about what the requests held at once take (Little's law: held over
/// answered a second), so under an overload the limit is the accepted latency: on two cores at
/// three times capacity, 128 held gave an accepted push p99 of 78-135 ms and 24 gave 28 ms. But a
/// fixed 24 also refused part of a steady load whenever the server paused for a few tens of
/// milliseconds (a checkpoint, the insights job): 15 of 10,000 pushes of 1,000 devices at one a
/// second each. A burst passes; an overload does not. So the limit falls to `steady` once the
/// server has been answering `steady` or more at every look for `interval` on end (CoDel's test:
/// not how many wait, but for how long they keep waiting), and rises back to `burst` once it has
/// answered fewer than `steady` at every look for `interval` on end.
///
/// A value: ``RequestsInFlight`` looks at it under a lock at each request's head, with the count
/// and the time; tests drive it with made-up ones.
package struct AdmissionLimit: Sendable, Equatable {
    package let steady: Int
    package let burst: Int
    /// In nanoseconds of a monotonic clock.
    package let interval: Int64
    /// Whether the server is taken to be overloaded (the limit is `steady`).
    package private(set) var overloaded = false
    /// Since when every look has pointed the other way (at or past `steady` while not overloaded,
    /// under it while overloaded); nil when the last look did not.
    private var pointingSince: Int64?

    /// `steady` is at most `burst`; both at least 1.
    package init(steady: Int, burst: Int, interval: Int64 = Self.defaultInterval) {
        self.burst = max(1, burst)
        self.steady = min(max(1, steady), self.burst)
        self.interval = max(0, interval)
    }

    /// CoDel's interval: longer than a pause of a healthy server, shorter than a user's patience.
    package static let defaultInterval: Int64 = 100_000_000

    /// The limit now.
    package var limit: Int { overloaded ? steady : burst }

    /// Takes in a look at the requests being answered, `count`, at `now` (never earlier than the
    /// last look's), and returns the limit to apply to the request that prompted it.
    package mutating func look(count: Int, now: Int64) -> Int {
        let pointsAway = overloaded ? count < steady : count >= steady
        guard pointsAway else {
            pointingSince = nil
            return limit
        }
        let since = pointingSince ?? now
        if now - since >= interval {
            overloaded.toggle()
            pointingSince = nil
        } else {
            pointingSince = since
        }
        return limit
    }
}
