import AccountSync
import Dispatch
import Logging
import Metrics
import PostgresNIO
import Synchronization
import TourCodec
import TourCore

/// One device's push as the store receives it.
struct PushRequest: Sendable {
    var app: String
    var account: String
    var batch: PushBatch
    var tokenIssuedAt: Double?
    /// Facts the app's tracking plan does not declare, taken out of the batch (``TrackingPlans``).
    var unplanned: [UnplannedFact] = []

    /// The records of the batch folded per flow (the join is associative), one per flow.
    var records: [String: AccountFlowRecord] {
        var records: [String: AccountFlowRecord] = [:]
        for item in batch.items {
            for (flow, record) in item.records { records[flow] = records[flow].map { $0.merged(with: record) } ?? record }
        }
        return records
    }
}

/// Group commit: pushes that arrive while earlier ones are being written are written together, in
/// one statement and one transaction (``PushBatchStatement``), instead of one transaction each.
///
/// Why: what PostgreSQL spends per push is mostly per statement and per commit (setting up the
/// executor, the snapshot, the WAL flush), not per row; batching pays those once per batch
/// (Docs/Performance.md, section 5, has the measurements).
///
/// Nothing is weaker for it. A push is answered only after the transaction holding it commits, so a
/// crash loses only unanswered pushes, which their devices send again. A push's rows are still
/// stored all or nothing; a batch that PostgreSQL refuses as a whole is written again one push at a
/// time, so one push can fail only itself. Pushes of one account are never in two batches at
/// once, and never twice in one: the batches in flight touch disjoint rows, so they cannot
/// deadlock, and each account's pushes keep their order.
///
/// Batching adapts to the load: at most `writers` batches are in flight; a push that finds a
/// writer free is written at once (a batch of one, the single-push statement), and only when every
/// writer is busy do pushes queue and go together in the next batch (at most `maximumBatch`).
final class PushBatcher: Sendable {
    private struct AccountKey: Hashable {
        var app: String
        var account: String
    }

    private struct State {
        var queue: [PendingPush] = []
        /// Pushes a writer took out of the queue, in batches whose connection it may still wait
        /// for: the sweeper answers those still unclaimed at their deadline as it does queued ones
        /// (while PostgreSQL did not answer, the pool's lease waited with no bound, and so did they).
        var taken: [PendingPush] = []
        /// Whether the task answering pushes that waited too long is running.
        var sweeping = false
        /// Accounts with a push in a batch being written.
        var writing: Set<AccountKey> = []
        var writers = 0
    }

    private let state = Mutex(State())
    private let writer: PushWriter
    let writers: Int
    let maximumBatch: Int
    /// Pushes that may wait for a writer; past it a push is shed at once (``Overloaded``).
    let maximumQueued: Int
    /// How long a push may wait for a writer before it is answered 503, uncommitted.
    let maximumWait: Duration

    init(
        writer: PushWriter, writers: Int, maximumBatch: Int = 64, maximumQueued: Int? = nil,
        maximumWait: Duration = .milliseconds(1500)
    ) {
        self.writer = writer
        self.writers = max(1, writers)
        self.maximumBatch = max(1, maximumBatch)
        self.maximumQueued = max(1, maximumQueued ?? Self.defaultQueue(writers: writers))
        self.maximumWait = maximumWait
    }

    /// 2,048 per writer: about what the writers drain within ``maximumWait`` at their best, so a
    /// full queue means a push would only wait out its deadline; a shorter queue sheds pushes the
    /// writers would have taken in time (Docs/Performance.md, section 5).
    static func defaultQueue(writers: Int) -> Int { max(1, writers) * 2_048 }

