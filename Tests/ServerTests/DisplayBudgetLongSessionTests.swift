import Foundation
import TestThreads
import Testing
import TourFixtures

/// The display budget in a long session: an app kept open overnight learns, before an event that
/// may start a flow, what the account's other devices started meanwhile (Docs/DisplayBudget.md).
@Suite("Display budget in a long session", .ownThread)
struct DisplayBudgetLongSessionTests {
    /// A `play` session kept open, fed one line at a time: an app left running.
    final class OpenSession {
        let process = Process()
        let input: Pipe
        let output: Pipe
        private var buffer = Data()

        init(_ executable: String, arguments: [String], environment: [String: String]) throws {
            let process = process
            process.executableURL = BuiltExecutables.folder.appendingPathComponent(executable)
            process.arguments = arguments
            process.environment = environment
            (input, output) = try ChildProcess.runWithPipes(process)
        }

        /// Sends `line` and returns what it printed: one JSON document (`play --json` prints one
        /// line per command).
        func send(_ line: String) throws -> String {
            input.fileHandleForWriting.send(line + "\n")
            return try readLine()
        }

        func readLine() throws -> String {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    return line
                }
                let chunk = output.fileHandleForReading.readChunk() ?? Data()
                if chunk.isEmpty {
                    throw HarnessFailure("the session ended: \(String(decoding: buffer, as: UTF8.self))")
                }
                buffer.append(chunk)
            }
            throw HarnessFailure("no answer within 60 s")
        }

        func close() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    /// A tablet's Carrier Wave left open overnight (its intro skipped at night), the phone's Mood
    /// Tracker starting its tutorial in the morning, and 45 minutes later the tablet, still the same
    /// session, opening POTA Activations: within the account's hour of cool-down, it is held. The
    /// session exchanged counts when it started, twelve hours before; it exchanges again before
    /// the event because its last exchange is older than five minutes.
    @Test func anAppKeptOpenOvernightHearsTheMorningsStartBeforeItStartsOne() throws {
        let server = try ServerProcess(environment: DisplayBudgetAcrossDevicesTests.family)
        let budget = "perDay=3,coolDown=3600"
        let phone = try DisplayBudgetAcrossDevicesTests.FamilyDevice(
            ["moodtracker"], account: "ann", server: server, budget: budget)
        let tablet = try DisplayBudgetAcrossDevicesTests.FamilyDevice(
            ["carrierwave"], account: "ann", server: server, budget: budget)

        var environment = BuiltExecutables.environment
        environment["ONBOARDING_DB"] = tablet.folder.appendingPathComponent("carrierwave.sqlite").path
        environment["ONBOARDING_BUDGET_DB"] = tablet.budgetFile
        environment["ONBOARDING_BUDGET"] = budget
        environment["ONBOARDING_CLOCK"] = "virtual"
        environment["ONBOARDING_SERVER"] = server.url.absoluteString
        environment["ONBOARDING_TOKEN"] = try server.token(account: "ann", app: "carrierwave")
        let session = try OpenSession(
            "carrierwave", arguments: ["play", "--json", "--user", "ann"], environment: environment)
        defer { session.close() }
        // Evening: the intro starts at launch and is skipped; the app stays open all night.
        #expect(try session.send("launch").contains("intro"))
        _ = try session.send("do skip")
        _ = try session.send("wait 43200")
        #expect(try tablet.starts().count == 1)

        // Morning, on the phone: Mood Tracker's tutorial starts (its own process, as a phone's app).
        let morning = try phone.run("moodtracker", ["play"], stdin: "wait 43200\nlaunch\nwait 1\n")
        #expect(morning.stdout.contains("Swipe to Select"), "\(morning.stdout) \(morning.stderr)")
        #expect(try server.sql("SELECT sum(starts) FROM budget_counts WHERE account = 'ann'") == ["2"])

        // 45 minutes later the tablet's same session opens POTA Activations: held by the cool-down.
        _ = try session.send("wait 2700")
        let visit = try session.send("visit potaActivations")
        #expect(!visit.contains("pota_activations\",\"step"), "\(visit)")
        let explained = try session.send("explain")
        #expect(explained.contains("cool-down"), "\(explained)")
        let startsThen = try tablet.starts()
        #expect(startsThen.count == 1, "the tablet started a flow within the account's hour: \(startsThen)")
        // An hour after the phone's start it may.
        _ = try session.send("wait 1200")
        _ = try session.send("visit potaActivations")
        #expect(try tablet.starts().count == 2)
    }
}
