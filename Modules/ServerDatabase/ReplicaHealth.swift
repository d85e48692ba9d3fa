import Synchronization

/// Whether a replica answers: its follower (the server's freshness watch, which reads the replica
/// once a second) notes each answer, and reads fall back to the primary once none came for
/// ``silence`` (``ReadOnlyDatabase/fallback``). A dead replica then costs a page nothing but the
/// note that its figures came from the primary, instead of a connection wait per page.
public final class ReplicaHealth: Sendable {
    /// How long without an answer before reads go to the primary (three of the follower's reads).
    public static let silence: Duration = .seconds(3)

    private let state: Mutex<(started: ContinuousClock.Instant, lastAnswer: ContinuousClock.Instant?)>

    /// `answeringAtFirst`: whether reads go to the replica before its first answer (for
    /// ``silence``). Not for a host that must first show it is a standby: until then it may be a
    /// primary.
    public init(now: ContinuousClock.Instant = .now, answeringAtFirst: Bool = true) {
        state = Mutex((answeringAtFirst ? now : now - Self.silence, nil))
    }

    /// The replica answered now.
    public func noteAnswer(at now: ContinuousClock.Instant = .now) { state.withLock { $0.lastAnswer = now } }

    /// Whether it answered within ``silence`` (or the watch started less than that ago).
    public func isAnswering(at now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in now - (state.lastAnswer ?? state.started) < Self.silence }
    }
}
