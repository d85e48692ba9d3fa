import Foundation
import Synchronization
import TestThreads
import Testing
import TourFixtures

/// The command line's database commands print only what they are for: their pool runs before
/// their first query, so PostgresNIO never warns that `PostgresClient.run()` was not called yet
/// (a race `migrate` lost in 2 runs of 7, and the other commands hid by silencing the pool).
@Suite("Commands start their pool first", .ownThread)
struct CommandStartTests {
    @Test func noCommandWarnsThatItsPoolDidNotRun() throws {
        let server = try ServerProcess()
        _ = try server.credential("olga", role: "owner", app: "growth")
        // Twenty runs of each in CI's full run; five here (the race lost one run in three).
        let runs = Soak.isFull ? 20 : 5
        let commands = [
            ["migrate"], ["people", "list"], ["keys", "list", "--app", "growth"],
            ["enrollment-keys", "list", "--app", "growth"],
            ["audit", "--limit", "1"],
        ]
        for command in commands {
            for run in 1...runs {
                let result = try server.command(command)
                #expect(result.status == 0, "\(command) run \(run): \(result.stderr)")
                let printed = result.stdout + result.stderr
                #expect(
                    !printed.contains("hasn't been called yet"), "\(command) run \(run) warned: \(printed)")
                #expect(!printed.contains("warning"), "\(command) run \(run): \(printed)")
            }
        }
    }

    /// With PostgreSQL not answering (a port nobody listens on), a database command gives up after
    /// its wait (15 s) with one line that says what did not answer and what to check, not after
    /// the pool's minute of retries with a line per attempt and the pool's internal error.
    @Test func aCommandWhoseDatabaseDoesNotAnswerSaysSoWithinItsWait() throws {
        let nobody = ServerProcess.freePort()
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARDING_SERVER_SECRET"] = ServerProcess.secret
        environment["DATABASE_URL"] = "postgres://onboarding@127.0.0.1:\(nobody)/nothing"
        // Both at once (each waits its 15 s).
        let commands = [["migrate"], ["people", "list"]]
        let results = Mutex([Int: (Shell.Result, Duration)]())
        let unreachable = environment
        DispatchQueue.concurrentPerform(iterations: commands.count) { index in
            let started = ContinuousClock.now
            let result = try? Shell.run(
                BuiltExecutables.folder.appendingPathComponent("onboarding-server").path, commands[index],
                environment: unreachable)
            if let result { results.withLock { $0[index] = (result, ContinuousClock.now - started) } }
        }
        for (index, command) in commands.enumerated() {
            let (result, took) = try #require(results.withLock { $0[index] }, "\(command) ran")
            #expect(result.status == 1, "\(command)")
            #expect(
                result.stderr.contains("PostgreSQL did not answer within 15 s"),
                "\(command): \(result.stderr)")
            #expect(result.stderr.contains("DATABASE_URL"), "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("ConnectionPoolError"), "\(command): \(result.stderr)")
            #expect(
                !(result.stdout + result.stderr).contains("psql_error"), "\(command): no line per attempt")
            #expect(took >= .seconds(14) && took < .seconds(45), "\(command) took \(took)")
        }
    }
}
