import Foundation
import Testing

/// Runs each test of a suite on a thread of its own, not on Swift's cooperative pool.
///
/// Swift Testing runs tests as tasks on the cooperative pool, one thread a core. The server tests
/// wait synchronously (a starting server's health, a device command, `psql`), and a waiting test
/// held one of the pool's two threads here: `vmstat` showed the machine 30-50% idle for minutes of
/// the run. Under this trait a test's task prefers an executor with one thread of its own, so its
/// waits block that thread and the pool goes on with other tests. At most `width` tests run so at
/// once (the rest wait for a lane without holding a thread), so a suite of many server tests
/// does not start a server for each at the same moment.
///
/// Nothing in a test changes: the test body, and every async call it makes, runs on its thread
/// (a task executor preference is inherited by the calls and child tasks of the test).
public struct OwnThread: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }
    /// How many of the lanes a test takes: one, or all of them for a test that measures how fast
    /// a server recovers and must not share the machine with other servers (`.ownThreadAlone`).
    var lanes = 1

    /// Two a core: a server test spends most of its time waiting for a process.
    static let lanes = Lanes(width: 2 * ProcessInfo.processInfo.activeProcessorCount)

    @TaskLocal static var isOnOwnThread = false

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Once a test: whether the library scopes the function, its cases, or both.
        if Self.isOnOwnThread { return try await function() }
        let lanes = lanes
        await Self.lanes.enter(lanes: lanes)
        let executor = ThreadExecutor(name: test.name)
        defer {
            executor.finish()
            Task { await Self.lanes.leave(lanes: lanes) }
        }
        try await withTaskExecutorPreference(executor) {
            try await Self.$isOnOwnThread.withValue(true) { try await function() }
        }
    }
}

extension Trait where Self == OwnThread {
    /// Each test on a thread of its own (`OwnThread`).
    public static var ownThread: Self { OwnThread() }
    /// Each test on a thread of its own, while no other test of these traits runs: the fault
    /// tests, which time a server's recovery against a second, run beside the suite's other tests
    /// without servers only.
    public static var ownThreadAlone: Self { OwnThread(lanes: .max) }
}

/// A counting semaphore for tasks: `enter` suspends (holding no thread) while the lanes asked for
/// are not free. First come, first served: a test that asks for every lane is not passed over by
/// the ones that come after it.
actor Lanes {
    let width: Int
    private var inside = 0
    private var waiting: [(lanes: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(width: Int) { self.width = max(1, width) }

    func enter(lanes: Int = 1) async {
        let lanes = min(max(1, lanes), width)
        if waiting.isEmpty, inside + lanes <= width {
            inside += lanes
            return
        }
        await withCheckedContinuation { waiting.append((lanes, $0)) }
    }

    /// Frees the lanes and lets in the longest waiting tasks that now fit, in order.
    func leave(lanes: Int = 1) {
        inside -= min(max(1, lanes), width)
        while let first = waiting.first, inside + first.lanes <= width {
            waiting.removeFirst()
            inside += first.lanes
            first.continuation.resume()
        }
    }
}

/// A task executor that runs each job on a thread of its own, never behind another job: a job
/// goes to an idle thread of this executor, or to a new one. A test's job that blocks (a wait for a
/// process) so holds only its own thread, and the test's other tasks (a server it runs in process, a
/// child task another waits for) go on beside it. Threads idle for two seconds end, and all do
/// after `finish`; a job enqueued later (a task the test left behind) starts a thread again.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private final class Worker: @unchecked Sendable {
        let wake = DispatchSemaphore(value: 0)
        var job: UnownedJob?
    }

    private let name: String
    private let lock = NSLock()
    private var idle: [Worker] = []
    private var finished = false

    init(name: String) { self.name = name }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        if let worker = idle.popLast() {
            worker.job = job
            lock.unlock()
            worker.wake.signal()
        } else {
            lock.unlock()
            let worker = Worker()
            worker.job = job
            let thread = Thread { [self] in run(worker) }
            thread.name = "test: \(name)"
            thread.start()
        }
    }

    /// No thread waits for work after this.
    func finish() {
        lock.lock()
        finished = true
        let sleepers = idle
        idle = []
        lock.unlock()
        for worker in sleepers { worker.wake.signal() }
    }

    private func run(_ worker: Worker) {
        while let job = worker.job {
            worker.job = nil
            job.runSynchronously(on: asUnownedTaskExecutor())
            lock.lock()
            if finished {
                lock.unlock()
                return
            }
            idle.append(worker)
            lock.unlock()
            if worker.wake.wait(timeout: .now() + 2) == .timedOut {
                lock.lock()
                if let index = idle.firstIndex(where: { $0 === worker }) {
                    idle.remove(at: index)
                    lock.unlock()
                    return
                }
                lock.unlock()
                // Handed a job (or told to finish) just as the wait ran out: take the signal.
                worker.wake.wait()
            }
        }
    }
}
