@testable import OnboardingServer
@testable import ServerKit
@testable import ServerPushQueue
@testable import ServerSyncAPI

/// A world around ``PushQueue``: it performs the machine's actions the way ``PushBatcher`` does,
/// with PostgreSQL and the clock as inputs a test chooses (a lease comes or fails, a write
/// commits, rolls back, loses its connection, refuses a push's data or hangs, time passes), and
/// checks the machine's promises after every input. No thread, no database, no clock.
struct PushQueueWorld: Hashable {
    typealias PushID = PushQueue.PushID
    typealias BatchID = PushQueue.BatchID

    enum Input: Hashable, CustomStringConvertible {
        /// A push for `account` reaches the queue `late` after its request came (the plan lookup).
        case arrive(account: Int, late: Duration = .zero)
        case leaseComes(BatchID)
        case leaseFails(BatchID)
        /// The batch's write in flight ends: `commits` says whether its transaction committed
        /// (a write whose connection was lost may have).
        case writeEnds(BatchID, PushQueue.WriteOutcome, commits: Bool)
        /// Time passes by `by`; the shell's timer fires at every deadline on the way.
        case advance(by: Duration)
        case cancel(PushID)
        case shutdown

        var description: String {
            switch self {
            case .arrive(let account, let late):
                late == .zero ? "arrive(a\(account))" : "arrive(a\(account), late: \(late))"
            case .leaseComes(let batch): "leaseComes(\(batch.value))"
            case .leaseFails(let batch): "leaseFails(\(batch.value))"
            case .writeEnds(let batch, let outcome, let commits):
                "writeEnds(\(batch.value), \(outcome), commits: \(commits))"
            case .advance(let by): "advance(\(by))"
            case .cancel(let push): "cancel(\(push.value))"
            case .shutdown: "shutdown"
            }
        }
    }

    struct Push: Hashable {
        var account: Int
        var arrived: Duration
        /// When it reached the queue (`late` after it arrived): no answer can come before.
        var reached: Duration
        var bad: Bool
        var answer: PushQueue.Answer?
        var answeredAt: Duration?
        /// Its rows are in the database.
        var committed = false
        /// It was in a write the machine asked for.
        var written = false
    }

    enum IO: Hashable {
        case leasing
        case leased
        case writing([PushID])
    }

    private(set) var machine: PushQueue
    private(set) var now: Duration = .zero
    private(set) var pushes: [PushID: Push] = [:]
    /// The I/O of every batch the shell runs, abandoned ones included (a closed connection's write
    /// still ends, and may have committed).
    private(set) var io: [BatchID: IO] = [:]
    private(set) var abandoned: Set<BatchID> = []
    private(set) var shutDown = false
    private(set) var stops = 0
    /// Pushes whose data PostgreSQL refuses, by the order they arrive.
    var badPushes: Set<UInt64> = []

    init(_ configuration: PushQueue.Configuration) { machine = PushQueue(configuration) }

    var configuration: PushQueue.Configuration { machine.configuration }
    var unanswered: [PushID] { pushes.filter { $0.value.answer == nil }.keys.sorted() }
    var isQuiet: Bool { io.isEmpty && machine.nextDeadline == nil }

    /// The inputs that make sense now; `accounts` accounts may push.
    func inputs(accounts: Int, steps: [Duration], outcomes: [PushQueue.WriteOutcome]) -> [Input] {
        var inputs: [Input] = (0..<accounts).map { .arrive(account: $0) }
        for (batch, state) in io.sorted(by: { $0.key.value < $1.key.value }) {
            switch state {
            case .leasing:
                inputs += [.leaseComes(batch), .leaseFails(batch)]
            case .leased:
                break
            case .writing:
                for outcome in outcomes {
                    inputs.append(.writeEnds(batch, outcome, commits: outcome == .committed))
                    if outcome == .connectionLost { inputs.append(.writeEnds(batch, outcome, commits: true)) }
                }
            }
        }
        inputs += steps.map { .advance(by: $0) }
        inputs += unanswered.map { .cancel($0) }
        if !shutDown { inputs.append(.shutdown) }
        return inputs
    }

