import Logging
import PostgresNIO
import ServiceLifecycle

extension PostgresClient {
    /// Runs `body` while the pool runs: `run()` begins first, and `body` only once it has (a lease
    /// before `run()` makes PostgresNIO warn that it was not called yet, a race every command
    /// lost now and then). `run()` ends when `body` does.
    public func running<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let started = SchemaReady()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                started.open()
                await self.run()
                return nil
            }
            await started.wait()
            // `run()` marks the pool running in its first statement; the child is on its way there.
            try await Task.sleep(for: .milliseconds(20))
            do {
                let result = try await body()
                group.cancelAll()
                return result
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }
}

extension PostgresClient {
    /// Returns once PostgreSQL answers a query on this pool (which must be running), trying again
    /// every half second for at most `limit`; throws ``DatabaseDidNotAnswer`` after. Each try is
    /// bounded by what is left: a lease waits for a connection for as long as the pool keeps
    /// failing to open one (about a minute, until PostgresNIO's circuit breaker trips), whatever
    /// the caller meant to wait.
    public func waitUntilAnswering(within limit: Duration, logger: Logger) async throws {
        let giveUp = ContinuousClock.now + limit
        var tries = 0
        while true {
            do {
                let left = max(.milliseconds(100), giveUp - ContinuousClock.now)
                try await Deadline.answer(within: left) {
                    try await self.query("SELECT 1", logger: logger)
                    return ()
                } late: {
                    DatabaseUnavailable(.read, reason: .noConnection)
                }
                return
            } catch {
                tries += 1
                if error is CancellationError { throw error }
                if ContinuousClock.now >= giveUp {
                    throw DatabaseDidNotAnswer(waited: limit, cause: DatabaseUnavailable.describe(error))
                }
                if tries == 1 {
                    logger.warning(
                        "waiting for the database",
                        metadata: ["cause": "\(DatabaseUnavailable.describe(error))"])
                }
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }
}

/// PostgreSQL did not answer within the wait for it (at a server's start, or a command's).
public struct DatabaseDidNotAnswer: Error, CustomStringConvertible {
    public var waited: Duration
    /// The last try's error, on one line.
    public var cause: String

    public var description: String {
        "PostgreSQL did not answer within \(waited.components.seconds) s (the last try: \(cause)); "
            + "check that DATABASE_URL names a running server that this host can reach"
    }
}

/// A pool as one of the server's services that says when it runs (``started``): the migrations
/// lease nothing before.
public struct PoolService: Service {
    public let client: PostgresClient
    public let started = SchemaReady()

    public init(_ client: PostgresClient) { self.client = client }

    public func run() async throws {
        started.open()
        await client.run()
    }

    /// Returns once the pool runs.
    public func waitUntilRunning() async {
        await started.wait()
        try? await Task.sleep(for: .milliseconds(20))
    }
}