    /// Stores `request` and answers once it is committed; throws ``Overloaded`` at once when the
    /// queue is full, and ``DatabaseUnavailable`` when no writer took it within ``maximumWait``
    /// (or the caller was cancelled first). A push a writer has taken is answered with what its
    /// transaction did, however long PostgreSQL takes (bounded by the writers' `statement_timeout`):
    /// so an error answer always means nothing was committed.
    func push(_ request: PushRequest) async throws -> PushAck? {
        let pending = PendingPush(request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                pending.wait(continuation)
                let (accepted, startsWriter, queued) = state.withLock { state -> (Bool, Bool, Int) in
                    guard state.queue.count < maximumQueued else { return (false, false, state.queue.count) }
                    state.queue.append(pending)
                    guard state.writers < writers else { return (true, false, state.queue.count) }
                    state.writers += 1
                    return (true, true, state.queue.count)
                }
                ServerMetrics.queued.record(queued)
                guard accepted else {
                    ServerMetrics.shedFull.increment()
                    _ = pending.abandon(Overloaded())
                    return
                }
                if startsWriter { Task { await self.write() } }
                startSweeperIfIdle()
            }
        } onCancel: {
            self.abandon(pending, CancellationError())
        }
    }

    /// One sweep every 100 ms per batcher, while pushes wait, answers those that waited
    /// ``maximumWait`` (a timer per push cost every push a task and a timer at thousands a second).
    ///
    /// A dispatch timer, not a sleeping task: the deadline is a promise to the device, and it must
    /// hold while every thread of Swift's pool is busy. A sleeping task waited for a free thread of
    /// that pool, and in a loaded test run a push stayed unanswered for ten seconds past its 0.3 s.
    private func startSweeperIfIdle() {
        let starts = state.withLock { state in
            guard !state.sweeping else { return false }
            state.sweeping = true
            return true
        }
        if starts { scheduleSweep() }
    }

    private func scheduleSweep() {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { [self] in
            if sweep() { scheduleSweep() }
        }
    }

    /// Answers the pushes past their deadline; whether any push is left waiting (else the sweeper
    /// stops, and the next push starts it again).
    private func sweep() -> Bool {
        let now = ContinuousClock.now
        let (expired, empty) = state.withLock { state -> ([PendingPush], Bool) in
            let waiting = state.queue + state.taken.filter(\.isQueued)
            let expired = waiting.filter { now - $0.enqueued >= maximumWait }
            if waiting.count == expired.count { state.sweeping = false }
            return (expired, waiting.count == expired.count)
        }
        for pending in expired where abandon(pending, DatabaseUnavailable()) { ServerMetrics.shedWaited.increment() }
        return !empty
    }

    /// Answers a push no writer has started with `error`, and takes it out of the queue.
    @discardableResult
    private func abandon(_ pending: PendingPush, _ error: any Error) -> Bool {
        guard pending.abandon(error) else { return false }
        let queued = state.withLock { state in
            state.queue.removeAll { $0 === pending }
            state.taken.removeAll { $0 === pending }
            return state.queue.count
        }
        ServerMetrics.queued.record(queued)
        return true
    }

    /// One writer: takes the next batch (oldest first, one push per account, none of an account
    /// another writer is writing) until none is left.
    private func write() async {
        while true {
            let batch: [PendingPush]? = state.withLock { state in
                var taken: [PendingPush] = []
                var kept: [PendingPush] = []
                var accounts: Set<AccountKey> = []
                for pending in state.queue {
                    let account = AccountKey(app: pending.request.app, account: pending.request.account)
                    if taken.count < maximumBatch, !state.writing.contains(account), accounts.insert(account).inserted {
                        taken.append(pending)
                    } else {
                        kept.append(pending)
                    }
                }
                guard !taken.isEmpty else {
                    // What is left waits for an account being written; that account's writer takes it next.
                    state.writers -= 1
                    return nil
                }
                state.queue = kept
                state.taken += taken
                state.writing.formUnion(accounts)
                return taken
            }
            guard let batch else { return }
            ServerMetrics.queued.record(state.withLock { $0.queue.count })
            await write(batch)
            state.withLock { state in
                for pending in batch { state.writing.remove(AccountKey(app: pending.request.app, account: pending.request.account)) }
                let written = Set(batch.map(ObjectIdentifier.init))
                state.taken.removeAll { written.contains(ObjectIdentifier($0)) }
            }
        }
    }

    /// Writes `batch` on one connection. Each push is claimed only once the connection is held, just
    /// before its statement is sent: one whose deadline passed meanwhile (PostgreSQL slow to hand
    /// out a connection) was answered 503 and is not written.
    private func write(_ batch: [PendingPush]) async {
        do {
            try await writer.client.withConnection { connection in
                let claimed = batch.filter { $0.claim() }
                guard !claimed.isEmpty else { return }
                // Retired once the batch is done (the pushes of a refused batch are written again
                // one by one on it first): see ``PushWriter/retire(_:)``.
                var retire = false
                defer { if retire { PushWriter.retire(connection) } }
                let now = ContinuousClock.now
                for pending in claimed { ServerMetrics.queueWait.recordNanoseconds(Int64((now - pending.enqueued).nanoseconds)) }
                ServerMetrics.batchSize.record(claimed.count)
                ServerMetrics.writersBusy.increment(by: 1)
                defer { ServerMetrics.writersBusy.decrement(by: 1) }
                if claimed.count == 1 {
                    let pending = claimed[0]
                    do { pending.answer(.success(try await writer.one(pending.request, on: connection))) } catch {
                        retire = retire || PushWriter.mayHaveFailedPreparing(error)
                        pending.answer(.failure(error))
                    }
                    return
                }
                do {
                    let acks = try await writer.many(claimed.map(\.request), on: connection)
                    for (pending, ack) in zip(claimed, acks) { pending.answer(.success(ack)) }
                } catch let error as PSQLError where error.code == .server && !DatabaseUnavailable.covers(error) {
                    retire = PushWriter.mayHaveFailedPreparing(error)
                    // PostgreSQL refused the statement (not the connection): find the push it refused by
                    // writing each on its own, so the others are stored and only that one fails.
                    for pending in claimed {
                        do { pending.answer(.success(try await writer.one(pending.request, on: connection))) } catch {
                            retire = retire || PushWriter.mayHaveFailedPreparing(error)
                            pending.answer(.failure(error))
                        }
                    }
                } catch {
                    for pending in claimed { pending.answer(.failure(error)) }
                }
            }
        } catch {
            // No connection: nothing was sent; every push not answered yet fails.
            for pending in batch where pending.claim() { pending.answer(.failure(error)) }
        }
    }
}

/// The store refuses a push at once: its queue is full (`503` with `Retry-After`).
public struct Overloaded: Error {}

extension Duration {
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}