    /// Applies `input`; the first broken promise, if any.
    mutating func apply(_ input: Input) -> String? {
        switch input {
        case .arrive(let account, let late):
            let bad = badPushes.contains(UInt64(pushes.count))
            let arrived = now - late
            // What the server asks before it reads a push's body agrees with what the push meets.
            let admitted = machine.admits(now: now)
            let (id, actions) = machine.pushArrived(
                for: PushQueue.Account(app: "a", account: "a\(account)"), arrived: arrived, now: now)
            guard pushes[id] == nil else { return "\(id) given twice" }
            pushes[id] = Push(account: account, arrived: arrived, reached: now, bad: bad)
            if let broken = perform(actions, after: input) { return broken }
            let shed =
                pushes[id]?.answer == .unavailable(.queueFull)
                || pushes[id]?.answer == .unavailable(.shuttingDown)
            return admitted == shed
                ? "admits said \(admitted), and the push was \(shed ? "" : "not ")shed" : nil
        case .leaseComes(let batch):
            guard io[batch] == .leasing else { return nil }
            io[batch] = .leased
            return perform(machine.connectionLeased(batch, now: now), after: input, for: batch)
        case .leaseFails(let batch):
            guard io[batch] == .leasing else { return nil }
            io[batch] = nil
            return perform(machine.leaseFailed(batch, now: now), after: input)
        case .writeEnds(let batch, var outcome, var commits):
            guard case .writing(let written) = io[batch] else { return nil }
            // PostgreSQL refuses a write holding a push with bad data, whatever else it was to do.
            if written.contains(where: { pushes[$0]?.bad == true }) {
                (outcome, commits) = (outcome == .connectionLost ? .connectionLost : .refusedData, false)
            } else if outcome == .refusedData {
                outcome = .failed
            }
            if commits { for push in written { pushes[push]?.committed = true } }
            if commits,
                let late = written.first(where: { pushes[$0]?.answer.map(Self.saysNotStored) == true }),
                let answer = pushes[late]?.answer
            {
                return
                    """
                    \(late) committed after it was answered \(answer) (which says nothing \
                    was stored)
                    """
            }
            io[batch] = abandoned.contains(batch) ? nil : .leased
            let actions = machine.written(batch, outcome, now: now)
            if abandoned.contains(batch) {
                return actions.isEmpty ? nil : "an abandoned \(batch) answered \(actions)"
            }
            return perform(actions, after: input, for: batch)
        case .advance(let by):
            let until = now + by
            while let next = machine.nextDeadline, next <= until {
                guard next >= now else { return "a deadline \(next) in the past (now \(now))" }
                now = next
                if let broken = perform(machine.tick(now: now), after: input) { return broken }
                if machine.nextDeadline == next { return "a tick at \(next) left its own deadline" }
            }
            now = until
            return perform(machine.tick(now: now), after: input)
        case .cancel(let push):
            return perform(machine.cancelled(push, now: now), after: input)
        case .shutdown:
            shutDown = true
            return perform(machine.shutdown(now: now), after: input)
        }
    }

    private static func saysNotStored(_ answer: PushQueue.Answer) -> Bool {
        switch answer {
        case .committed: false
        case .unavailable(let reason): !reason.mayHaveCommitted
        case .refused, .failed, .cancelled: true
        }
    }

