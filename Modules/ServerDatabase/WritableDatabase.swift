import Dispatch
import Logging
import PostgresNIO
import Synchronization

/// Where a request writes: each write one transaction, bounded where it runs, whose answer is
/// what the transaction did.
///
/// - The wait for a connection is bounded: past ``Bounds/connectionWait`` the lease is cancelled
///   and nothing was sent (503 `waited_for_connection`).
/// - Every statement runs under PostgreSQL's own `statement_timeout` and `lock_timeout`
///   (`SET LOCAL`): PostgreSQL cancels it and rolls the transaction back (503 `rolled_back`).
/// - A transaction that still runs at ``Bounds/transaction`` is ended by closing its connection
///   before `COMMIT` was sent: rolled back, nothing committed (503 `rolled_back`).
/// - Once `COMMIT` is sent the answer waits for PostgreSQL's confirmation up to
///   ``Bounds/commit`` (a synchronous standby that does not answer holds a commit, and no
///   timeout of PostgreSQL's ends that wait): past it the answer is 503 `commit_unconfirmed`,
///   which says it may have committed, and a request that carries an `Idempotency-Key` is
///   answered, when sent again, with what happened.
///
/// So an error answer means nothing was committed, except `commit_unconfirmed`, which says so.
/// Reads with a deadline that abandons them are ``ReadOnlyDatabase``'s alone.
public struct WritableDatabase: Sendable {
    public struct Bounds: Sendable {
        public var connectionWait: Duration = .milliseconds(1500)
        public var statement: Duration = .milliseconds(2500)
        public var lock: Duration = .milliseconds(2000)
        /// The whole transaction before `COMMIT` is sent.
        public var transaction: Duration = .seconds(5)
        public var commit: Duration = .seconds(2)
        public init() {}

        /// The latest a write is answered, from when it was asked.
        public var total: Duration { connectionWait + transaction + commit }
    }

    public let client: PostgresClient
    let logger: Logger
    public var bounds: Bounds
    let usage: PoolUsage

    public init(client: PostgresClient, name: String = "primary", logger: Logger, bounds: Bounds = Bounds()) {
        self.client = client
        self.logger = logger
        self.bounds = bounds
        usage = PoolUsage("\(name)-writes")
    }

    /// The transaction a task is writing in: a write asked for within another write's body (a
    /// store's write inside a request's) joins it, so one request's changes and its
    /// `Idempotency-Key` commit together.
    ///
    /// Only while that body runs: a task started inside it inherits it (task-locals are copied
    /// into `Task {}`) and may run after it ended, when its connection is back in the pool and
    /// another request's (one found in a read-only transaction of a dashboard page, which then
    /// failed). A write that finds the transaction ended runs in a transaction of its own.
    final class Transaction: Sendable {
        let connection: PostgresConnection
        let logger: Logger
        private let open = Mutex(true)
        init(_ connection: PostgresConnection, _ logger: Logger) {
            self.connection = connection
            self.logger = logger
        }

        /// Whether the body of the write that began it is still running.
        var isOpen: Bool { open.withLock { $0 } }
        func end() { open.withLock { $0 = false } }
    }

    @TaskLocal static var current: Transaction?

    /// Whether the current task is within a write's transaction.
    public static var isWriting: Bool { current?.isOpen ?? false }

    private enum Phase { case leasing, running, committing, done }

    /// One write's phase and connection, shared by its task and its timers.
    private final class Progress: Sendable {
        let phase = Mutex(Phase.leasing)
        let connection = Mutex<PostgresConnection?>(nil)

        /// Moves from `from` to `to`; whether it was in `from`.
        func move(from: Phase, to: Phase) -> Bool {
            phase.withLock { state in
                guard state == from else { return false }
                state = to
                return true
            }
        }

        /// Ends the transaction by closing its connection (rolled back unless COMMIT was sent).
        func close() {
            if let open = connection.withLock({ $0 }) { _ = open.close() as EventLoopFuture<Void> }
        }
    }

