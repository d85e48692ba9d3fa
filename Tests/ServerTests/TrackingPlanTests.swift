import AccountSync
import Foundation
import TestThreads
import Testing
import TourCodec
import TourFixtures

/// The tracking plan: once an app has a registered or published catalog, the server
/// counts only facts for flows, steps and experiments some version of it declares; the others are
/// kept apart, listed in the report and on the dashboard, and never enter a funnel.
@Suite("Tracking plan", .ownThread)
struct TrackingPlanTests {
    static func push(_ server: ServerProcess, account: String, seq: Int64, facts: [TourValue]) async throws
        -> Int
    {
        let token = try server.token(account: account, app: "growth")
        let item = PushItem(
            seq: seq, time: 1_764_000_000 + Double(seq), event: "next", catalogVersion: 1, facts: facts,
            records: [:])
        return try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/\(account)/push"), token: token,
            body: Data(try PushBatch(device: "d-\(account)", items: [item]).tourValue.jsonUTF8())
        ).status
    }

    static func entered(_ flow: String, _ step: String, _ index: Int = 1) -> TourValue {
        .object(["fact": "stepEntered", "flow": .string(flow), "step": .string(step), "index": .int(index)])
    }

    @Test func factsNoCatalogDeclaresAreKeptApartListedAndNeverCounted() async throws {
        let server = try ServerProcess()
        let admin = try server.operatorCredential()
        // No catalog registered yet: no plan, every fact is taken.
        #expect(
            try await Self.push(server, account: "early", seq: 1, facts: [Self.entered("anything", "at_all")])
                == 200)
        #expect(try server.sql("SELECT count(*) FROM facts WHERE flow = 'anything'") == ["1"])

        _ = try PublishingTests.registerGrowthCompiled(on: server)
        // A server looks for a new plan at most a second after it last looked (TrackingPlans).
        try await Task.sleep(for: .milliseconds(1100))
        let started: TourValue = .object([
            "fact": "flowStarted", "flow": "app_tour", "plan": .strings(["dashboard"]), "catalogVersion": 1,
        ])
        let hostile = "<img src=x onerror=alert(1)>"
        let facts: [TourValue] = [
            started, Self.entered("app_tour", "dashboard"),
            Self.entered("xss_probe", hostile), Self.entered("app_tour", "-2-3", 2),
            .object([
                "fact": "exposed", "flow": "app_tour", "experiment": "no_such_test", "variant": "a",
                "subject": "account:ann",
            ]),
        ]
        #expect(try await Self.push(server, account: "ann", seq: 1, facts: facts) == 200)
        #expect(
            try await Self.push(server, account: "bob", seq: 1, facts: [Self.entered("xss_probe", hostile)])
                == 200)
        // A retried push adds nothing, to either table.
        #expect(try await Self.push(server, account: "ann", seq: 1, facts: facts) == 200)

        #expect(
            try server.sql(
                """
                SELECT kind || ' ' || flow || ' ' || coalesce(step, '') FROM facts WHERE account = 'ann' \
                ORDER BY idx
                """
            )
                == ["flowStarted app_tour ", "stepEntered app_tour dashboard"])
        #expect(
            try server.sql(
                """
                SELECT flow || '|' || step || '|' || kind || '|' || facts FROM unplanned_facts WHERE \
                account = 'ann' ORDER BY flow, step
                """
            )
                == [
                    "app_tour|-2-3|stepEntered|1", "app_tour|no_such_test|exposed|1",
                    "xss_probe|\(hostile)|stepEntered|1",
                ])

        // Listed in the report, by what they name, with how many subjects sent them.
        try await DashboardTests.waitUntilCounted(server)
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: admin
        ).json
        let unplanned = try #require(report["unplanned"] as? [[String: Any]])
        let probe = try #require(unplanned.first { $0["flow"] as? String == "xss_probe" })
        #expect(probe["subjects"] as? Int == 2)
        #expect(probe["facts"] as? Int == 2)
        #expect(unplanned.count == 3)
        // Never in a funnel: the report's flows are the catalog's (and the one taken before the plan).
        let flows = Set((report["flows"] as? [[String: Any]] ?? []).compactMap { $0["flow"] as? String })
        #expect(!flows.contains("xss_probe"))
        #expect(flows.contains("app_tour"))
        let tour = try #require(
            (report["flows"] as? [[String: Any]])?.first { $0["flow"] as? String == "app_tour" })
        #expect((tour["steps"] as? [[String: Any]])?.compactMap { $0["step"] as? String } == ["dashboard"])

        // On the dashboard's app page, escaped; and as CSV.
        let session = try DashboardTests().signIn(server)
        let page = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/growth"), cookie: session)
        #expect(page.status == 200)
        #expect(page.body.contains("Facts no catalog declares"))
        #expect(!page.body.contains(hostile))
        #expect(page.body.contains("&lt;img src=x"))
        let csv = try DashboardTests.curl(
            URL(string: server.url.absoluteString + "/dashboard/apps/growth?format=csv&table=unplanned")!,
            cookie: session)
        #expect(csv.status == 200)
        #expect(csv.body.hasPrefix("flow,step,kind,subjects,devices,facts,first_seen,last_seen"))
        // A name a spreadsheet would run as a formula is made inert, as in every CSV.
        #expect(csv.body.contains("app_tour,'-2-3,stepEntered,1,1,1"))
    }

    /// An editor archives a test flow: it leaves the overview, its numbers stay on the app's page
    /// and its own; a viewer may not; each act is audited; restoring brings it back.
    @Test func anArchivedFlowLeavesTheOverviewAndKeepsItsNumbers() async throws {
        let server = try ServerProcess()
        func started(_ flow: String) -> TourValue {
            .object([
                "fact": "flowStarted", "flow": .string(flow), "plan": .strings(["one"]), "catalogVersion": 1,
            ])
        }
        #expect(
            try await Self.push(
                server, account: "ann", seq: 1,
                facts: [started("test_flow"), Self.entered("test_flow", "one")]) == 200)
        #expect(
            try await Self.push(
                server, account: "bob", seq: 1,
                facts: [started("app_tour"), Self.entered("app_tour", "dashboard")]) == 200)
        try await DashboardTests.waitUntilCounted(server)
        let editor = try server.credential("eve", role: "editor", app: "growth")
        let viewer = try server.credential("vic", role: "viewer", app: "growth")
        let archive = server.url.appendingPathComponent("v1/apps/growth/flows/test_flow/archive")
        #expect(try await HTTP.post(archive, token: viewer, body: Data()).status == 403)
        let archived = try await HTTP.post(archive, token: editor, body: Data())
        #expect(archived.status == 200)
        #expect(archived.json["changed"] as? Bool == true)
        #expect(try await HTTP.post(archive, token: editor, body: Data()).json["changed"] as? Bool == false)

        let session = try DashboardTests().signIn(server)
        let overview = try DashboardTests.curl(
            URL(string: server.url.absoluteString + "/dashboard?format=csv&table=flows")!, cookie: session)
        #expect(overview.status == 200)
        #expect(!overview.body.contains("test_flow"))
        #expect(overview.body.contains("app_tour"))
        // Its starts leave the overview's trend too; the app's page still counts them.
        func trendStarts(_ path: String) throws -> Int {
            let csv = try DashboardTests.curl(URL(string: server.url.absoluteString + path)!, cookie: session)
                .body
            return csv.split(whereSeparator: \.isNewline).dropFirst().compactMap {
                Int($0.split(separator: ",")[1])
            }.reduce(0, +)
        }
        #expect(try trendStarts("/dashboard?format=csv&table=trend") == 1)
        #expect(try trendStarts("/dashboard/apps/growth?format=csv&table=trend") == 2)
        let page = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/growth"), cookie: session)
        #expect(page.body.contains("Archived (off the overview, counted here): test_flow"))
        let funnel = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/growth/flows/test_flow"), cookie: session)
        #expect(funnel.status == 200)

        #expect(
            try server.command(["flows", "restore", "--app", "growth", "--flow", "test_flow"]).status == 0)
        let back = try DashboardTests.curl(
            URL(string: server.url.absoluteString + "/dashboard?format=csv&table=flows")!, cookie: session)
        #expect(back.body.contains("test_flow"))
        #expect(try trendStarts("/dashboard?format=csv&table=trend") == 2)
        #expect(
            try server.sql("SELECT action FROM audit_log WHERE action LIKE 'flow.%' ORDER BY id") == [
                "flow.archived", "flow.restored",
            ])
    }
}
