import Dispatch
import Logging
import PostgresNIO
import Synchronization

/// Where a request reads: a pool whose connections cannot write. A read has a deadline and is
/// abandoned at it (the request is answered 503 while the read is cancelled and left to end),
/// which is harmless only because nothing it does can commit: PostgreSQL itself refuses every
/// write on these connections (SQLSTATE 25006). So the deadline that abandons work exists only
/// here, and a write cannot be given one by mistake: writes go through ``WritableDatabase``,
/// whose answer is always what the transaction did.
///
/// Either a pool of its own whose every transaction is read-only (`default_transaction_read_only`,
/// the server's), or a pool shared with writes, where each read runs in a `READ ONLY`
/// transaction of its own (tools, tests).
public struct ReadOnlyDatabase: Sendable {
    /// How long a device's read may take: under the devices' own 5 s timeout, so they hear a 503
    /// rather than nothing.
    public static let requestDeadline: Duration = .seconds(3)
    /// Reports and pages scan more and may take longer.
    public static let reportDeadline: Duration = .seconds(30)

    public let client: PostgresClient
    /// Which database it reads (`primary`, `replica`), for logs and metrics.
    public let name: String
    let logger: Logger
    /// Whether the pool's connections are read-only by themselves.
    private let readOnlyPool: Bool
    let usage: PoolUsage
    /// Where reads go while this database does not answer (a replica's: the primary's reads).
    public var fallback: Fallback?

    /// Another database to read from while `health` says this one does not answer.
    public final class Fallback: Sendable {
        public let database: ReadOnlyDatabase
        public let health: ReplicaHealth
        public init(_ database: ReadOnlyDatabase, while health: ReplicaHealth) {
            self.database = database
            self.health = health
        }
    }

    /// Whether reads go past every replica of the chain to the last fallback (the primary) now.
    public var isFallingBack: Bool {
        guard let fallback, !fallback.health.isAnswering() else { return false }
        return fallback.database.fallback == nil || fallback.database.isFallingBack
    }

    /// This database and each fallback after it, in the order reads try them, each without its
    /// fallback, with the health that sends reads past it (nil for the last).
    public var chain: [(database: ReadOnlyDatabase, health: ReplicaHealth?)] {
        var alone = self
        alone.fallback = nil
        guard let fallback else { return [(alone, nil)] }
        return [(alone, fallback.health)] + fallback.database.chain
    }

    /// A pool of its own on `configuration`, every transaction read-only. Run ``client`` as a
    /// service.
    public init(
        configuration: PostgresClient.Configuration, name: String, backgroundLogger: Logger, logger: Logger
    ) {
        var configuration = configuration
        configuration.options.additionalStartupParameters.append(("default_transaction_read_only", "on"))
        client = PostgresClient(configuration: configuration, backgroundLogger: backgroundLogger)
        self.name = name
        self.logger = logger
        readOnlyPool = true
        usage = PoolUsage(name)
    }

    /// Reads through `client`, a pool that also writes: each read is a `READ ONLY` transaction.
    public init(sharing client: PostgresClient, name: String = "primary", logger: Logger) {
        self.client = client
        self.name = name
        self.logger = logger
        readOnlyPool = false
        usage = PoolUsage(name)
    }

    /// Runs `read` on a connection, answering by `deadline`: past it, it throws
    /// ``DatabaseUnavailable`` (`deadline`, or `waited_for_connection` when no connection came)
    /// and the read is cancelled. A connection closed under it is `connection_lost`.
    public func read<T: Sendable>(
        within deadline: Duration = Self.requestDeadline,
        _ read: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        if let fallback, !fallback.health.isAnswering() {
            return try await fallback.database.read(within: deadline, read)
        }
        let client = client
        let logger = logger.inRequest
        let readOnlyPool = readOnlyPool
        let usage = usage
        let leased = Flag()
        return try await Deadline.answer(within: deadline) {
            do {
                return try await usage.lease(client) { connection in
                    leased.set()
                    if readOnlyPool { return try await read(connection, logger) }
                    try await connection.query("START TRANSACTION READ ONLY", logger: logger)
                    do {
                        let result = try await read(connection, logger)
                        try await connection.query("COMMIT", logger: logger)
                        return result
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: logger)
                        throw error
                    }
                }
            } catch let error
                where DatabaseUnavailable.covers(error) && !(error is DatabaseUnavailable)
                && !Self.triedToWrite(error)
            {
                throw DatabaseUnavailable.from(error, operation: .read)
            }
        } late: {
            DatabaseUnavailable(.read, reason: leased.isSet ? .deadline : .waitedForConnection)
        }
    }
}

extension ReadOnlyDatabase {
    /// A read that tried to write (SQLSTATE 25006): the server's mistake, answered 500, never 503.
    static func triedToWrite(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "25006"
    }
}

/// A flag set once, read from any thread.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// The first of an operation's result and its deadline, given once: the operation runs in a task
/// of its own, cancelled at the deadline and left to end. (Public for the server's checks that
/// must answer by a deadline whatever PostgreSQL does: readiness, the failover watch.)
public enum Deadline {
    /// Not a task group: a group waits for every child after `cancelAll`, and an operation that
    /// does not stop when cancelled (a query PostgreSQL is still running) held the answer for as
    /// long as it ran. A dispatch timer, not a sleeping task: the deadline holds while every
    /// thread of Swift's pool is busy.
    public static func answer<T: Sendable>(
        within limit: Duration, _ operation: @escaping @Sendable () async throws -> T,
        late: @escaping @Sendable () -> any Error
    ) async throws -> T {
        let answer = Answer<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                answer.wait(continuation)
                let work = Task {
                    do { answer.give(.success(try await operation())) } catch { answer.give(.failure(error)) }
                }
                answer.onGiven { work.cancel() }
                DispatchQueue.global().asyncAfter(
                    deadline: .now() + .nanoseconds(Int(clamping: limit.nanoseconds))
                ) {
                    answer.give(.failure(late()))
                }
            }
        } onCancel: {
            answer.give(.failure(CancellationError()))
        }
    }

    /// One answer, the first given, to one waiter (given before or after it waits).
    public final class Answer<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<T, any Error>?
            var result: Result<T, any Error>?
            var given = false
            var cleanup: (@Sendable () -> Void)?
        }

        private let state = Mutex(State())

        public init() {}

        public func wait(_ continuation: CheckedContinuation<T, any Error>) {
            let ready = state.withLock { state -> Result<T, any Error>? in
                if let result = state.result { return result }
                state.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }

        /// `cleanup` runs once the answer is given (at once if it already was).
        public func onGiven(_ cleanup: @escaping @Sendable () -> Void) {
            let now = state.withLock { state -> Bool in
                if state.given { return true }
                state.cleanup = cleanup
                return false
            }
            if now { cleanup() }
        }

        /// Whether this was the answer (the first given).
        @discardableResult
        public func give(_ result: Result<T, any Error>) -> Bool {
            let (given, continuation, cleanup) = state.withLock {
                state -> (Bool, CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
                guard !state.given else { return (false, nil, nil) }
                state.given = true
                defer {
                    state.continuation = nil
                    state.cleanup = nil
                }
                if state.continuation == nil { state.result = result }
                return (true, state.continuation, state.cleanup)
            }
            continuation?.resume(with: result)
            cleanup?()
            return given
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    public var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
