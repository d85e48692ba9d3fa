import Logging
import OnboardingServer
import PostgresNIO
import ServerDatabase
import TestThreads
import Testing

/// A connection goes back to the pool with nothing of its last user on it: the next request on it
/// runs as if it were the first.
@Suite("A connection given back clean", .ownThread)
struct ConnectionHygieneTests {
    /// On a pool that also writes, each read is a `READ ONLY` transaction. One cancelled at its
    /// deadline while its statement runs must still be rolled back: a connection given back to the
    /// pool inside an aborted transaction answered every later read on it "current transaction is
    /// aborted" (SQLSTATE 25P02), a 500 for the dashboard's studio.
    @Test func aReadCancelledAtItsDeadlineLeavesItsConnectionClean() async throws {
        var logger = Logger(label: "read-deadline")
        logger.logLevel = .critical
        let url = try DatabaseURL(try TestPostgres.freshDatabase())
        // One connection, so the read after is on the connection the abandoned one held.
        let client = PostgresClient(
            configuration: url.clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
        let reads = ReadOnlyDatabase(sharing: client, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            for attempt in 1...3 {
                await #expect(throws: DatabaseUnavailable.self, "attempt \(attempt)") {
                    try await reads.read(within: .milliseconds(200)) { connection, logger in
                        try await connection.query("SELECT pg_sleep(2)", logger: logger)
                    }
                }
                // Then a read with time enough (a loaded machine runs the abandoned read's clean-up
                // late): it answers, on that same connection.
                let answer = try await reads.read(within: .seconds(30)) { connection, logger in
                    var inTransaction = ""
                    for try await (one, state) in try await connection.query(
                        "SELECT 1, (SELECT state FROM pg_stat_activity WHERE pid = pg_backend_pid())",
                        logger: logger
                    ).decode((Int, String).self) {
                        inTransaction = "\(one) \(state)"
                    }
                    return inTransaction
                }
                #expect(answer == "1 active", "attempt \(attempt): \(answer)")
            }
            group.cancelAll()
        }
    }

    /// A task started inside a write's body inherits its transaction (a task-local). When it
    /// writes after that body ended, it must write in a transaction of its own: the connection it
    /// would join is back in the pool, here inside another request's read-only transaction. (The
    /// catalog store's admission of held facts did so, and a dashboard page read in the aborted
    /// transaction it left, answering 500.)
    @Test func aWriteStartedInsideAnotherThatRunsAfterItWritesOnItsOwn() async throws {
        var logger = Logger(label: "transaction-hygiene")
        logger.logLevel = .critical
        let urlText = try TestPostgres.freshDatabase()
        let url = try DatabaseURL(urlText)
        _ = try TestPostgres.sql("CREATE TABLE marks (id int PRIMARY KEY)", on: urlText)
        // One connection: the later read is on the connection the first write used.
        let client = PostgresClient(
            configuration: url.clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
        // Patient bounds: what this test checks is the transaction the later write takes, not its
        // wait for the one connection, which the suite's load can pass.
        let writes = WritableDatabase(client: client, logger: logger, bounds: .patient)
        let reads = ReadOnlyDatabase(sharing: client, logger: logger)
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            let later = try await writes.write { connection, logger in
                try await connection.query("INSERT INTO marks VALUES (1)", logger: logger)
                // Started here, run after this write committed.
                return Task {
                    await gate.first { _ in true }
                    _ = try await writes.write { connection, logger in
                        try await connection.query("INSERT INTO marks VALUES (2)", logger: logger)
                    }
                }
            }
            // Another request's read holds the connection, in its read-only transaction, when the
            // later write runs.
            async let read: Int = reads.read(within: .seconds(20)) { connection, logger in
                open.yield()
                open.finish()
                try await connection.query("SELECT pg_sleep(0.5)", logger: logger)
                var one = 0
                for try await value in try await connection.query("SELECT 1", logger: logger).decode(Int.self)
                {
                    one = value
                }
                return one
            }
            let laterResult = await later.result
            let readResult = try await read
            #expect(readResult == 1)
            #expect(throws: Never.self, "the later write") { try laterResult.get() }
            #expect(try TestPostgres.sql("SELECT id FROM marks ORDER BY id", on: urlText) == ["1", "2"])
            group.cancelAll()
        }
    }
}