    /// Runs `body` in one transaction and commits it; its answer, or ``DatabaseUnavailable`` for
    /// `operation` when it was not committed (or, `commit_unconfirmed`, not confirmed).
    public func write<T: Sendable>(
        _ operation: DatabaseUnavailable.Operation = .write,
        _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        if let ambient = Self.current, ambient.isOpen {
            return try await body(ambient.connection, ambient.logger)
        }
        let client = client
        let logger = logger.inRequest
        let bounds = bounds
        let usage = usage
        let progress = Progress()
        let answer = Deadline.Answer<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                answer.wait(continuation)
                let work = Task {
                    do {
                        let result = try await usage.lease(client) { leased in
                            guard progress.move(from: .leasing, to: .running) else {
                                throw CancellationError()
                            }
                            progress.connection.withLock { $0 = leased }
                            schedule(after: bounds.transaction) {
                                guard progress.phase.withLock({ $0 == .running }) else { return }
                                if answer.give(
                                    .failure(
                                        DatabaseUnavailable(
                                            operation, reason: .rolledBack, cause: TransactionTooLong())))
                                {
                                    progress.close()
                                }
                            }
                            try await leased.query("BEGIN", logger: logger)
                            do {
                                try await leased.query(
                                    """
                                    SELECT set_config('statement_timeout',
                                        \(String(bounds.statement.milliseconds)), true),
                                        set_config('lock_timeout', \(String(bounds.lock.milliseconds)), true)
                                    """, logger: logger)
                                let transaction = Transaction(leased, logger)
                                let result = try await Self.$current.withValue(transaction) {
                                    defer { transaction.end() }
                                    return try await body(leased, logger)
                                }
                                // From here the transaction may commit whatever this process does.
                                guard progress.move(from: .running, to: .committing) else {
                                    throw CancellationError()
                                }
                                schedule(after: bounds.commit) {
                                    guard progress.phase.withLock({ $0 == .committing }) else { return }
                                    if answer.give(
                                        .failure(
                                            DatabaseUnavailable(
                                                operation, reason: .commitUnconfirmed, mayHaveCommitted: true)
                                        ))
                                    {
                                        progress.close()
                                    }
                                }
                                // The future-returning query, for its command tag (``CommitRolledBack``).
                                let tag = try await leased.query("COMMIT", logger: logger).get()
                                    .metadata.command
                                guard tag == "COMMIT" else { throw CommitRolledBack(tag: tag) }
                                progress.phase.withLock { $0 = .done }
                                return result
                            } catch {
                                let sentCommit = progress.phase.withLock { state in
                                    defer { state = .done }
                                    return state == .committing
                                }
                                if !sentCommit { _ = try? await leased.query("ROLLBACK", logger: logger) }
                                throw Self.classify(error, operation: operation, afterCommit: sentCommit)
                            }
                        }
                        answer.give(.success(result))
                    } catch {
                        answer.give(.failure(error))
                    }
                }
                schedule(after: bounds.connectionWait) {
                    guard progress.move(from: .leasing, to: .done) else { return }
                    answer.give(.failure(DatabaseUnavailable(operation, reason: .waitedForConnection)))
                    work.cancel()
                }
            }
        } onCancel: {
            // The caller went away: the write goes on to its end (its answer goes nowhere).
        }
    }

    /// An error of the transaction as the request's answer: PostgreSQL refusing the request (a
    /// constraint, a bad value) stays what it is; a passing cause is ``DatabaseUnavailable``,
    /// `commit_unconfirmed` when the connection went after `COMMIT` was sent.
    static func classify(_ error: any Error, operation: DatabaseUnavailable.Operation, afterCommit: Bool)
        -> any Error
    {
        if error is CancellationError {
            return DatabaseUnavailable(operation, reason: .rolledBack, cause: error)
        }
        guard DatabaseUnavailable.covers(error) else { return error }
        if afterCommit {
            // A commit whose answer did not come: it may have happened.
            return DatabaseUnavailable(
                operation, reason: .commitUnconfirmed, mayHaveCommitted: true, cause: error)
        }
        return DatabaseUnavailable.from(error, operation: operation)
    }
}

/// `COMMIT` answered with another tag than `COMMIT`: PostgreSQL answers `COMMIT` in a transaction
/// that has already failed (a statement's error caught inside a body) with the tag `ROLLBACK` and
/// no error at all. The transaction was rolled back; nothing of it is stored.
struct CommitRolledBack: Error, CustomStringConvertible {
    var tag: String
    var description: String {
        "COMMIT was answered \(tag): a statement of the transaction had failed, and nothing of it is stored"
    }
}

/// A write's transaction ran past its bound before `COMMIT`: its connection was closed.
struct TransactionTooLong: Error, CustomStringConvertible {
    var description: String {
        "the transaction ran past its bound before COMMIT; its connection was closed (rolled back)"
    }
}

private func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
    DispatchQueue.global().asyncAfter(
        deadline: .now() + .nanoseconds(Int(clamping: delay.nanoseconds)), execute: work)
}

extension Duration {
    var milliseconds: Int64 { nanoseconds / 1_000_000 }
}

extension WritableDatabase {
    /// Whether PostgreSQL answers `SELECT 1` on this pool within `limit` (readiness).
    public func answers(within limit: Duration) async -> Bool {
        let client = client
        let logger = logger
        let usage = usage
        do {
            try await Deadline.answer(within: limit) {
                try await usage.lease(client) { connection in
                    for try await _ in try await connection.query("SELECT 1", logger: logger) {}
                }
            } late: {
                DatabaseUnavailable(.read, reason: .deadline)
            }
            return true
        } catch {
            return false
        }
    }
}
