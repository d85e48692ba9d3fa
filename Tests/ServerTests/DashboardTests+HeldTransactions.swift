import Foundation
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

/// PostgreSQL held still from another session, for the tests of what the server does meanwhile
/// (the dashboard's catch-up, load shedding): a psql process holding a transaction or a lock.
extension DashboardTests {
    /// The database a PostgreSQL URL names: its path's last part, without the query.
    static func databaseName(_ url: String) -> String {
        String(url.split(separator: "/").last?.split(separator: "?").first ?? "")
    }

    /// Ends the holder's transaction only (its backend, the one sleeping), leaving every other
    /// session of the database alone: for a test whose own connections wait behind the lock.
    static func releaseHold(on url: String, _ holder: Process) {
        let database = DashboardTests.databaseName(url)
        _ = try? Shell.run(
            TestPostgres.psql,
            [
                url, "-qtAc",
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)' "
                    + "AND pid <> pg_backend_pid() AND query LIKE '%pg_sleep%'",
            ])
        _ = Shell.waitForExit(holder, seconds: 30)
    }

    /// Ends the holding session's backend (PostgreSQL does not notice a gone client mid-sleep).
    static func endHeldTransactions(on url: String, _ holder: Process) {
        holder.terminate()
        let database = DashboardTests.databaseName(url)
        _ = try? Shell.run(
            TestPostgres.psql,
            [
                url, "-qtAc",
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)' AND \
                pid <> pg_backend_pid()
                """,
            ])
    }

    /// A psql session that holds an exclusive lock on `table` for `seconds` (PostgreSQL held still
    /// for every statement that writes it).
    static func holdLock(on url: String, table: String, seconds: Int) throws -> Process {
        try holdTransaction(on: url, seconds: seconds, first: "LOCK TABLE \(table) IN ACCESS EXCLUSIVE MODE;")
    }

    /// A psql session that takes a transaction id and sleeps in it for `seconds`.
    static func holdTransaction(on url: String, seconds: Int, first: String = "") throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPostgres.psql)
        (process.arguments, process.environment) = passwordsMovedToEnvironment(
            [
                url, "-qtAc",
                "BEGIN; \(first) SELECT pg_current_xact_id(); SELECT pg_sleep(\(seconds)); COMMIT;",
            ],
            ProcessInfo.processInfo.environment)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try ChildProcess.spawning { try process.run() }
        // The transaction has its id once pg_stat_activity shows it.
        let database = DashboardTests.databaseName(url)
        for _ in 0..<200 {
            let result = try Shell.run(
                TestPostgres.psql,
                [
                    url, "-qtAc",
                    """
                    SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND backend_xid \
                    IS NOT NULL AND query LIKE '%pg_sleep%'
                    """,
                ])
            if result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1" { return process }
            usleep(50_000)
        }
        process.terminate()
        throw HarnessFailure("the holding transaction on \(database) did not start")
    }
}
