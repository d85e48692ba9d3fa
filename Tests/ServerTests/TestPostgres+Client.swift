import Logging
import OnboardingServer
import PostgresNIO
import ServerDatabase
import ServerSyncAPI

extension TestPostgres {
    /// `body` with a client of a new database (its URL, and the client's logger at `logLevel`);
    /// the client runs while `body` does and stops after it. `migrated`: with the newest schema (a
    /// copy of the migrated template, ``migratedDatabase()``); else empty, for a test of the
    /// migrations or of SQL of its own.
    static func withClient<Value: Sendable>(
        migrated: Bool, maximumConnections: Int = 2, logLevel: Logger.Level = .error,
        _ body: (PostgresClient, Logger, String) async throws -> Value
    ) async throws -> Value {
        var logger = Logger(label: "test-postgres")
        logger.logLevel = logLevel
        let text = try migrated ? migratedDatabase() : freshDatabase()
        let client = PostgresClient(
            configuration: try DatabaseURL(text).clientConfiguration(maximumConnections: maximumConnections),
            backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self, returning: Value.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client, logger, text)
        }
    }

    /// `body` with a client of a new database with the newest schema (and the client's logger, at
    /// `.error`).
    static func withMigratedClient(
        maximumConnections: Int = 2, _ body: (PostgresClient, Logger) async throws -> Void
    ) async throws {
        try await withClient(migrated: true, maximumConnections: maximumConnections) { client, logger, _ in
            try await body(client, logger)
        }
    }
}

extension TestPostgres {
    /// `write`, sent again while the database answers that nothing was committed (a connection not
    /// given in time, a transaction rolled back at its bound): what a caller does with such an
    /// answer. For writes a test needs done on a machine busy with the whole suite, where the
    /// production bounds (1.5 s for a connection, 5 s for a transaction) can pass; by time, as
    /// ``Patience`` waits.
    @discardableResult
    static func untilCommitted<T>(_ write: () async throws -> T) async throws -> T {
        let giveUp = ContinuousClock.now + Patience.limit
        while true {
            do { return try await write() } catch let error as DatabaseUnavailable
                where !error.mayHaveCommitted && ContinuousClock.now < giveUp
            {
                try await Task.sleep(for: Patience.pause)
            }
        }
    }
}

extension TestPostgres {
    /// Runs SQL on the database at `url` through psql; rows as lines.
    static func sql(_ query: String, on url: String) throws -> [String] {
        let result = try Shell.run(psql, [url, "-qtAc", query])
        guard result.status == 0 else { throw HarnessFailure("psql: \(result.stderr)") }
        return result.stdout.split(separator: "\n").map(String.init)
    }
}

extension AccountStore {
    /// A store on the test's own database whose writes wait up to a minute for a connection: the
    /// production bound (1.5 s) is for a server shedding load, and a machine busy with the whole
    /// suite can pass it for a test that is not about it.
    static func patient(client: PostgresClient, logger: Logger) -> AccountStore {
        AccountStore(client: client, logger: logger, writeBounds: .patient)
    }
}

extension WritableDatabase.Bounds {
    /// Bounds of a minute, for tests whose subject is not a bound: on a machine busy with the whole
    /// suite a connection, a statement or a commit can pass the production bounds (1.5 s, 2.5 s,
    /// 2 s) in a test that only needs its write done.
    static var patient: Self {
        var bounds = Self()
        bounds.connectionWait = .seconds(60)
        bounds.transaction = .seconds(60)
        bounds.statement = .seconds(60)
        bounds.lock = .seconds(60)
        bounds.commit = .seconds(60)
        return bounds
    }
}
