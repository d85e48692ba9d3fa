import Foundation
import TestThreads
import Testing
import TourFixtures

/// Failover with nobody at the keyboard: pg_auto_failover's monitor, a primary and a synchronous
/// secondary (scripts/auto-failover), two servers behind nginx on the URL `pg_autoctl show uri`
/// prints, and devices (the real CLI) pushing through nginx all along. The primary's node dies
/// as a machine does (keeper, postmaster and backends, SIGKILL), again and again: the monitor
/// promotes the secondary, both servers follow every time, and the dead node comes back as the new
/// primary's secondary (fenced by the monitor, never a second primary). No push a device holds
/// acknowledged is lost or stored twice.
@Suite("Failover without a person", .serialized, .ownThread)
struct AutoFailoverTests {
    /// A pg_auto_failover formation of its own (scripts/auto-failover).
    final class Formation: @unchecked Sendable {
        let folder = Scratch.folder.appendingPathComponent(
            "auto-failover-\(UUID().uuidString)")
        private(set) var url = ""

        static var isInstalled: Bool {
            ["/usr/bin/pg_autoctl", "/usr/local/bin/pg_autoctl"].contains {
                FileManager.default.isExecutableFile(atPath: $0)
            }
        }

        @discardableResult
        func script(_ command: String, _ arguments: String...) throws -> String {
            var environment = ProcessInfo.processInfo.environment
            environment["ONBOARDING_PG_DIR"] = folder.path
            let result = try Shell.run(
                ReplicaTests.root.appendingPathComponent("scripts/auto-failover").path, [command] + arguments,
                environment: environment, seconds: 180)
            guard result.status == 0 else {
                throw HarnessFailure("auto-failover \(command): \(result.stderr)")
            }
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        init() throws {
            url = try script("start").components(separatedBy: "\n").last ?? ""
        }

        /// The URL of whichever node is the standby (libpq's `target_session_attrs=standby`).
        var standbyURL: String {
            url.replacingOccurrences(
                of: "target_session_attrs=read-write", with: "target_session_attrs=standby")
        }

        /// The node that is primary now (1 or 2).
        func primary() throws -> String { try script("primary") }

        deinit { _ = try? script("destroy") }
    }

