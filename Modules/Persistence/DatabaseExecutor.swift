import Dispatch

/// Where a database file's work runs: a serial dispatch queue of its own, as GRDB runs each
/// `DatabaseQueue`, never Swift's cooperative pool. A commit waits on SQLite (the disk's flush,
/// and up to the busy timeout for another process's lock on a file the five products share); on
/// the cooperative pool, with one thread per core, that wait stalls every task of the process.
/// `TourSession`, the actor that owns a session's database work, runs on its file's executor.
///
/// It is also a task executor: a task that prefers it (`withTaskExecutorPreference`) runs its own
/// code on the same queue, so awaiting the session from it hops to no other thread.
public final class DatabaseExecutor: SerialExecutor, TaskExecutor, Sendable {
    private let queue: DispatchQueue
    private let key = DispatchSpecificKey<Bool>()

    public init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
        queue.setSpecific(key: key, value: true)
    }

    /// Whether the caller runs on this executor's queue (and so not on Swift's cooperative pool).
    public var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // The closure keeps the executor alive until the job has run: the job may release the last
        // reference to the actor, and with it the database and this executor, while it runs.
        // Run as both: isolated to this serial executor (an actor's job) and on this task executor
        // (a task that prefers it), so the runtime knows a task running here is where it prefers
        // to be and does not enqueue it again on leaving an actor.
        queue.async { [self] in
            job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
