/// The push queue's lifecycle as a value: pushes waiting for a writer, batches being leased a
/// connection and written, their deadlines, and shutdown. Each mutating function takes what
/// happened (a push arrived, a batch's connection came, a write ended, time passed, the server is
/// stopping) and returns what the caller must do (``Action``): lease a connection, write these
/// pushes, answer those, abandon a batch, stop. It reads no clock and does no I/O, so it is tested
/// over every state and over random sequences without PostgreSQL or threads
/// (PushQueueTests); ``PushBatcher`` is the thin shell that performs the actions.
///
/// The promises it keeps, whatever PostgreSQL does:
/// - Every push is answered exactly once.
/// - A push no writer started is answered by `maximumWait` after it arrived; a push being written
///   by `maximumWait + statementLimit` (PostgreSQL cancels the statement at `statementLimit`; if
///   its answer does not come, the batch is abandoned and its connection closed).
/// - A push is answered ``Answer/committed`` only when its transaction committed. An answer
///   whose ``Reason/mayHaveCommitted`` is false means nothing of it was stored; one whose reason
///   may have committed is answered so only because PostgreSQL did not confirm by the deadline
///   (a push is keyed by device and sequence, so sending it again stores nothing twice).
/// - At most `writers` batches hold a writer; a writer is given back when its batch ends or is
///   abandoned, never kept by a batch that will not end.
/// - Pushes of one account are never in two batches at once (their rows never deadlock, and an
///   account's pushes are written in order).
/// - After ``shutdown(now:)`` nothing new is taken, and ``Action/stopped`` comes once every batch
///   has ended or been abandoned, by the last deadline at the latest.
package struct PushQueue: Hashable, Sendable {
    private struct Waiting: Hashable, Sendable {
        var id: PushID
        var account: Account
        var arrived: Instant
    }

    private enum Phase: Hashable, Sendable {
        /// Waiting for its connection: every push is still unwritten.
        case leasing
        /// `current` is being written; `rest` will be written one at a time after it (a batch
        /// whose data PostgreSQL refused is written push by push, so one push fails only itself).
        case writing(current: [PushID], rest: [PushID])
    }

    private struct Batch: Hashable, Sendable {
        /// Its pushes not answered yet.
        var pushes: [PushID: Waiting]
        var accounts: Set<Account>
        var phase: Phase
    }

    private enum Lifecycle: Hashable, Sendable {
        case running, shuttingDown, stopped
    }

    package let configuration: Configuration
    /// Pushes waiting for a writer, oldest first.
    private var queue: [Waiting] = []
    /// Batches holding a writer.
    private var batches: [BatchID: Batch] = [:]
    /// Accounts with a push in a batch.
    private var writing: Set<Account> = []
    private var lifecycle = Lifecycle.running
    /// Since when the oldest waiting push has been older than the target delay, at every arrival.
    private var behindSince: Instant?
    private var nextPush: UInt64 = 0
    private var nextBatch: UInt64 = 0

    package init(_ configuration: Configuration) { self.configuration = configuration }

    // MARK: - What the shell reads

    package var queued: Int { queue.count }
    package var writersBusy: Int { batches.count }
    package var isStopped: Bool { lifecycle == .stopped }

    /// When ``tick(now:)`` must next be called for every deadline to hold; nil while nothing waits.
    package var nextDeadline: Instant? {
        var earliest = queue.first.map { $0.arrived + configuration.maximumWait }
        for batch in batches.values {
            for push in batch.pushes.values {
                let due: Instant
                switch batch.phase {
                case .leasing: due = push.arrived + configuration.maximumWait
                case .writing(let current, _):
                    due =
                        current.contains(push.id)
                        ? configuration.deadline(arrived: push.arrived)
                        : push.arrived + configuration.maximumWait
                }
                earliest = min(earliest ?? due, due)
            }
        }
        return earliest
    }

    /// Whether a push arriving now would be taken (not shed at once): what the server checks
    /// before it reads a push's body, so a shed push costs it little.
    package func admits(now: Instant) -> Bool {
        guard lifecycle == .running, queue.count < configuration.maximumQueued else { return false }
        guard let target = configuration.targetQueueDelay, queue.count >= configuration.maximumBatch,
            let oldest = queue.first,
            now - oldest.arrived > target, let since = behindSince
        else { return true }
        return now - since < configuration.sheddingInterval
    }

    // MARK: - Inputs

    /// A push arrived for `account`: its id, and what to do. `arrived` is when its request came
    /// (its deadline runs from there; the shell may have read the app's plan since), at most `now`.
    package mutating func pushArrived(for account: Account, arrived: Instant? = nil, now: Instant) -> (
        PushID, [Action]
    ) {
        var actions = expire(now: now)
        let id = PushID(value: nextPush)
        nextPush += 1
        guard lifecycle == .running else {
            actions.append(.answer([id], .unavailable(.shuttingDown)))
            return (id, actions)
        }
        guard queue.count < configuration.maximumQueued, !isFallingBehind(now: now) else {
            actions.append(.answer([id], .unavailable(.queueFull)))
            return (id, actions)
        }
        let push = Waiting(id: id, account: account, arrived: min(arrived ?? now, now))
        guard push.arrived + configuration.maximumWait > now else {
            actions.append(.answer([id], .unavailable(.waitedForWriter)))
            return (id, actions)
        }
        // In order of arrival: nearly always at the end.
        let index = queue.lastIndex { $0.arrived <= push.arrived }.map { $0 + 1 } ?? 0
        queue.insert(push, at: index)
        actions += startBatches()
        return (id, actions)
    }

    /// The batch's connection came: write what is left of it (or give the connection back when
    /// the batch was abandoned meanwhile).
    package mutating func connectionLeased(_ batch: BatchID, now: Instant) -> [Action] {
        var actions = expire(now: now)
        guard var leased = batches[batch], leased.phase == .leasing else {
            return actions + [.release(batch)]
        }
        let pushes = leased.pushes.keys.sorted()
        leased.phase = .writing(current: pushes, rest: [])
        batches[batch] = leased
        actions.append(.write(batch, pushes))
        return actions
    }

    /// The pool gave the batch no connection: nothing was sent.
    package mutating func leaseFailed(_ batch: BatchID, now: Instant) -> [Action] {
        var actions = expire(now: now)
        guard let failed = batches[batch] else { return actions }
        let pushes = failed.pushes.keys.sorted()
        end(batch)
        if !pushes.isEmpty { actions.append(.answer(pushes, .unavailable(.noConnection))) }
        return actions + startBatches() + stopIfDone()
    }

    /// The batch's write of its current pushes ended with `outcome`.
    package mutating func written(_ batch: BatchID, _ outcome: WriteOutcome, now: Instant) -> [Action] {
        guard var written = batches[batch], case .writing(let current, var rest) = written.phase else {
            return []
        }
        var actions: [Action] = []
        let unanswered = current.filter { written.pushes[$0] != nil }
        func answer(_ pushes: [PushID], _ answer: Answer) {
            guard !pushes.isEmpty else { return }
            for push in pushes { written.pushes[push] = nil }
            actions.append(.answer(pushes, answer))
        }
        switch outcome {
        case .committed:
            answer(unanswered, .committed)
        case .refusedData where current.count > 1:
            // Which push PostgreSQL refused is not known: each is written on its own, so the others
            // are stored and only that one fails.
            rest = current + rest
        case .refusedData:
            answer(unanswered, .refused)
        case .failed:
            answer(unanswered, .failed)
        case .rolledBack:
            // PostgreSQL is not writing now (a lock, a cancel): the rest are not tried, only answered.
            answer(unanswered, .unavailable(.rolledBack))
            answer(rest.filter { written.pushes[$0] != nil }, .unavailable(.rolledBack))
            rest = []
        case .connectionLost:
            answer(unanswered, .unavailable(.connectionLost))
            answer(rest.filter { written.pushes[$0] != nil }, .unavailable(.noConnection))
            rest = []
        }
        // The rest are written one at a time, each only while its wait lasts (so each is answered
        // by its deadline however many are left).
        rest = rest.filter { written.pushes[$0] != nil }
        let late = rest.filter { push in
            written.pushes[push].map { $0.arrived + configuration.maximumWait <= now } ?? false
        }
        answer(late, .unavailable(.waitedForWriter))
        rest = rest.filter { written.pushes[$0] != nil }
        if let next = rest.first {
            written.phase = .writing(current: [next], rest: Array(rest.dropFirst()))
            batches[batch] = written
            return actions + expire(now: now) + [.write(batch, [next])]
        }
        batches[batch] = written
        end(batch)
        actions.append(.release(batch))
        return actions + expire(now: now) + startBatches() + stopIfDone()
    }

    /// Time passed: answers every push past its deadline.
    package mutating func tick(now: Instant) -> [Action] {
        expire(now: now) + stopIfDone()
    }

    /// The caller of `push` went away. A push no writer took is answered and dropped; one being
    /// written is still answered by its transaction (the answer goes nowhere).
    package mutating func cancelled(_ push: PushID, now: Instant) -> [Action] {
        var actions = expire(now: now)
        if let index = queue.firstIndex(where: { $0.id == push }) {
            queue.remove(at: index)
            actions.append(.answer([push], .cancelled))
            return actions + stopIfDone()
        }
        for (id, var batch) in batches where batch.phase == .leasing && batch.pushes[push] != nil {
            batch.pushes[push] = nil
            batches[id] = batch
            actions.append(.answer([push], .cancelled))
            if batch.pushes.isEmpty { actions += abandon(id) }
            return actions + startBatches() + stopIfDone()
        }
        return actions
    }

    /// The server is stopping: queued pushes and batches still waiting for a connection are
    /// answered now, batches being written may finish until their deadline.
    package mutating func shutdown(now: Instant) -> [Action] {
        var actions = expire(now: now)
        guard lifecycle == .running else { return actions }
        lifecycle = .shuttingDown
        if !queue.isEmpty {
            actions.append(.answer(queue.map(\.id), .unavailable(.shuttingDown)))
            queue = []
        }
        for (id, batch) in batches.sorted(by: { $0.key.value < $1.key.value }) where batch.phase == .leasing {
            actions.append(.answer(batch.pushes.keys.sorted(), .unavailable(.shuttingDown)))
            batches[id]?.pushes = [:]
            actions += abandon(id)
        }
        return actions + stopIfDone()
    }

    // MARK: - Transitions

    /// Whether the writers do not keep up: more than a batch waits and the oldest has waited past
    /// ``Configuration/targetQueueDelay`` at every arrival for ``Configuration/sheddingInterval``
    /// (CoDel's signal: the queue's sojourn time, read at arrival).
    private mutating func isFallingBehind(now: Instant) -> Bool {
        guard let target = configuration.targetQueueDelay, queue.count >= configuration.maximumBatch,
            let oldest = queue.first, now - oldest.arrived > target
        else {
            behindSince = nil
            return false
        }
        let since = behindSince ?? now
        behindSince = since
        return now - since >= configuration.sheddingInterval
    }

    /// Answers every push past its deadline; abandons a batch left with nothing to answer.
    private mutating func expire(now: Instant) -> [Action] {
        var actions: [Action] = []
        let wait = configuration.maximumWait
        // The queue is in order of arrival.
        let expired = queue.prefix { $0.arrived + wait <= now }
        if !expired.isEmpty {
            actions.append(.answer(expired.map(\.id), .unavailable(.waitedForWriter)))
            queue.removeFirst(expired.count)
        }
        var freed = false
        for id in batches.keys.sorted(by: { $0.value < $1.value }) {
            guard var batch = batches[id] else { continue }
            switch batch.phase {
            case .leasing:
                let late = batch.pushes.values.filter { $0.arrived + wait <= now }.map(\.id).sorted()
                guard !late.isEmpty else { continue }
                for push in late { batch.pushes[push] = nil }
                batches[id] = batch
                actions.append(.answer(late, .unavailable(.waitedForWriter)))
                if batch.pushes.isEmpty {
                    actions += abandon(id)
                    freed = true
                }
            case .writing(let current, let rest):
                let late = current.filter { push in
                    batch.pushes[push].map { configuration.deadline(arrived: $0.arrived) <= now } ?? false
                }
                let lateRest = rest.filter { push in
                    batch.pushes[push].map { $0.arrived + wait <= now } ?? false
                }
                guard !late.isEmpty || !lateRest.isEmpty else { continue }
                for push in late + lateRest { batch.pushes[push] = nil }
                batch.phase = .writing(current: current, rest: rest.filter { batch.pushes[$0] != nil })
                batches[id] = batch
                if !late.isEmpty { actions.append(.answer(late, .unavailable(.deadline))) }
                if !lateRest.isEmpty { actions.append(.answer(lateRest, .unavailable(.waitedForWriter))) }
                guard current.allSatisfy({ batch.pushes[$0] == nil }) else { continue }
                // Its write is past every deadline it serves: the writer goes to other pushes, and
                // those this batch had still to write go back to the queue, in order of arrival.
                let requeued = batch.pushes.values.sorted { ($0.arrived, $0.id) < ($1.arrived, $1.id) }
                batches[id]?.pushes = [:]
                actions += abandon(id)
                requeue(requeued)
                freed = true
            }
        }
        if freed { actions += startBatches() }
        return actions
    }

    /// Takes batches out of the queue while writers are free: oldest first, at most one push per
    /// account, none of an account another batch is writing.
    private mutating func startBatches() -> [Action] {
        guard lifecycle == .running else { return [] }
        var actions: [Action] = []
        while batches.count < configuration.writers, !queue.isEmpty {
            var taken: [PushID: Waiting] = [:]
            var accounts: Set<Account> = []
            var kept: [Waiting] = []
            kept.reserveCapacity(queue.count)
            for push in queue {
                if taken.count < configuration.maximumBatch, !writing.contains(push.account),
                    accounts.insert(push.account).inserted
                {
                    taken[push.id] = push
                } else {
                    kept.append(push)
                }
            }
            // What is left waits for an account being written; that batch's end starts the next.
            guard !taken.isEmpty else { break }
            queue = kept
            let id = BatchID(value: nextBatch)
            nextBatch += 1
            batches[id] = Batch(pushes: taken, accounts: accounts, phase: .leasing)
            writing.formUnion(accounts)
            actions.append(.lease(id))
        }
        return actions
    }

    private mutating func abandon(_ batch: BatchID) -> [Action] {
        end(batch)
        return [.abandon(batch)]
    }

    private mutating func end(_ batch: BatchID) {
        guard let ended = batches.removeValue(forKey: batch) else { return }
        writing.subtract(ended.accounts)
    }

    private mutating func requeue(_ pushes: [Waiting]) {
        guard !pushes.isEmpty else { return }
        if lifecycle != .running {
            // Nothing new is taken while stopping: they cannot be written any more.
            queue += pushes
            return
        }
        queue = (queue + pushes).sorted { ($0.arrived, $0.id) < ($1.arrived, $1.id) }
    }

    private mutating func stopIfDone() -> [Action] {
        guard lifecycle == .shuttingDown else { return [] }
        var actions: [Action] = []
        if !queue.isEmpty {
            actions.append(.answer(queue.map(\.id), .unavailable(.shuttingDown)))
            queue = []
        }
        guard batches.isEmpty else { return actions }
        lifecycle = .stopped
        return actions + [.stopped]
    }
}
