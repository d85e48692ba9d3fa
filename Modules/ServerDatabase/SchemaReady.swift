import Synchronization

/// Opened once the schema is migrated: the background jobs that read or write its tables wait
/// for it, so a first run during the migrations neither fails nor counts as a failure.
///
/// A wait also ends when its task is cancelled: a server stopped before its migrations finished
/// (a shutdown, or a migration that failed and cancelled the group) must not keep its jobs
/// waiting for a schema that will never be opened.
public final class SchemaReady: Sendable {
    private struct State {
        var open = false
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public func open() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Whether the schema is migrated.
    public var isOpen: Bool { state.withLock { $0.open } }

    /// Returns once the schema is migrated (at once if it is), or once the calling task is
    /// cancelled (check `Task.isCancelled` after, or ``isOpen``).
    public func wait() async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.open || Task.isCancelled { return true }
                    state.waiting[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiting.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