    @Test func theMonitorPromotesEveryServerFollowsEveryTimeAndNoAcknowledgedPushIsLost() async throws {
        try #require(
            Formation.isInstalled,
            """
            pg_auto_failover is not installed: apt-get install postgresql-15-auto-failover \
            pg-auto-failover-cli (.ci/run does)
            """
        )
        let formation = try Formation()
        // Info: each server says why it passes a host over, which is what a failure here needs.
        // The second reads its pages from whichever node is the standby (both nodes, as
        // `target_session_attrs=standby`): after each failover, the one that came back.
        let servers = try (0..<2).map { index in
            try ServerProcess(
                databaseURL: formation.url,
                environment: ["LOG_LEVEL": "info"].merging(
                    index == 1 ? ["READ_DATABASE_URL": formation.standbyURL] : [:]
                ) { $1 },
                serveOptions: ["--trusted-proxy", "127.0.0.1"])
        }
        let balancer = try Balancer(upstreams: servers.map(\.port))
        let devices = try (0..<4).map { index in
            var device = JourneyDashboardTests.virtual(
                try Device("moodtracker", account: "a\(index)", server: servers[0]), kind: "phone")
            device.environment["ONBOARDING_SERVER"] = balancer.url.absoluteString
            return device
        }
        for device in devices {
            for line in [["launch"], ["wait", "0.5"], ["sync"]] { #expect(try device.run(line).status == 0) }
        }
        let cookie = try DashboardTests().signIn(servers[1])
        var started = try await Self.expectPagesFromTheStandby(
            reader: servers[1], writer: servers[0], formation: formation, cookie: cookie,
            started: devices.count,
            failover: 0)
        // Three failovers here, ten in CI's full run (ONBOARDING_SOAK=full); `scripts/bench
        // --sections 8` runs more. Each one is the same test: the count only makes a rare miss likelier.
        let failovers = Soak.isFull ? 10 : 3
        let pushing = Locked(true)
        // A failed expectation that throws still ends the loops (they would push until the run ends).
        defer { pushing.withLock { $0 = false } }
        // Each accepted sync: when it began and when it was answered.
        let accepted = Locked<[(began: Date, answered: Date)]>([])
        let deviceFailures = Locked<[String]>([])
        let loops = devices.map { device in
            Task.blocking {
                while pushing.withLock({ $0 }) {
                    let event = try device.run("do", "swipeLeft")
                    if event.status != 0 {
                        deviceFailures.withLock { $0.append("\(device.account): \(event.stderr)") }
                    }
                    let began = Date()
                    if try device.run("sync").status == 0 { accepted.withLock { $0.append((began, Date())) } }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        var recoveries: [Double] = []
        for failover in 1...failovers {
            // Pushes accepted before each kill: the servers are on the primary.
            let before = Date()
            while accepted.withLock({ $0.filter { $0.began > before }.count }) < 4 {
                try await Task.sleep(for: .milliseconds(50))
            }
            let dead = try formation.primary()
            try formation.script("kill", dead)
            let killed = Date()
            // Nobody promotes: the monitor does. Each server moves once per failover.
            let deadline = Date().addingTimeInterval(45)
            while Date() < deadline, !servers.allSatisfy({ Self.moves($0) >= failover }) {
                try await Task.sleep(for: .milliseconds(100))
            }
            for (index, server) in servers.enumerated() where Self.moves(server) < failover {
                Issue.record(
                    """
                    failover \(failover): server \(index + 1) did not follow within 45 s \
                    (moved \(Self.moves(server)) times); \
                    its log: \(server.logText.suffix(4_000))
                    its threads: \(server.threadStacks().prefix(12_000))
                    """)
            }
            // A sync begun after the kill: one in flight then may have been answered by the old primary.
            while Date() < deadline, accepted.withLock({ !$0.contains { $0.began > killed } }) {
                try await Task.sleep(for: .milliseconds(50))
            }
            let first = try #require(
                accepted.withLock { $0.first { $0.began > killed } },
                "failover \(failover): no push accepted within 45 s")
            recoveries.append(first.answered.timeIntervalSince(killed))
            #expect(try formation.primary() != dead, "failover \(failover)")
            // The dead machine comes back: the monitor has it follow the new primary.
            try formation.script("rejoin", dead)
            try formation.script("wait-ready")
            // The second server's pages read from the node that came back, now the standby.
            started = try await Self.expectPagesFromTheStandby(
                reader: servers[1], writer: servers[0], formation: formation, cookie: cookie,
                started: started,
                failover: failover)
        }
        pushing.withLock { $0 = false }
        for loop in loops { try await loop.value }
        #expect(deviceFailures.withLock { $0 }.isEmpty, "\(deviceFailures.withLock { $0 })")
        print(
            """
            auto-failover: first accepted push after each \
            kill: \(recoveries.map { String(format: "%.1f s", $0) })
            """
        )
        // Every device converges, and every row it holds is stored exactly once.
        for device in devices { try await device.expectEveryRowStoredOnce(servers[0].sql) }
        // Neither server died, and each moved exactly once per failover.
        for (index, server) in servers.enumerated() {
            #expect(server.exitStatus == nil, "server \(index + 1): \(server.logText.suffix(3_000))")
            #expect(Self.moves(server) == failovers, "server \(index + 1): \(server.logText.suffix(3_000))")
        }
        // Each server answers readiness on the last primary.
        for server in servers { #expect(HTTP.status(server.url.appendingPathComponent("v1/ready")) == 200) }
    }

    /// The pages of `reader` (the server with `READ_DATABASE_URL`) read the standby: within 15 s
    /// they no longer say the replica does not answer and count the `started` starts so far; then,
    /// with the standby's replay paused, one more start counted on the primary (`writer`'s pages)
    /// is not on `reader`'s until the replay resumes. Returns the starts then counted.
    static func expectPagesFromTheStandby(
        reader: ServerProcess, writer: ServerProcess, formation: Formation, cookie: String, started: Int,
        failover: Int
    ) async throws -> Int {
        func standby(_ query: String) throws {
            let result = try Shell.run(TestPostgres.psql, [formation.standbyURL, "-qtAc", query])
            guard result.status == 0 else { throw HarnessFailure("psql on the standby: \(result.stderr)") }
        }
        func starts(_ server: ServerProcess) throws -> (started: Int, passedOver: Bool) {
            (
                try ReplicaTests.starts(server, cookie: cookie).started,
                try DashboardTests.curl(server.url.appendingPathComponent("dashboard"), cookie: cookie).body
                    .contains("The replica does not answer")
            )
        }
        // Bounds of a minute: the insights job's count and the replica's return lag for tens of
        // seconds on a machine busy with the whole suite; a quiet one meets each within seconds.
        func until(_ seconds: Double, _ done: () throws -> Bool) async throws -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if try done() { return true }
                try await Task.sleep(for: .milliseconds(250))
            }
            return try done()
        }
        var last = (started: 0, passedOver: true)
        guard
            try await until(
                60,
                {
                    last = try starts(reader); return !last.passedOver && last.started == started
                })
        else {
            Issue.record(
                """
                after failover \(failover): the pages do not read a standby within 60 s of the rejoin: \
                \(last.started) starts of \(started), "the replica does not answer" \(last.passedOver); \
                the server's log: \(reader.logText.suffix(3_000))
                """)
            return started
        }
        try standby("SELECT pg_wal_replay_pause()")
        defer { try? standby("SELECT pg_wal_replay_resume()") }
        let device = JourneyDashboardTests.virtual(
            try Device("moodtracker", account: "reader-\(failover)", server: writer), kind: "phone")
        for line in [["launch"], ["wait", "0.5"], ["sync"]] { #expect(try device.run(line).status == 0) }
        #expect(
            try await until(60) { try starts(writer).started == started + 1 },
            "after failover \(failover): the primary's pages do not count the new start")
        last = try starts(reader)
        #expect(
            last.started == started && !last.passedOver,
            """
            after failover \(failover): with the standby's replay paused, the pages say \(last) (the \
            primary's count is \(started + 1)): they do not read the standby
            """
        )
        try standby("SELECT pg_wal_replay_resume()")
        #expect(
            try await until(60) { try starts(reader).started == started + 1 },
            "after failover \(failover): the standby's replay resumed, the pages do not count the new start")
        return started + 1
    }

    /// How many times `server` said it started again on a new primary.
    static func moves(_ server: ServerProcess) -> Int {
        server.logText.components(separatedBy: "the database moved: starting again on it").count - 1
    }
}
