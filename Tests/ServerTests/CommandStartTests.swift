import Foundation
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
            ["migrate"], ["people", "list"], ["keys", "list", "--app", "growth"], ["enrollment-keys", "list", "--app", "growth"],
            ["audit", "--limit", "1"],
        ]
        for command in commands {
            for run in 1...runs {
                let result = try server.command(command)
                #expect(result.status == 0, "\(command) run \(run): \(result.stderr)")
                let printed = result.stdout + result.stderr
                #expect(!printed.contains("hasn't been called yet"), "\(command) run \(run) warned: \(printed)")
                #expect(!printed.contains("warning"), "\(command) run \(run): \(printed)")
            }
        }
    }
}
