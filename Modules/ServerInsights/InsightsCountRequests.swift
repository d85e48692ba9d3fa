import Synchronization

/// Asks this server's catch-up job (``InsightsCatchUp``) for a run now instead of at its next tick:
/// `/report`, which answers only once every push answered before it is counted, asks when it has
/// to wait, so it waits for one run (tens of milliseconds) and not for up to an interval (a second
/// by default). Asks are coalesced: any number while the job sleeps or runs make one run, and the
/// job leaves at least ``minimumGap`` between runs, so a flood of reports makes the job run back
/// to back at most, never more than one run at a time.
public final class InsightsCountRequests: Sendable {
    /// The least time between the end of one run and the start of the next, however often a run
    /// is asked for: each run is a write transaction beside the pushes' commits.
    public static let minimumGap: Duration = .milliseconds(50)

    private struct State {
        var asked = false
        var sleeper: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    /// Asks for a run as soon as the job may start one.
    public func ask() {
        let sleeper = state.withLock { state in
            state.asked = true
            defer { state.sleeper = nil }
            return state.sleeper
        }
        sleeper?.resume()
    }

    /// The job's pause between runs: `interval`, or less when a run is asked for (never less than
    /// `gap`). Clears the asks the coming run answers.
    func pause(for interval: Duration, atLeast gap: Duration = minimumGap) async {
        try? await Task.sleep(for: min(gap, interval))
        if interval > gap {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await Task.sleep(for: interval - gap) }
                group.addTask { await self.untilAsked() }
                await group.next()
                group.cancelAll()
            }
        }
        state.withLock { $0.asked = false }
    }

    /// Returns once a run is asked for (at once when one was already), or when cancelled.
    private func untilAsked() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Cancellation is marked before its handler runs: checked under the lock, a
                // cancelled pause never leaves a sleeper the handler has already missed.
                let now = state.withLock { state -> Bool in
                    if state.asked || Task.isCancelled { return true }
                    state.sleeper = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                defer { state.sleeper = nil }
                return state.sleeper
            }
            sleeper?.resume()
        }
    }
}
