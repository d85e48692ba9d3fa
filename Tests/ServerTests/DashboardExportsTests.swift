import AccountSync
import Foundation
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures

/// The dashboard's views beyond the walk in the browser: every table exported as CSV and checked
/// against the JSON export and the test's own counts, what is published and at what rollout, the
/// date range on every view, the trend without a range, and the cookie's `Secure` flag behind a
/// TLS-terminating proxy.
@Suite("Dashboard exports and views", .serialized, .ownThread)
struct DashboardExportsTests {
    typealias Population = DashboardTests.Population

    /// A CSV answer's rows (after the header), split into fields; fields here hold no comma.
    func rows(_ csv: DashboardTests.CurlAnswer) -> [[String]] {
        csv.body.split(separator: "\r\n").dropFirst().map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
    }

    func json(_ answer: DashboardTests.CurlAnswer) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
    }

    @Test func everyTableExportsAsCSVWithTheNumbersOfTheJSONAndTheRangeReachesEveryView() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_SECRET": ServerProcess.secret])
        let population = Population(app: "growth", count: 40, seed: 11)
        try await population.push(to: server)
        try await DashboardTests.waitUntilCounted(server)
        let admin = try server.operatorCredential()
        // A publication at 25%: the app's page says what is published and at what rollout.
        let version = try await Self.publishGrowth(on: server, rollout: 25) - 1
        let session = try DashboardTests().signIn(server)
        func get(_ path: String) throws -> DashboardTests.CurlAnswer {
            try DashboardTests.curl(URL(string: server.url.absoluteString + path)!, cookie: session)
        }
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: admin
        ).json
        let started = population.accounts.filter { $0.reached > 0 }

        // The overview's tables: apps (as the API counts them), flows, and the trend.
        let apps = rows(try get("/dashboard?format=csv&table=apps"))
        #expect(
            apps == [
                ["growth", "\(report["accounts"] as? Int ?? -1)", "\(report["devices"] as? Int ?? -1)", "1"]
            ])
        let flows = rows(try get("/dashboard?format=csv"))
        #expect(flows.first?[3] == "welcome")
        #expect(flows.first?[4] == "\(started.count)")
        // Without a range the trend covers the 30 days up to the last with activity, so it holds
        // every start of this population (its five days), day by day as the test counts them.
        let trend = rows(try get("/dashboard?format=csv&table=trend"))
        #expect(trend.count == 30)
        let startsByDay = Dictionary(grouping: started) { Self.day($0.day) }.mapValues(\.count)
        #expect(trend.last?[0] == startsByDay.keys.max())
        for row in trend { #expect(Int(row[1]) == startsByDay[row[0]] ?? 0, "\(row[0])") }
        let overviewJSON = try json(try get("/dashboard?format=json"))
        let jsonTrend = (overviewJSON["trend"] as? [[String: Any]] ?? []).map {
            "\($0["started"] as? Int ?? -1)"
        }
        #expect(jsonTrend == trend.map { $0[1] })

        // The app's tables: flows, trend, and its catalogs with the publication's rollout.
        let catalogs = rows(try get("/dashboard/apps/growth?format=csv&table=catalogs"))
        #expect(catalogs.first?[0] == "\(version + 1)")
        #expect(catalogs.first?[1] == "published")
        #expect(catalogs.first?[2] == "25%")
        #expect(catalogs.contains { $0[0] == "\(version)" && $0[2] == "in the binary" })
        let appPage = try get("/dashboard/apps/growth")
        #expect(appPage.body.contains("<td>25%</td>"))
        #expect(appPage.body.contains("href=\"/dashboard/apps/growth\" aria-current=\"page\""))
        #expect(rows(try get("/dashboard/apps/growth?format=csv&table=trend")) == trend)

        // The funnel's variants as CSV: each variant's subjects, as the API's ?by=variant gives them.
        let variants = rows(try get("/dashboard/apps/growth/flows/welcome?format=csv&table=variants"))
        let api = try await HTTP.counted(
            URL(string: server.url.absoluteString + "/v1/apps/growth/report?by=variant")!, token: admin
        ).json
        let apiArms = ((api["experiments"] as? [[String: Any]])?.first?["variants"] as? [[String: Any]] ?? [])
            .map {
                [
                    "tourLength", $0["variant"] as? String ?? "", "\($0["assigned"] as? Int ?? -1)",
                    "\($0["goalReached"] as? Int ?? -1)",
                ]
            }
        #expect(!apiArms.isEmpty)
        #expect(variants.map { [$0[0], $0[1], $0[3], $0[5]] } == apiArms)
        let funnelPage = try get("/dashboard/apps/growth/flows/welcome")
        #expect(funnelPage.body.contains("aria-current=\"page\""))

        // A table a page does not have, or a table for HTML: refused with what the page has.
        let wrongTable = try get("/dashboard/apps/growth?format=csv&table=variants")
        #expect(wrongTable.status == 400)
        #expect(wrongTable.body.contains("flows, trend, catalogs"))
        #expect(try get("/dashboard?table=apps").status == 400)

        // A range reaches every view: the overview's and the app's flows count the first starts of
        // those days only, their links keep the range, and start rates (of all-time accounts) are left out.
        let firstDay = try #require(startsByDay.keys.min())
        let range = "from=\(firstDay)&to=\(firstDay)"
        let rangedFlows = rows(try get("/dashboard?format=csv&\(range)"))
        #expect(rangedFlows.first?[4] == "\(startsByDay[firstDay] ?? -1)")
        #expect(rangedFlows.first?[5] == "")
        #expect(
            rows(try get("/dashboard/apps/growth?format=csv&\(range)")).first?[1]
                == "\(startsByDay[firstDay] ?? -1)")
        let rangedPage = try get("/dashboard/apps/growth?\(range)")
        #expect(
            rangedPage.body.contains(
                """
                href=\"/dashboard/apps/growth/flows/welcome\
                ?\(range.replacingOccurrences(of: "&", with: "&amp;"))\"
                """
            ))
        #expect(
            rangedPage.body.contains(
                "href=\"/dashboard?\(range.replacingOccurrences(of: "&", with: "&amp;"))\""))
        #expect(rangedPage.body.contains("Start rates are starts over all"))
        // A known flow over days nobody started it: a funnel of zeros. An unknown app or flow is not
        // found, with a range or without.
        let quiet = try get("/dashboard/apps/growth/flows/welcome?format=json&from=2001-01-01&to=2001-01-02")
        #expect(quiet.status == 200)
        let quietStages = (try json(quiet)["all"] as? [String: Any])?["stages"] as? [[String: Any]] ?? []
        #expect(!quietStages.isEmpty && quietStages.allSatisfy { $0["reached"] as? Int == 0 })
        for path in [
            "/dashboard/apps/nosuchapp/flows/welcome?\(range)", "/dashboard/apps/nosuchapp/flows/welcome",
            "/dashboard/apps/growth/flows/nosuchflow?\(range)", "/dashboard/apps/nosuchapp?\(range)",
        ] {
            #expect(try get(path).status == 404, "\(path)")
        }
    }

    @Test func idsThatASpreadsheetWouldRunAreInertInEveryCSV() async throws {
        let server = try ServerProcess()
        let token = try await TokenSignerForTests().token(account: "eve", app: "growth")
        // Flow ids may start with '-' or '@' (SyncAPI's names); variant names are free text.
        let variant = "=HYPERLINK(\"http://x\",\"y\")"
        let item = PushItem(
            seq: 1, time: 1_764_000_000, event: "next", catalogVersion: 1,
            facts: [
                .object([
                    "fact": "assigned", "flow": "@cmd", "experiment": "-exp", "variant": .string(variant),
                    "subject": "account:eve",
                ]),
                .object(["fact": "flowStarted", "flow": "@cmd", "plan": .strings(["a"]), "catalogVersion": 1]
                ),
                .object(["fact": "flowStarted", "flow": "-1-2", "plan": .strings(["a"]), "catalogVersion": 1]
                ),
            ], records: [:])
        let pushed = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/eve/push"), token: token,
            body: Data(try PushBatch(device: "e1", items: [item]).tourValue.jsonUTF8()))
        #expect(pushed.status == 200)
        try await DashboardTests.waitUntilCounted(server)
        let session = try DashboardTests().signIn(server)
        func csv(_ path: String) throws -> String {
            let answer = try DashboardTests.curl(
                URL(string: server.url.absoluteString + path)!, cookie: session)
            #expect(answer.status == 200, "\(path)")
            return answer.body
        }
        let overview = try csv("/dashboard?format=csv")
        #expect(overview.contains(",'@cmd,") && overview.contains(",'-1-2,"))
        let app = try csv("/dashboard/apps/growth?format=csv")
        #expect(app.contains("\r\n'@cmd,") && app.contains("\r\n'-1-2,"))
        let variants = try csv("/dashboard/apps/growth/flows/@cmd?format=csv&table=variants")
        #expect(variants.contains("\r\n'-exp,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\","))
        // No cell of any export starts with a sign a spreadsheet reads as a formula.
        for text in [overview, app, variants] {
            for line in text.split(separator: "\r\n") {
                for cell in line.split(separator: ",") where !cell.isEmpty && Double(cell) == nil {
                    #expect(!"=+-@".contains(cell.first!) && !cell.hasPrefix("\"="), "\(line)")
                }
            }
        }
    }

    /// A person with a role in one app sees that app only: the other apps are not listed,
    /// exported or opened.
    @Test func aSessionOfOneAppSeesThatAppOnly() async throws {
        let server = try ServerProcess()
        try await Population(app: "growth", count: 6, seed: 3).push(to: server)
        try await Population(app: "finite", count: 6, seed: 4).push(to: server)
        try await DashboardTests.waitUntilCounted(server)
        let session = try DashboardTests().signIn(
            server, credential: try server.credential("fay", role: "viewer", app: "finite"))
        func get(_ path: String) throws -> DashboardTests.CurlAnswer {
            try DashboardTests.curl(URL(string: server.url.absoluteString + path)!, cookie: session)
        }
        #expect(rows(try get("/dashboard?format=csv&table=apps")).map { $0[0] } == ["finite"])
        #expect(!(try get("/dashboard").body.contains("/dashboard/apps/growth")))
        for path in [
            "/dashboard/apps/growth", "/dashboard/apps/growth/flows/welcome",
            "/dashboard/apps/growth?format=csv",
        ] {
            #expect(try get(path).status == 403, "\(path)")
        }
        #expect(try get("/dashboard/apps/finite").status == 200)
        // An operator sees both.
        let everyApp = try DashboardTests().signIn(server)
        let all = try DashboardTests.curl(
            URL(string: server.url.absoluteString + "/dashboard?format=csv&table=apps")!, cookie: everyApp)
        #expect(rows(all).map { $0[0] } == ["finite", "growth"])
    }

    @Test func theSessionCookieIsSecureWhenTheProxyInFrontSaysTheRequestCameOverTLS() throws {
        let server = try ServerProcess()
        let credential = try server.operatorCredential()
        for (headers, secure) in [
            ([String](), false), (["X-Forwarded-Proto: http"], false), (["X-Forwarded-Proto: https"], true),
            (["X-Forwarded-Proto: HTTPS, http"], true), (["X-Forwarded-Proto: http, https"], false),
            (["Forwarded: for=192.0.2.60;proto=https;by=203.0.113.43"], true),
            (["Forwarded: proto=http"], false),
        ] {
            let answer = try DashboardTests.postSignIn(server, credential: credential, headers: headers)
            #expect(answer.status == 303)
            let attributes = (answer.setCookieHeader ?? "").split(separator: ";").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            #expect(attributes.contains("Secure") == secure, "\(headers)")
            #expect(attributes.contains("HttpOnly"))
            // Over TLS a `__Host-` cookie for the whole host: no sibling subdomain can set or shadow it.
            #expect(attributes.first?.hasPrefix("__Host-onboarding_session=") == secure, "\(headers)")
            #expect(attributes.contains(secure ? "Path=/" : "Path=/dashboard"), "\(headers)")
        }
    }

    /// Registers Growth's compiled catalog (as its release would) and publishes the next version,
    /// its first step reworded, at `rollout` percent; the published version.
    static func publishGrowth(on server: ServerProcess, rollout: Int) async throws -> Int {
        let compiled = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("growth").path, ["catalog", "--json"]
        )
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let file = Scratch.folder.appendingPathComponent("growth-\(UUID().uuidString).json")
        try compiled.write(to: file, atomically: true, encoding: .utf8)
        let registered = try PublishingTests().serverCommand(
            server, ["register", "--app", "growth", file.path])
        try #require(registered.status == 0, "\(registered.stderr)")
        let version = try #require(try TourValue(jsonText: compiled).objectValue?["version"]?.intValue)
        let published = try PublishingTests.edited(try PublishingTests.reworded(compiled)) { document, _ in
            document["version"] = .int(version + 1)
        }
        let answer = try await PublishingTests().publish(
            server, try server.operatorCredential(), published, rollout: rollout,
            key: try server.publicationKey(app: "growth"),
            app: "growth")
        try #require(answer.status == 201, "\(String(decoding: answer.body, as: UTF8.self))")
        return version + 1
    }

    static func day(_ seconds: Double) -> String {
        String(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: seconds)).prefix(10))
    }
}
