import AccountSync
import Dispatch
import Logging
import PostgresNIO
import ServerDatabase
import ServerKit
import ServerPushQueue
import ServiceLifecycle
import Synchronization
import TourCore

/// Group commit of pushes, performing what ``PushQueue`` decides: pushes that arrive while earlier
/// ones are being written go together in the next batch, one statement and one transaction
/// (``PushBatchStatement``), instead of one transaction each.
///
/// Why: what PostgreSQL spends per push is mostly per statement and per commit (the executor, the
/// snapshot, the WAL flush), not per row; batching pays those once per batch
/// (Docs/Performance.md, section 5).
///
/// Every decision (what goes in a batch, when a push waited too long, what a failed write means
/// for each push, when a writer is free, when shutdown is done) is the machine's; this class
/// leases connections, runs statements, resumes the callers and runs the one timer. So the
/// machine's promises are this class's: every push answered once, by its deadline, 200 only when
/// committed, no writer kept by a write that does not end.
package final class PushBatcher: Sendable {
    private typealias PushID = PushQueue.PushID
    private typealias BatchID = PushQueue.BatchID

    private struct Waiter {
        var continuation: CheckedContinuation<PushAck?, any Error>
        var request: PushRequest
        var arrived: ContinuousClock.Instant
    }

    private struct Shell {
        var machine: PushQueue
        var waiters: [PushID: Waiter] = [:]
        /// What each push's transaction answered, until the machine says to answer it.
        var acks: [PushID: PushAck?] = [:]
        var errors: [PushID: any Error] = [:]
        /// Each batch's lease task, and its connection while it holds one.
        var tasks: [BatchID: Task<Void, Never>] = [:]
        var connections: [BatchID: PostgresConnection] = [:]
        /// Batches abandoned before their task was recorded.
        var abandonedEarly: Set<BatchID> = []
        /// The earliest timer scheduled (the machine's ``PushQueue/nextDeadline`` when it was set).
        var timer: PushQueue.Instant?
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// What a transition asks of the shell, resolved under the lock and performed outside it.
    private struct Effects {
        var answers: [(CheckedContinuation<PushAck?, any Error>, Result<PushAck?, any Error>)] = []
        var leases: [BatchID] = []
        var writes: [BatchID: [(PushID, PushRequest)]] = [:]
        var abandoned: [(Task<Void, Never>?, PostgresConnection?)] = []
        var stopped: [CheckedContinuation<Void, Never>] = []
        var timer: PushQueue.Instant?
        var queued = 0
        var busy = 0
    }

    private let state: Mutex<Shell>
    private let writer: PushWriter
    private let origin = ContinuousClock.now
    let configuration: PushQueue.Configuration
    var maximumWait: Duration { configuration.maximumWait }
    var maximumQueued: Int { configuration.maximumQueued }

    init(
        writer: PushWriter, writers: Int, maximumBatch: Int = 64, maximumQueued: Int? = nil,
        maximumWait: Duration = .milliseconds(1500), statementLimit: Duration = .milliseconds(2500),
        targetQueueDelay: Duration? = PushBatcher.targetQueueDelay
    ) {
        self.writer = writer
        configuration = PushQueue.Configuration(
            writers: writers, maximumBatch: maximumBatch,
            maximumQueued: maximumQueued ?? Self.defaultQueue(writers: writers),
            maximumWait: maximumWait, statementLimit: statementLimit, targetQueueDelay: targetQueueDelay)
        state = Mutex(Shell(machine: PushQueue(configuration)))
    }

    /// 2,048 per writer: a bound on memory; what sheds under a steady overload is the queue's delay
    /// (``targetQueueDelay``).
    static func defaultQueue(writers: Int) -> Int { max(1, writers) * 2_048 }

    /// 50 ms: past a full batch waiting, once the oldest waiting push has waited longer for 100 ms
    /// on end, pushes are shed at arrival, so under a steady overload an accepted push waits about
    /// that long and the rest are told at once to come back (Docs/Performance.md, section 5). It is
    /// longer than a batch of 64 takes a writer (about 20 ms): a shorter target sheds whenever the
    /// writers are busy, which keeps their batches small and halved the ingest in a measured run.
    static let targetQueueDelay: Duration = .milliseconds(50)

    // MARK: - Pushes

    /// Stores `request` and answers once it is committed. Throws ``Overloaded`` at once when the
    /// queue is full, and ``DatabaseUnavailable`` (with the machine's reason) when it was not
    /// committed, or was not confirmed by its deadline (``PushQueue/Reason/mayHaveCommitted``).
    /// `arrived` is when the request came (before the plan lookup), from which its deadline runs.
    func push(_ request: PushRequest, arrived: ContinuousClock.Instant = .now) async throws -> PushAck? {
        let account = PushQueue.Account(app: request.app, account: request.account)
        let arrival = Arrival()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let effects = transition { shell, now in
                    let (id, actions) = shell.machine.pushArrived(
                        for: account, arrived: arrived - origin, now: now)
                    shell.waiters[id] = Waiter(continuation: continuation, request: request, arrived: arrived)
                    if arrival.arrived(id) { return actions + shell.machine.cancelled(id, now: now) }
                    return actions
                }
                perform(effects)
            }
        } onCancel: {
            guard let id = arrival.cancel() else { return }
            perform(transition { shell, now in shell.machine.cancelled(id, now: now) })
        }
    }

    /// Whether a push arriving now would be taken into the queue (``PushQueue/admits(now:)``).
    func admits() -> Bool {
        state.withLock { shell in shell.machine.admits(now: ContinuousClock.now - origin) }
    }

    /// Stops taking pushes: queued ones are answered 503 now, batches being written end by their
    /// deadline at the latest; returns once none holds a writer.
    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let effects = transition { shell, now in
                guard !shell.machine.isStopped else {
                    continuation.resume()
                    return []
                }
                shell.stopWaiters.append(continuation)
                return shell.machine.shutdown(now: now)
            }
            perform(effects)
        }
    }

    // MARK: - The shell

    /// Runs `body` on the machine under the lock and resolves its actions into effects.
    private func transition(_ body: (inout Shell, PushQueue.Instant) -> [PushQueue.Action]) -> Effects {
        state.withLock { shell in
            let now = ContinuousClock.now - origin
            let actions = body(&shell, now)
            return resolve(actions, in: &shell)
        }
    }

    private func resolve(_ actions: [PushQueue.Action], in shell: inout Shell) -> Effects {
        var effects = Effects()
        for action in actions {
            switch action {
            case .lease(let batch):
                effects.leases.append(batch)
            case .write(let batch, let pushes):
                effects.writes[batch] = pushes.compactMap { push in
                    shell.waiters[push].map { (push, $0.request) }
                }
            case .answer(let pushes, let answer):
                for push in pushes {
                    guard let waiter = shell.waiters.removeValue(forKey: push) else { continue }
                    let ack = shell.acks.removeValue(forKey: push)
                    let error = shell.errors.removeValue(forKey: push)
                    effects.answers.append((waiter.continuation, Self.result(answer, ack: ack, error: error)))
                    PushMetrics.answered(answer, waited: ContinuousClock.now - waiter.arrived)
                }
            case .release:
                break
            case .abandon(let batch):
                let task = shell.tasks.removeValue(forKey: batch)
                if task == nil { shell.abandonedEarly.insert(batch) }
                effects.abandoned.append((task, shell.connections.removeValue(forKey: batch)))
                PushMetrics.abandoned.increment()
            case .stopped:
                effects.stopped += shell.stopWaiters
                shell.stopWaiters = []
            }
        }
        if let next = shell.machine.nextDeadline, shell.timer.map({ next < $0 }) ?? true {
            shell.timer = next
            effects.timer = next
        }
        effects.queued = shell.machine.queued
        effects.busy = shell.machine.writersBusy
        return effects
    }

    private static func result(_ answer: PushQueue.Answer, ack: PushAck??, error: (any Error)?) -> Result<
        PushAck?, any Error
    > {
        switch answer {
        case .committed: .success(ack ?? nil)
        case .unavailable(.queueFull): .failure(Overloaded())
        case .unavailable(let reason):
            .failure(
                DatabaseUnavailable(
                    .push, reason: .init(reason), mayHaveCommitted: reason.mayHaveCommitted, cause: error))
        case .refused, .failed:
            .failure(error ?? DatabaseUnavailable(.push, reason: .connectionLost, mayHaveCommitted: true))
        case .cancelled: .failure(CancellationError())
        }
    }

    /// Performs what a transition resolved to, except the writes (a batch's task performs its own).
    private func perform(_ effects: Effects) {
        PushMetrics.queued.record(effects.queued)
        PushMetrics.writersBusy.record(effects.busy)
        for (continuation, result) in effects.answers { continuation.resume(with: result) }
        for (task, connection) in effects.abandoned {
            task?.cancel()
            if let connection { PushWriter.retire(connection) }
        }
        for batch in effects.leases {
            let task = Task { await self.run(batch) }
            let early = state.withLock { shell in
                if shell.abandonedEarly.remove(batch) != nil { return true }
                shell.tasks[batch] = task
                return false
            }
            if early { task.cancel() }
        }
        if let timer = effects.timer { schedule(at: timer) }
        for waiter in effects.stopped { waiter.resume() }
    }

    /// A dispatch timer, not a sleeping task: a deadline is a promise to the device, and it must
    /// hold while every thread of Swift's pool is busy (a sleeping task waits for a free one).
    private func schedule(at deadline: PushQueue.Instant) {
        let delay = deadline - (ContinuousClock.now - origin)
        DispatchQueue.global().asyncAfter(
            deadline: .now() + .nanoseconds(Int(clamping: max(0, delay.nanoseconds)))
        ) {
            [self] in
            let effects = transition { shell, now in
                if shell.timer == deadline { shell.timer = nil }
                return shell.machine.tick(now: now)
            }
            perform(effects)
        }
    }

    /// One batch: lease a connection, write what the machine says on it until it says release.
    /// One writer: lease a connection for `first`, write what the machine says on it until it says
    /// release; a batch the machine starts as this one ends is written next on the same connection
    /// by this same task (the old writer loop's way: no new task to wait for a thread of a busy
    /// pool, no lease to give back and take again).
    private func run(_ first: BatchID) async {
        var batch = first
        do {
            try await writer.client.withConnection { connection in
                var effects = transition { shell, now in
                    let actions = shell.machine.connectionLeased(batch, now: now)
                    if actions.contains(where: { if case .write(batch, _) = $0 { true } else { false } }) {
                        shell.connections[batch] = connection
                    }
                    return actions
                }
                var retire = false
                while let pushes = effects.writes[batch] {
                    perform(effects)
                    let written = await write(pushes.map(\.1), on: connection)
                    retire = retire || written.retire
                    let current = batch
                    var next: BatchID?
                    effects = transition { shell, now in
                        for (index, (push, _)) in pushes.enumerated() where shell.waiters[push] != nil {
                            switch written.result {
                            case .success(let acks): shell.acks[push] = acks[index]
                            case .failure(let error): shell.errors[push] = error
                            }
                        }
                        var actions = shell.machine.written(current, written.outcome, now: now)
                        guard
                            !actions.contains(where: {
                                if case .write(current, _) = $0 { true } else { false }
                            })
                        else {
                            return actions
                        }
                        shell.connections[current] = nil
                        // The batch ended: take a batch just started onto this connection.
                        guard !retire,
                            let adopted = actions.firstIndex(where: {
                                if case .lease = $0 { true } else { false }
                            }),
                            case .lease(let taken) = actions[adopted]
                        else { return actions }
                        actions.remove(at: adopted)
                        let leased = shell.machine.connectionLeased(taken, now: now)
                        if leased.contains(where: { if case .write(taken, _) = $0 { true } else { false } }) {
                            shell.connections[taken] = connection
                            shell.tasks[taken] = shell.tasks.removeValue(forKey: current)
                            shell.abandonedEarly.remove(current)
                            next = taken
                        }
                        return actions + leased
                    }
                    if let next { batch = next }
                }
                perform(effects)
                // Closed before it goes back, so the pool does not hand it out again meanwhile.
                if retire { try? await connection.close() }
            }
        } catch {
            perform(transition { shell, now in shell.machine.leaseFailed(batch, now: now) })
        }
        state.withLock { shell in
            shell.tasks[batch] = nil
            shell.abandonedEarly.remove(batch)
            shell.connections[batch] = nil
        }
    }

    private struct Written {
        var outcome: PushQueue.WriteOutcome
        var result: Result<[PushAck?], any Error>
        /// The connection must be closed after the batch (``PushWriter/mayHaveFailedPreparing(_:)``).
        var retire: Bool
    }

    private func write(_ requests: [PushRequest], on connection: PostgresConnection) async -> Written {
        PushMetrics.batchSize.record(requests.count)
        do {
            let acks =
                requests.count == 1
                ? [try await writer.one(requests[0], on: connection)]
                : try await writer.many(requests, on: connection)
            return Written(outcome: .committed, result: .success(acks), retire: false)
        } catch {
            return Written(
                outcome: PushWriter.outcome(of: error), result: .failure(error),
                retire: PushWriter.retiresConnection(error))
        }
    }
}

