import Foundation
import TestThreads
import Testing
import TourFixtures

/// The dashboard's figures read from a streaming replica (`READ_DATABASE_URL`) while pushes and
/// the catch-up job stay on the primary. A page reads what the replica has at once and, when that
/// is more than a few seconds old, says how old; `/report` waits (bounded) for the replica to
/// replay what the primary had counted when it was asked, and says how stale it is otherwise.
@Suite("The dashboard on a replica", .serialized, .ownThread)
struct ReplicaTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A primary of its own and a streaming standby of it (scripts/dev-postgres start, standby).
    final class Cluster: @unchecked Sendable {
        let folder = Scratch.folder.appendingPathComponent("replica-\(UUID().uuidString)")
        var primary = ""
        var standby = ""

        func script(_ command: String, _ arguments: String...) throws -> String {
            var environment = ProcessInfo.processInfo.environment
            environment["ONBOARDING_PG_DIR"] = folder.path
            let result = try Shell.run(
                ReplicaTests.root.appendingPathComponent("scripts/dev-postgres").path, [command] + arguments,
                environment: environment)
            guard result.status == 0 else {
                throw HarnessFailure("dev-postgres \(command): \(result.stderr)")
            }
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// - Parameter synchronous: the primary's commits wait until the standby has their WAL.
        init(synchronous: Bool = false) throws {
            primary = try script("start").components(separatedBy: "\n").last ?? ""
            standby =
                try (synchronous ? script("standby", "--synchronous") : script("standby")).components(
                    separatedBy: "\n"
                ).last ?? ""
        }

        /// Both hosts in one URL, as a server follows them: the primary first.
        var bothHosts: String {
            let port = { (url: String) in
                url.components(separatedBy: ":").last?.components(separatedBy: "/").first ?? ""
            }
            return
                """
                postgres://onboarding@127.0.0.1:\(port(primary)),127.0.0.1:\(port(standby))/onboarding?ta\
                rget_session_attrs=read-write
                """
        }

        /// The primary dies as a machine does: its postmaster and every backend, with SIGKILL.
        func killPrimary() throws {
            let pid =
                try String(contentsOf: folder.appendingPathComponent("data/postmaster.pid"), encoding: .utf8)
                .split(separator: "\n").first.map(String.init) ?? ""
            // The postmaster first (so it starts no backend), then whatever backends are left; a
            // backend may exit by itself meanwhile.
            _ = try Shell.run("/bin/sh", ["-c", "kill -9 \(pid); pkill -9 -P \(pid); true"])
            // Gone, or a zombie nobody has reaped yet (a container's first process may not reap).
            func alive() -> Bool {
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else {
                    return false
                }
                return stat.split(separator: ")").last?.split(separator: " ").first != "Z"
            }
            for _ in 0..<100 {
                if !alive(), try Shell.run("/usr/bin/pgrep", ["-P", pid]).status != 0 { return }
                usleep(50_000)
            }
            throw HarnessFailure("the primary (pid \(pid)) did not die")
        }

        func sqlOnStandby(_ query: String) throws -> [String] {
            let result = try Shell.run(TestPostgres.psql, [standby, "-qtAc", query])
            guard result.status == 0 else { throw HarnessFailure("psql: \(result.stderr)") }
            return result.stdout.split(separator: "\n").map(String.init)
        }

        deinit { _ = try? script("destroy") }
    }

    static func starts(_ server: ServerProcess, cookie: String) throws -> (started: Int, notice: Bool) {
        let json = try DashboardTests.curl(
            try URL(checking: server.url.absoluteString + "/dashboard?format=json"), cookie: cookie)
        let trend =
            (try JSONSerialization.jsonObject(with: Data(json.body.utf8)) as? [String: Any])?["trend"]
            as? [[String: Any]] ?? []
        let page = try DashboardTests.curl(server.url.appendingPathComponent("dashboard"), cookie: cookie)
        return (
            trend.map { $0["started"] as? Int ?? 0 }.reduce(0, +), page.body.contains("(read from a replica)")
        )
    }

    /// The server's own time for one page, in milliseconds
    /// (``ServerProcess/loggedMilliseconds(requestID:)``).
    static func serverMilliseconds(_ server: ServerProcess, _ url: URL, cookie: String) async throws -> Double
    {
        let id = "timed-\(UUID().uuidString)"
        let answer = try DashboardTests.curl(url, cookie: cookie, headers: ["X-Request-ID: \(id)"])
        #expect(answer.status == 200, "\(answer.status)")
        return try await server.loggedMilliseconds(requestID: id)
    }

    /// `/report`'s starts, summed over the app's flows, and its staleness header; `counted`: asked
    /// again while it says it is stale or busy (`HTTP.counted`), for a figure the test compares.
    static func reportedStarts(
        _ server: ServerProcess, token: String, counted: Bool = false
    ) async throws -> (started: Int, stale: String?) {
        let url = server.url.appendingPathComponent("v1/apps/moodtracker/report")
        let answer =
            counted ? try await HTTP.counted(url, token: token) : try await HTTP.get(url, token: token)
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self).prefix(300))")
        let flows = answer.json["flows"] as? [[String: Any]] ?? []
        return (flows.map { $0["started"] as? Int ?? 0 }.reduce(0, +), answer.staleSeconds)
    }

    @Test func pagesReadFromTheReplicaOnceItHasReplayedAndSayHowStaleOtherwise() async throws {
        let cluster = try Cluster()
        let server = try ServerProcess(
            databaseURL: cluster.primary,
            environment: ["READ_DATABASE_URL": cluster.standby, "LOG_LEVEL": "info"])
        func launch(_ account: String) throws {
            let device = JourneyDashboardTests.virtual(
                try Device("moodtracker", account: account, server: server), kind: "phone")
            for line in [["launch"], ["wait", "0.5"], ["sync"]] { #expect(try device.run(line).status == 0) }
        }
        for index in 0..<3 { try launch("r\(index)") }
        let cookie = try DashboardTests().signIn(server)
        let viewer = try server.credential("vic", role: "viewer", app: "moodtracker")
        // /report waits until the pushes answered before it are counted and replayed.
        let reported = try await Self.reportedStarts(server, token: viewer, counted: true)
        #expect(reported.started == 3)
        #expect(reported.stale == nil)
        // The page then reads the same from the replica, fresh, with no notice.
        let caughtUp = try Self.starts(server, cookie: cookie)
        #expect(caughtUp.started == 3)
        #expect(!caughtUp.notice)
        #expect(try cluster.sqlOnStandby("SELECT pg_is_in_recovery()") == ["t"])

        // The replica stops replaying: a new start is counted on the primary. A page does not
        // wait for the replica: it shows what the replica has at once, and once that is more than
        // five seconds old it says so.
        _ = try cluster.sqlOnStandby("SELECT pg_wal_replay_pause()")
        try launch("r3")
        let behind = try Self.starts(server, cookie: cookie)
        #expect(behind.started == 3)
        let pageTime = try await Self.serverMilliseconds(
            server, URL(string: server.url.absoluteString + "/dashboard?format=json")!, cookie: cookie)
        #expect(pageTime < 1_000, "a page waited for the replica: \(pageTime) ms")
        let stale = try await Patience.untilAnswered({ () async throws -> (started: Int, notice: Bool) in
            try Self.starts(server, cookie: cookie)
        }) { !$0.notice }
        #expect(stale.notice, "a page read from a replica minutes behind did not say so")
        #expect(stale.started == 3)
        #expect(
            try server.sql(
                "SELECT sum(subjects)::int FROM insight_cohorts WHERE split = 'all' AND measure = 'started'")
                == ["4"])
        // /report: its bounded wait, the replica's figure, and how stale it is in a header.
        let reportStarted = Date()
        let staleReport = try await Self.reportedStarts(server, token: viewer)
        #expect(Date().timeIntervalSince(reportStarted) >= 2)
        #expect(staleReport.started == 3)
        #expect(staleReport.stale.flatMap(Int.init) != nil, "\(String(describing: staleReport.stale))")

        // Replaying again: /report has the new start, and then the page too, with no notice.
        _ = try cluster.sqlOnStandby("SELECT pg_wal_replay_resume()")
        let resumedReport = try await Self.reportedStarts(server, token: viewer, counted: true)
        #expect(resumedReport.started == 4)
        #expect(resumedReport.stale == nil)
        let resumed = try await Patience.untilAnswered({ () async throws -> (started: Int, notice: Bool) in
            try Self.starts(server, cookie: cookie)
        }) { $0.notice || $0.started != 4 }
        #expect(resumed.started == 4)
        #expect(!resumed.notice)
    }

    /// A replica that dies is passed over for the primary within seconds: pages and `/report`
    /// answer from the primary, at once, and the page says so (they waited for the dead replica's
    /// connections and answered 503 after 30 s).
    @Test func aDeadReplicaIsPassedOverForThePrimaryAndThePageSaysSo() async throws {
        let cluster = try Cluster()
        let server = try ServerProcess(
            databaseURL: cluster.primary, environment: ["READ_DATABASE_URL": cluster.standby])
        for index in 0..<2 {
            let device = JourneyDashboardTests.virtual(
                try Device("moodtracker", account: "d\(index)", server: server), kind: "phone")
            for line in [["launch"], ["wait", "0.5"], ["sync"]] { #expect(try device.run(line).status == 0) }
        }
        let cookie = try DashboardTests().signIn(server)
        let viewer = try server.credential("vic", role: "viewer", app: "moodtracker")
        #expect(try await Self.reportedStarts(server, token: viewer, counted: true).started == 2)

        // The standby dies as a machine does.
        let pid =
            try String(
                contentsOf: cluster.folder.appendingPathComponent("standby/postmaster.pid"), encoding: .utf8
            )
            .split(separator: "\n").first.map(String.init) ?? ""
        _ = try Shell.run("/bin/sh", ["-c", "kill -9 \(pid); pkill -9 -P \(pid); true"])
        // Within the replica's silence (3 s) and a read's bound, every page answers from the primary.
        try await Task.sleep(for: .seconds(4))
        // Each answer well within the 30 s a dead replica's connection wait cost (timed one by one,
        // with 20 s: a machine busy with the whole suite took 12.9 s for one page once).
        var started = Date()
        let page = try DashboardTests.curl(server.url.appendingPathComponent("dashboard"), cookie: cookie)
        #expect(page.status == 200, "\(page.status)")
        #expect(page.body.contains("The replica does not answer"), "\(page.body.prefix(600))")
        #expect(Date().timeIntervalSince(started) < 20, "the page waited for the dead replica")
        started = Date()
        let figures = try Self.starts(server, cookie: cookie)
        #expect(figures.started == 2)
        #expect(Date().timeIntervalSince(started) < 20, "the page's figures waited for the dead replica")
        started = Date()
        let report = try await Self.reportedStarts(server, token: viewer)
        #expect(report.started == 2)
        #expect(Date().timeIntervalSince(started) < 20, "/report waited for the dead replica")
    }

    @Test func theReplicasURLIsRefusedOnTheCommandLineAndSaysWhereItGoes() throws {
        let server = try ServerProcess()
        // No password in the test's own URL: the refusal is of the flag, whatever it holds.
        let refused = try server.command([
            "serve", "--read-database-url", "postgres://onboarding@127.0.0.1:1/onboarding",
        ])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("READ_DATABASE_URL_FILE"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("127.0.0.1:1"), "\(refused.stderr)")
    }

    /// `target_session_attrs=standby` is a replica's setting: the primary's URL that asks for it
    /// would take no writes, so it is refused before anything starts.
    @Test func aPrimaryURLAskingForAStandbyIsRefused() throws {
        let server = try ServerProcess()
        let refused = try server.command(
            ["migrate"],
            extraEnvironment: [
                "DATABASE_URL":
                    "postgres://onboarding@127.0.0.1:1,127.0.0.1:2/onboarding?target_session_attrs=standby"
            ])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("standby is for READ_DATABASE_URL"), "\(refused.stderr)")
    }
}