    private mutating func perform(
        _ actions: [PushQueue.Action], after input: Input, for reporting: BatchID? = nil
    ) -> String? {
        for action in actions {
            switch action {
            case .lease(let batch):
                guard io[batch] == nil, !abandoned.contains(batch) else { return "\(batch) leased twice" }
                io[batch] = .leasing
            case .write(let batch, let written):
                guard batch == reporting else {
                    return "a write of \(batch) returned to another input (\(input))"
                }
                guard io[batch] == .leased else { return "a write of \(batch) without its connection" }
                guard !written.isEmpty else { return "an empty write of \(batch)" }
                for push in written {
                    guard let known = pushes[push], known.answer == nil else {
                        return "\(push) written after its answer"
                    }
                    guard known.arrived + configuration.maximumWait > now else {
                        return "\(push) written after its wait"
                    }
                    pushes[push]?.written = true
                }
                let accounts = written.compactMap { pushes[$0]?.account }
                guard accounts.count == written.count else { return "an unknown push written in \(batch)" }
                guard Set(accounts).count == accounts.count else {
                    return "one account twice in a write of \(batch)"
                }
                io[batch] = .writing(written)
            case .answer(let answered, let answer):
                for push in answered {
                    guard let known = pushes[push] else { return "an unknown \(push) answered" }
                    if let first = known.answer { return "\(push) answered twice (\(first), then \(answer))" }
                    if answer == .committed, !known.committed {
                        return "\(push) acknowledged but not committed"
                    }
                    if Self.saysNotStored(answer), known.committed {
                        return "\(push) committed but answered \(answer)"
                    }
                    if known.committed, answer != .committed, !Self.saysNotStored(answer) {
                        // Answered "may have committed": only at its deadline, while its write was out.
                        guard answer == .unavailable(.deadline) || answer == .unavailable(.connectionLost)
                        else {
                            return "\(push) committed, answered \(answer)"
                        }
                    }
                    let limit =
                        known.written
                        ? configuration.deadline(arrived: known.arrived)
                        : known.arrived + configuration.maximumWait
                    guard now <= max(limit, known.reached) else {
                        return "\(push) answered at \(now), past its deadline \(limit)"
                    }
                    pushes[push]?.answer = answer
                    pushes[push]?.answeredAt = now
                }
            case .release(let batch):
                guard batch == reporting, io[batch] == .leased else {
                    return "\(batch) released while \(String(describing: io[batch]))"
                }
                io[batch] = nil
            case .abandon(let batch):
                guard !abandoned.contains(batch), io[batch] != nil else {
                    return "\(batch) abandoned twice or unknown"
                }
                abandoned.insert(batch)
                // A lease cancelled in time never comes; a write in flight still ends.
                if io[batch] == .leasing || io[batch] == .leased { io[batch] = nil }
            case .stopped:
                guard shutDown else { return "stopped without a shutdown" }
                stops += 1
                guard stops == 1 else { return "stopped twice" }
            }
        }
        return invariants()
    }

    /// What must hold between any two inputs.
    private func invariants() -> String? {
        let active = io.filter { !abandoned.contains($0.key) }
        guard active.count <= configuration.writers else {
            return "\(active.count) batches hold a writer, of \(configuration.writers)"
        }
        guard machine.writersBusy == active.count else {
            return "the machine counts \(machine.writersBusy) writers busy, the world \(active.count)"
        }
        guard machine.queued <= configuration.maximumQueued else {
            return "\(machine.queued) queued past the bound"
        }
        var accounts: Set<Int> = []
        for case .writing(let written) in active.values {
            for push in written {
                guard let known = pushes[push], known.answer == nil else { continue }
                guard accounts.insert(known.account).inserted else {
                    return "one account in two batches being written"
                }
            }
        }
        if stops == 1, !unanswered.isEmpty { return "stopped with \(unanswered) unanswered" }
        // Nothing waits past its deadline: the earliest unanswered push's limit is not behind now.
        for push in unanswered {
            guard let known = pushes[push] else { return "an unknown \(push) unanswered" }
            let limit =
                known.written
                ? configuration.deadline(arrived: known.arrived) : known.arrived + configuration.maximumWait
            if now > max(limit, known.reached) { return "\(push) unanswered past its deadline" }
        }
        return nil
    }

    /// Ends every write in flight and lets every deadline pass; then every push must be answered,
    /// and a shutdown must stop.
    mutating func drain(outcome: (BatchID) -> PushQueue.WriteOutcome = { _ in .committed }) -> String? {
        for _ in 0..<10_000 {
            if let (batch, state) = io.min(by: { $0.key.value < $1.key.value }) {
                let input: Input
                switch state {
                case .leasing: input = .leaseComes(batch)
                case .writing:
                    input = .writeEnds(batch, outcome(batch), commits: outcome(batch) == .committed)
                case .leased: return "\(batch) holds a connection with nothing to do"
                }
                if let broken = apply(input) { return broken }
                continue
            }
            guard let next = machine.nextDeadline else { break }
            if let broken = apply(.advance(by: max(.zero, next - now))) { return broken }
        }
        guard unanswered.isEmpty else { return "after draining, \(unanswered) unanswered" }
        if !shutDown, let broken = apply(.shutdown) { return broken }
        for _ in 0..<10_000 where !io.isEmpty {
            guard let (batch, state) = io.min(by: { $0.key.value < $1.key.value }) else { break }
            let input: Input =
                state == .leasing ? .leaseFails(batch) : .writeEnds(batch, .committed, commits: true)
            if let broken = apply(input) { return broken }
        }
        if stops != 1,
            let broken = apply(.advance(by: configuration.maximumWait + configuration.statementLimit))
        {
            return broken
        }
        return stops == 1 ? nil : "shutdown did not stop (\(stops) stops)"
    }
}