/// Where a push's cancellation finds it: before the machine gave it an id, or after.
private final class Arrival: Sendable {
    private let state = Mutex<(id: PushQueue.PushID?, cancelled: Bool)>((nil, false))

    /// Records the id; whether the caller was cancelled before it came (then the push is cancelled now).
    func arrived(_ id: PushQueue.PushID) -> Bool {
        state.withLock { state in
            state.id = id
            return state.cancelled
        }
    }

    /// The id to cancel, if the push has one yet.
    func cancel() -> PushQueue.PushID? {
        state.withLock { state in
            state.cancelled = true
            return state.id
        }
    }
}

/// The push queue's part in the server's lifecycle: at graceful shutdown (after the HTTP server
/// stopped taking requests, before the pools close) queued pushes are answered and batches being
/// written end by their deadline; the service returns once none holds a writer.
package struct PushQueueService: Service {
    let batcher: PushBatcher

    package init(batcher: PushBatcher) {
        self.batcher = batcher
    }

    package func run() async throws {
        try? await gracefulShutdown()
        await batcher.shutdown()
    }
}

/// The queue's reasons as the server's answers name them.
extension DatabaseUnavailable.Reason {
    init(_ reason: PushQueue.Reason) {
        switch reason {
        case .queueFull: self = DatabaseUnavailable.Reason(description: "queue_full")
        case .waitedForWriter: self = .waitedForWriter
        case .noConnection: self = .noConnection
        case .rolledBack: self = .rolledBack
        case .connectionLost: self = .connectionLost
        case .deadline: self = .deadline
        case .shuttingDown: self = .shuttingDown
        }
    }
}
