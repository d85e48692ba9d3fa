import Foundation
import TestThreads
import Testing
import TourFixtures

/// Sync that never jams: what the server refuses is refused at the device first, and a
/// row the server still refuses (a rule the device did not know) is set aside while every later
/// row, and the account's record, reaches the server. Real `growth` processes, a real server.
@Suite("Sync that never jams", .ownThread)
struct NeverJamTests {
    /// The 70-character app version and a flow id outside the rule are refused where they are written.
    @Test func whatTheServerRefusesIsRefusedAtTheDevice() throws {
        let server = try ServerProcess()
        let phone = try Device("growth", account: "ann", server: server)
        let long = String(repeating: "1.", count: 34) + "70"
        #expect(long.count == 70)
        let launch = try phone.run("launch", "--app-version", long, offline: true)
        #expect(launch.status == 2)
        #expect(launch.stderr.contains("at most 64 characters"))
        #expect(
            !FileManager.default.fileExists(atPath: phone.database.path), "a refused launch wrote nothing")
        #expect(
            try phone.run("launch", "--app-version", String(repeating: "9", count: 64), offline: true).status
                == 0)

        // A catalog whose flow id the server would refuse in every fact does not pass `check`.
        let document = try phone.run("catalog", "--json", offline: true).stdout
        let renamed = document.replacingOccurrences(
            of: "\"id\" : \"app_tour\"", with: "\"id\" : \"app tour\""
        )
        .replacingOccurrences(of: "\"id\":\"app_tour\"", with: "\"id\":\"app tour\"")
        #expect(renamed != document, "the test renamed the flow")
        let file = Scratch.folder.appendingPathComponent("bad-id-\(UUID().uuidString).json")
        try Data(renamed.utf8).write(to: file)
        let check = try phone.run("check", "--catalog", file.path, offline: true)
        #expect(check.status != 0)
        #expect(
            check.stdout.contains("bad_id") || check.stderr.contains("bad_id"),
            "\(check.stdout) \(check.stderr)")
        #expect((check.stdout + check.stderr).contains("ASCII letters, digits"))
    }

    /// A server that refuses one row (a test-only rule standing for a newer server's): the row is
    /// set aside with the reason, every later row and the account's record reach the server, the
    /// account's other device sees the tour finished, and after the server is fixed
    /// `sync --retry-set-aside` sends the row; nothing is lost or stored twice.
    @Test(arguments: ["featureVisited:dashboard", "unnamed:featureVisited:dashboard"])
    func aRowTheServerRefusesIsSetAsideAndTheRestGoOn(rule: String) async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_TEST_REFUSE_EVENT": rule])
        let phone = try Device("growth", account: "ann", server: server)
        try phone.run("do", "completeOnboarding", offline: true)
        try phone.run("visit", "dashboard", offline: true)
        for _ in 0..<5 { try phone.run("do", "next", offline: true) }
        #expect(try phone.flowStatus("app_tour", offline: true) == "completed")
        let rows = try phone.waiting()
        #expect(rows >= 7)

        let sync = try phone.run("sync")
        #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
        #expect(sync.stderr.contains("set aside: the server refused it (400)"))
        #expect(sync.stderr.contains("test-only rule"))
        let status = try phone.status(offline: true)["sync"] as? [String: Any]
        #expect(status?["waiting"] as? Int == 0)
        #expect(status?["setAside"] as? Int == 1)
        #expect((status?["lastSetAsideReason"] as? String)?.contains("test-only rule") == true)
        #expect(
            try phone.run("status", offline: true).stdout.contains(
                "1 journal row set aside, refused by the server"))

        // Every other row is on the server, and the account's record says completed.
        #expect(try server.sql("SELECT count(*) FROM pushes WHERE account = 'ann'") == ["\(rows - 1)"])
        #expect(
            try server.sql(
                "SELECT count(*) FROM pushes WHERE account = 'ann' AND event = 'featureVisited:dashboard'")
                == ["0"])
        #expect(
            try server.sql("SELECT standing FROM account_flows WHERE account = 'ann' AND flow = 'app_tour'")
                == ["completed"])
        let tablet = try Device("growth", account: "ann", server: server)
        try tablet.run("do", "completeOnboarding")
        #expect(!(try tablet.run("visit", "dashboard").stdout.contains("Step 1 of 5")))
        #expect(try tablet.flowStatus("app_tour") == "completed")

        // Later events push by themselves: nothing waits behind the set-aside row.
        try phone.run("do", "completeOnboarding")
        #expect(try phone.waiting() == 0)

        // The server fixed: the row goes again, once.
        server.environment = [:]
        try server.restart()
        let retry = try phone.run("sync", "--retry-set-aside")
        #expect(retry.status == 0, "\(retry.stdout) \(retry.stderr)")
        #expect(retry.stdout.contains("sending 1 set-aside journal row again"))
        #expect((try phone.status(offline: true)["sync"] as? [String: Any])?["setAside"] as? Int == 0)
        let journal = try phone.run("journal", "--json", offline: true).stdout
        let journalRows = try #require(try JSONSerialization.jsonObject(with: Data(journal.utf8)) as? [Any])
            .count
        let device = try #require(
            (try phone.status(offline: true)["sync"] as? [String: Any])?["device"] as? String)
        #expect(
            try server.sql(
                "SELECT count(*) || ' ' || count(DISTINCT seq) FROM pushes WHERE device = '\(device)'") == [
                    "\(journalRows) \(journalRows)"
                ])
        #expect(
            try server.sql(
                "SELECT count(*) FROM pushes WHERE account = 'ann' AND event = 'featureVisited:dashboard'")
                == ["1"])
    }
}
