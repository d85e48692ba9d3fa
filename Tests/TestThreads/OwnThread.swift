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
    /// How many of the lanes a test takes: one, all of them for a test that measures how fast
    /// a server recovers and must not share the machine with other servers (`.ownThreadAlone`), or
    /// none for a test that waits on a process but starts no server (`.offThePool`).
    var lanes = 1

    /// Two a core: a server test spends most of its time waiting for a process. (Three a core
    /// was slower here, 567 s against 544 s for a full run, the machine busy for minutes.)
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
        if lanes > 0 { await Self.lanes.enter(lanes: lanes) }
        let executor = ThreadExecutor(name: test.name)
        let entered = ContinuousClock.now
        LaneTimes.entered(test)
        defer {
            executor.finish()
            if lanes > 0 { Task { await Self.lanes.leave(lanes: lanes) } }
            LaneTimes.record(test, seconds: entered.duration(to: .now), lanes: lanes)
        }
        try await withTaskExecutorPreference(executor) {
            try await Self.$isOnOwnThread.withValue(true) { try await function() }
        }
    }
}

/// Where each test's time in its lane goes, when `ONBOARDING_TEST_TIMES` names a file: a line when a
/// test enters its lane (`entered`, `-`, its id) and one when it ends (milliseconds, lanes, its
/// id), tab-separated, appended, each with the seconds since the first of them (a fourth field:
/// what was in the lanes while the machine sat idle). `scripts/report-hang` names the tests that
/// entered and have not ended. (The run's own durations count the wait for a lane too, so they
/// cannot say which tests the suite's wall time is spent on.)
enum LaneTimes {
    private static let lock = NSLock()
    private static let file = ProcessInfo.processInfo.environment["ONBOARDING_TEST_TIMES"]

    static func entered(_ test: Test) {
        append("entered\t-\t\(name(of: test))\t\(since())\n")
    }

    static func record(_ test: Test, seconds: Duration, lanes: Int) {
        let milliseconds = Int((seconds / .milliseconds(1)).rounded())
        append("\(milliseconds)\t\(lanes == .max ? "all" : String(lanes))\t\(name(of: test))\t\(since())\n")
    }

    private static let start = ContinuousClock.now

    /// Seconds since the first line, to the millisecond.
    private static func since() -> String {
        String(format: "%.3f", start.duration(to: .now) / .milliseconds(1) / 1000)
    }

    private static func name(of test: Test) -> String {
        test.id.description.replacingOccurrences(of: "\t", with: " ")
    }

    private static func append(_ line: String) {
        guard let file else { return }
        lock.lock()
        defer { lock.unlock() }
        if !FileManager.default.fileExists(atPath: file) {
            _ = FileManager.default.createFile(atPath: file, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: file) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data(line.utf8))
    }
}

extension Trait where Self == OwnThread {
    /// Each test on a thread of its own (`OwnThread`).
    public static var ownThread: Self { OwnThread() }
    /// Each test on a thread of its own, while no other test of these traits runs: the fault
    /// tests, which time a server's recovery against a second, run beside the suite's other tests
    /// without servers only.
    public static var ownThreadAlone: Self { OwnThread(lanes: .max) }
    /// Each test on a thread of its own, beside the lanes: for a test that waits on a process but
    /// starts no server (a server test takes a lane, so that `.ownThreadAlone` runs alone). Without
    /// a thread of its own, each wait held one of the pool's two threads for as long as it lasted,
    /// and every in-process test behind it stood still.
    public static var offThePool: Self { OwnThread(lanes: 0) }
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

extension Task where Failure == any Error {
    /// A task for work that blocks its thread (a process run to its end, a synchronous wait), run
    /// on a thread of its own. `Task.detached` would run it on Swift's pool, two threads here, and
    /// hold one for as long as it blocks, while the in-process tests and servers wait for a thread.
    /// (An unstructured task does not inherit a test's `.ownThread` executor either.)
    @discardableResult
    public static func blocking(
        _ name: String = "blocking", _ body: @escaping @Sendable () async throws -> Success
    ) -> Task<Success, any Error> {
        let executor = ThreadExecutor(name: name)
        return Task(executorPreference: executor) {
            defer { executor.finish() }
            return try await body()
        }
    }
}

/// A task executor that runs each job on a thread of its own, never behind another job: a job
/// goes to an idle thread of this executor, or to a new one. A test's job that blocks (a wait for a
/// process) so holds only its own thread, and the test's other tasks (a server it runs in process, a
/// child task another waits for) go on beside it. Threads idle for two seconds end, and all do
/// after `finish`; a job enqueued later (a task the test left behind) starts a thread again.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private final class Worker: @unchecked Sendable {
        let wake = DispatchSemaphore(value: 0)
        var job: UnownedJob?
    }

    private let name: String
    private let lock = NSLock()
    private var idle: [Worker] = []
    private var finished = false

    public init(name: String) { self.name = name }

    public func enqueue(_ job: consuming ExecutorJob) {
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
    public func finish() {
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
