import Foundation

/// Blocking work, waited for without holding a thread of Swift's cooperative pool.
///
/// Swift Testing runs tests in parallel on the cooperative pool, which has one thread per core (two
/// on the CI machine). A test that blocks one of them (waiting for a server to answer its health
/// check, for a child process to exit, polling with `usleep`) stops every other test from using
/// that core meanwhile: with both blocked, the machine idles while tests wait. An async test hands
/// such waits to `OffThePool.run`, which blocks a thread of its own instead.
public enum OffThePool {
    ///
    /// - Parameter lanes: at most its count of such bodies run at once, each waiting for a lane on
    ///   its own thread, never on the pool. By default the lanes every test shares, two a core: the
    ///   pool no longer bounds how many servers and commands the tests start at once, and without
    ///   a bound a moment when forty servers start together starves the tests that measure time
    ///   (a lock held for 12 s must still be held when the push it blocks reaches PostgreSQL).
    ///   A body must not itself wait for a lane (it is synchronous, so it cannot call this).
    ///   A wait a test times (polling for the moment to kill a server) passes `nil`: no lane.
    public static func run<Value: Sendable>(
        lanes: DispatchSemaphore? = sharedLanes, _ body: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                lanes?.wait()
                defer { lanes?.signal() }
                continuation.resume(with: Result { try body() })
            }
            thread.start()
        }
    }

    public static let sharedLanes = DispatchSemaphore(value: 2 * ProcessInfo.processInfo.activeProcessorCount)
}
