import Foundation
import TestThreads
import Testing
import TourFixtures

/// The figures' freshness, followed by one service per server: no page view writes on the primary
/// or waits for a count, `/report` waits once for the count of every push answered before it, and
/// a page whose figures are not fresh says so.
@Suite("Fresh figures without polling", .ownThread)
struct FreshnessTests {
    /// The newest transaction id on the server's database (a read: it assigns none).
    static func newestTransaction(_ server: ServerProcess) throws -> Int {
        Int(try server.sql("SELECT pg_snapshot_xmax(pg_current_snapshot())::text").first ?? "") ?? -1
    }

    /// Thirty page views of every kind write nothing on the primary: the transaction ids used
    /// meanwhile are the catch-up job's own (measured first, with no page asked for), not one or
    /// more a page as when every page counted the pushes first; and every page answered without a
    /// wait.
    @Test func aPageViewWritesNothingOnThePrimary() async throws {
        // A PostgreSQL of its own: transaction ids are the cluster's, and the other tests' servers
        // would use them meanwhile.
        let cluster = try PrivateCluster()
        defer { cluster.destroy() }
        let server = try ServerProcess(
            databaseURL: try cluster.freshDatabase(), environment: ["LOG_LEVEL": "info"])
        let phone = try Device("growth", account: "ann", server: server)
        try phone.run("do", "completeOnboarding")
        try phone.run("visit", "dashboard")
        let viewer = try server.credential("vic", role: "viewer", app: "growth")
        let report = try await HTTP.get(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: viewer)
        #expect(report.status == 200)
        let cookie = try DashboardTests().signIn(server)
        let pages = [
            "dashboard", "dashboard/apps/growth", "dashboard/apps/growth/flows/app_tour",
            "dashboard/apps/growth/studio",
            "dashboard/apps/growth/people", "dashboard/audit",
        ]
        // The job's own use of transaction ids, with nobody asking for a page.
        let idleStart = try Self.newestTransaction(server)
        let idleClock = ContinuousClock.now
        try await Task.sleep(for: .seconds(6))
        let idleRate =
            Double(try Self.newestTransaction(server) - idleStart) / (ContinuousClock.now - idleClock).seconds
        let before = try Self.newestTransaction(server)
        let started = ContinuousClock.now
        var asked: [String: String] = [:]
        for round in 0..<5 {
            for page in pages {
                let id = "page-\(round)-\(UUID().uuidString)"
                asked[id] = page
                let answer = try DashboardTests.curl(
                    server.url.appendingPathComponent(page), cookie: cookie, headers: ["X-Request-ID: \(id)"])
                #expect(answer.status == 200, "\(page) (round \(round)): \(answer.status)")
            }
        }
        let elapsed = (ContinuousClock.now - started).seconds
        let used = try Self.newestTransaction(server) - before
        // What the job uses in as long, and a run or two more: a page that counted first (as every
        // page did) used at least one id of its own, thirty here.
        let jobAlone = Int((idleRate * elapsed * 1.5).rounded(.up)) + 4
        #expect(
            used <= jobAlone,
            "\(used) transaction ids for 30 page views in \(elapsed) s: the job alone uses about \(jobAlone)")
        // Without a wait by the server's own clock (a page that waited for a count waited up to 5 s;
        // what a loaded machine adds to starting curl is not in it).
        var slowest = (milliseconds: 0.0, page: "")
        for (id, page) in asked {
            let milliseconds = try await server.loggedMilliseconds(requestID: id)
            if milliseconds > slowest.milliseconds { slowest = (milliseconds, page) }
        }
        #expect(slowest.milliseconds < 2_000, "\(slowest.page) took \(slowest.milliseconds) ms")
    }

    /// `/report` answers with every push answered before it, though no page and no request counts:
    /// it waits for the job's notification, once. Pushes from two devices, then at once the report.
    @Test func aReportWaitsOnceForTheCountOfEveryPushBeforeIt() async throws {
        let server = try ServerProcess()
        let viewer = try server.credential("vic", role: "viewer", app: "growth")
        for account in ["ann", "bea", "cid"] {
            let phone = try Device("growth", account: account, server: server)
            try phone.run("do", "completeOnboarding")
            try phone.run("visit", "dashboard")
            #expect(try phone.waiting() == 0)
            let report = try await HTTP.counted(
                server.url.appendingPathComponent("v1/apps/growth/report"), token: viewer)
            let started = (report.json["flows"] as? [[String: Any]] ?? []).map { $0["started"] as? Int ?? 0 }
                .reduce(0, +)
            #expect(
                report.json["accounts"] as? Int == ["ann", "bea", "cid"].firstIndex(of: account)! + 1,
                "\(report.json)")
            #expect(started >= 1)
        }
    }

    /// `/report` asks the job for the run it waits for, so it waits for one run, not for the next
    /// tick: with the job ticking every 10 s, each of three reports, asked just after a device
    /// pushed, counts that push and says nothing of staleness, by the server's own clock well
    /// within the tick (waiting for the tick, one of them would have answered stale after 5 s, or
    /// waited seconds).
    @Test func aReportAsksForItsCountInsteadOfWaitingForTheTick() async throws {
        let server = try ServerProcess(
            environment: ["LOG_LEVEL": "info"], serveOptions: ["--insights-interval", "10"])
        let viewer = try server.credential("vic", role: "viewer", app: "growth")
        for (index, account) in ["ann", "bea", "cid"].enumerated() {
            let phone = try Device("growth", account: account, server: server)
            try phone.run("do", "completeOnboarding")
            #expect(try phone.waiting() == 0)
            let id = "report-\(account)-\(UUID().uuidString)"
            let report = try await HTTP.send(
                "GET", server.url.appendingPathComponent("v1/apps/growth/report"), token: viewer, body: nil,
                headers: ["X-Request-ID": id])
            #expect(report.status == 200)
            #expect(report.staleSeconds == nil, "the report for \(account) was stale")
            #expect(report.json["accounts"] as? Int == index + 1, "\(report.json)")
            let milliseconds = try await server.loggedMilliseconds(requestID: id)
            #expect(milliseconds < 2_000, "the report for \(account) took \(milliseconds) ms")
        }
    }

    /// A report waits only for pushes: on a server that took none since its last count, a report
    /// asks the insights job for no run and waits for none (the catch-up's own runs, which take
    /// transaction ids too, are not what a report waits to see counted). A push after them is
    /// asked for, and in the next report.
    @Test func aReportAfterNoNewPushAsksForNoCount() async throws {
        let metrics = ServerProcess.freePort()
        let server = try ServerProcess(
            environment: ["LOG_LEVEL": "info"],
            serveOptions: ["--insights-interval", "10", "--metrics-port", "\(metrics)"])
        let viewer = try server.credential("vic", role: "viewer", app: "growth")
        let report = server.url.appendingPathComponent("v1/apps/growth/report")
        func runs() async throws -> Double {
            MetricsTests.sample(
                try await MetricsTests.scrape(metrics), "onboarding_insights_catch_up_seconds_count") ?? 0
        }
        let ann = try Device("growth", account: "ann", server: server)
        try ann.run("do", "completeOnboarding")
        #expect(try ann.waiting() == 0)
        let first = try await HTTP.send("GET", report, token: viewer, body: nil)
        #expect(first.staleSeconds == nil && first.json["accounts"] as? Int == 1, "\(first.json)")
        // The runs so far (the start's, the first report's) as recorded once each has returned:
        // the same figure half a second apart.
        var counted = try await runs()
        while true {
            try await Task.sleep(for: .milliseconds(500))
            let now = try await runs()
            if now == counted { break }
            counted = now
        }
        #expect(counted >= 1)
        // Eight reports: each asking would make eight runs; the job's own tick (every 10 s) may
        // land among them once or twice on a loaded machine.
        for _ in 1...8 {
            let again = try await HTTP.send("GET", report, token: viewer, body: nil)
            #expect(again.staleSeconds == nil && again.json["accounts"] as? Int == 1, "\(again.json)")
        }
        let ran = try await runs() - counted
        #expect(ran <= 2, "8 reports with no push since the count made \(ran) runs")
        let bea = try Device("growth", account: "bea", server: server)
        try bea.run("do", "completeOnboarding")
        #expect(try bea.waiting() == 0)
        let after = try await HTTP.send("GET", report, token: viewer, body: nil)
        #expect(after.staleSeconds == nil && after.json["accounts"] as? Int == 2, "\(after.json)")
        #expect(try await runs() > counted)
    }
}
