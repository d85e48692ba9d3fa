import AccountSync
import Foundation
import OnboardingServer
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures

/// The dashboard as a person uses it, in a real headless Chromium against a real server and
/// PostgreSQL with seeded pushes; and the insights aggregates against the test's own counts and a
/// full scan of the facts.
@Suite("Dashboard and insights", .serialized, .ownThread)
struct DashboardTests {
    // MARK: - The browser

    @Test func anAdminSignsInOpensEveryViewSeesTheAPIsNumbersAndSignsOut() async throws {
        // Logging every request (info), so the checks that the token and cookie are in no log line can fail.
        let server = try ServerProcess(environment: ["LOG_LEVEL": "info"])
        let population = Population(app: "growth", count: 60, seed: 26)
        try await population.push(to: server)
        try await Self.waitUntilCounted(server)
        let published = try await DashboardExportsTests.publishGrowth(on: server, rollout: 25)
        let admin = try server.operatorCredential()
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: admin
        ).json
        let flows = report["flows"] as? [[String: Any]] ?? []
        let welcome = try #require(flows.first { $0["flow"] as? String == "welcome" })

        let browser = try Browser()
        // Without a session every page sends the browser to sign in.
        try browser.open(server.url.appendingPathComponent("dashboard/apps/growth"))
        #expect(browser.location.hasSuffix("/dashboard/sign-in"))
        // By keyboard: Tab to the credential field, type the credential, Enter.
        var focused = ""
        for _ in 0..<8 where focused != "credential" {
            try browser.press("Tab", code: 9)
            focused =
                (try browser.evaluate("document.activeElement && document.activeElement.name") as? String)
                ?? ""
        }
        #expect(focused == "credential")
        try browser.type(admin)
        try browser.leave { try browser.press("Enter", code: 13) }
        #expect(browser.location.hasSuffix("/dashboard"))
        #expect(browser.title.hasPrefix("All apps"))
        // The cookie: HttpOnly (the page's script cannot read it), SameSite=Strict, expiring.
        #expect((try browser.evaluate("document.cookie") as? String) == "")
        let cookie = try #require(
            try browser.cookies(for: server.url.appendingPathComponent("dashboard")).first)
        #expect(cookie["httpOnly"] as? Bool == true)
        #expect(cookie["sameSite"] as? String == "Strict")
        #expect((cookie["expires"] as? Double ?? -1) > Date().timeIntervalSince1970)
        #expect(server.logText.contains("dashboard sign-in"), "the server logs at info")
        #expect(!(server.logText.contains(admin)))
        #expect(!(server.logText.contains(cookie["value"] as? String ?? "?")))
        #expect(
            try server.sql(
                "SELECT count(*) FROM dashboard_sessions WHERE id_hash = '\(cookie["value"] ?? "")'") == ["0"]
        )
        try saveScreenshot(browser, "dashboard-overview")

        // All apps: the app's accounts and devices, the flow's starts and completions, as the API says.
        let appsRow = try cells(
            "document.querySelector('caption#s2').closest('table').querySelectorAll('tbody tr')[0]", browser)
        #expect(
            appsRow == [
                "growth", "\(report["accounts"] as? Int ?? -1)", "\(report["devices"] as? Int ?? -1)", "1",
            ])
        let flowRow = try cells(
            "document.querySelector('caption#s3').closest('table').querySelectorAll('tbody tr')[0]", browser)
        #expect(flowRow[1] == "welcome")
        #expect(flowRow[2] == "\(welcome["started"] as? Int ?? -1)")
        #expect(flowRow[4] == "\(welcome["completedHere"] as? Int ?? -1)")
        #expect(try browser.evaluate("document.querySelectorAll('svg polyline').length") as? Int == 2)

        // By keyboard on the overview: the first Tab reaches the skip link, which moves focus to the
        // content; Tab then walks the links, and Enter on the app's opens its page.
        try browser.press("Tab", code: 9)
        #expect(try browser.evaluate("document.activeElement.className") as? String == "skip")
        try browser.press("Enter", code: 13)
        #expect(try browser.evaluate("document.activeElement.id") as? String == "main")
        for _ in 0..<30
        where (try browser.evaluate("document.activeElement.getAttribute('href')") as? String)
            != "/dashboard/apps/growth"
        {
            try browser.press("Tab", code: 9)
        }
        #expect(
            try browser.evaluate("document.activeElement.getAttribute('href')") as? String
                == "/dashboard/apps/growth")
        // The app: its flows and what is published; then the flow's funnel by following the link.
        try browser.leave { try browser.press("Enter", code: 13) }
        #expect(browser.location.hasSuffix("/dashboard/apps/growth"))
        #expect(
            try browser.evaluate("document.querySelector('[aria-current=page]').getAttribute('href')")
                as? String == "/dashboard/apps/growth")
        #expect(
            try browser.evaluate("document.body.innerText.includes('what is published')") as? Bool == true)
        // What is published and at what rollout: the publication, newest first, then the binary's catalog.
        let catalogRow = try cells(
            """
            [...document.querySelectorAll('caption')].find(c => \
            c.textContent.startsWith('Catalogs')).closest('table').querySelectorAll('tbody tr')[0]
            """,
            browser)
        #expect(catalogRow.prefix(3) == ["\(published)", "published", "25%"])
        // The trend, without a range, covers the days the population started flows on.
        let trendStarts = try #require(
            try browser.evaluate(
                """
                [...document.querySelectorAll('table[data-chart=trend] [data-field=started]')].map(c => \
                +c.textContent)
                """
            )
                as? [Int])
        #expect(trendStarts.reduce(0, +) == population.accounts.filter { $0.reached > 0 }.count)
        try saveScreenshot(browser, "dashboard-app")
        try browser.leave {
            _ = try browser.evaluate(
                "document.querySelector('a[href=\"/dashboard/apps/growth/flows/welcome\"]').click()")
        }
        #expect(browser.location.hasSuffix("/dashboard/apps/growth/flows/welcome"))
        try saveScreenshot(browser, "dashboard-funnel")
        // Every stage of the funnel equals the test's own count and the API's step counts.
        let stages = try funnelTable(browser, "s2")
        #expect(stages.map(\.0) == population.expectedStages.map(\.0))
        #expect(stages.map(\.1) == population.expectedStages.map(\.1))
        let apiSteps = (welcome["steps"] as? [[String: Any]] ?? []).map {
            "step \($0["step"] as? String ?? "")"
        }
        #expect(apiSteps == Population.steps.map { "step \($0)" })
        for (index, step) in (welcome["steps"] as? [[String: Any]] ?? []).enumerated() {
            #expect(stages[index + 1].1 == step["accounts"] as? Int)
        }
        // Dropped and drop-off follow from the reached column.
        for (index, stage) in stages.enumerated().dropLast() {
            #expect(stage.2 == stage.1 - stages[index + 1].1)
        }
        // Split by catalog version and by app version, on one scale: the values add up to the whole.
        for split in ["catalog", "app"] {
            try browser.open(
                try URL(
                    checking: server.url.absoluteString
                        + "/dashboard/apps/growth/flows/welcome?split=\(split)"))
            let cells = try #require(
                try browser.evaluate(
                    """
                    [...document.querySelectorAll('table[data-chart=split] tbody tr')].map(r => \
                    [...r.querySelectorAll('td')].map(c => +c.dataset.reached))
                    """
                )
                    as? [[Int]])
            #expect(cells.first?.count == 2, "\(split)")
            #expect(cells.map { $0.reduce(0, +) } == stages.map(\.1), "\(split)")
        }
        // The exports carry the same numbers (fetched with the browser's session; the page's own
        // policy lets it load nothing, so not from its script).
        let funnelURL = server.url.appendingPathComponent("dashboard/apps/growth/flows/welcome")
        let value = cookie["value"] as? String ?? ""
        let csv = try Self.curl(
            URL(string: funnelURL.absoluteString + "?format=csv&table=funnels")!, cookie: value)
        #expect(csv.status == 200)
        let allRows = csv.body.split(separator: "\r\n").filter { $0.hasPrefix("All accounts,") }
        #expect(allRows.map { Int($0.split(separator: ",")[2]) ?? -1 } == stages.map(\.1))
        let json = try Self.curl(URL(string: funnelURL.absoluteString + "?format=json")!, cookie: value)
        let all =
            (try JSONSerialization.jsonObject(with: Data(json.body.utf8)) as? [String: Any])?["all"]
            as? [String: Any]
        #expect((all?["stages"] as? [[String: Any]])?.map { $0["reached"] as? Int ?? -1 } == stages.map(\.1))
        #expect(
            try browser.evaluate("fetch(location.pathname).then(() => 'loaded', () => 'blocked')") as? String
                == "blocked")
        // The experiment by variant: subjects assigned and reaching the goal, as the API and the test count
        // them.
        let variants = try await HTTP.counted(
            URL(string: server.url.absoluteString + "/v1/apps/growth/report?by=variant")!, token: admin
        ).json
        let arms = try #require(
            try browser.evaluate(
                """
                [...document.querySelectorAll('table[data-chart=arms] tbody tr')].map(r => \
                [r.querySelector('th').textContent, \
                r.querySelector('[data-field=assigned]').textContent, \
                r.querySelector('[data-field=goalReached]').textContent])
                """
            )
                as? [[String]])
        let apiArms =
            ((variants["experiments"] as? [[String: Any]])?.first?["variants"] as? [[String: Any]] ?? []).map
        {
            [
                $0["variant"] as? String ?? "", "\($0["assigned"] as? Int ?? -1)",
                "\($0["goalReached"] as? Int ?? -1)",
            ]
        }
        let started = population.accounts.filter { $0.reached > 0 }
        let ownArms = ["full", "short"].map { variant in
            [
                variant, "\(started.filter { $0.variant == variant }.count)",
                "\(started.filter { $0.variant == variant && $0.ending == "completed" }.count)",
            ]
        }
        #expect(arms.sorted { $0[0] < $1[0] } == ownArms)
        #expect(apiArms.sorted { $0[0] < $1[0] } == ownArms)
        // A date range: only the first reaches of those days.
        let firstDay = population.accounts.map(\.day).min()!
        let day = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: firstDay)).prefix(10)
        try browser.open(
            URL(
                string: server.url.absoluteString
                    + "/dashboard/apps/growth/flows/welcome?from=\(day)&to=\(day)")!)
        let ranged = try funnelTable(browser, "s2")
        let startedThatDay = population.accounts.filter { $0.reached > 0 && $0.day == firstDay }.count
        #expect(ranged[0].1 == startedThatDay)

        // Sign out: the session ends on the server, and every page sends the browser to sign in again.
        try browser.leave { _ = try browser.evaluate("document.querySelector('form.sign-out').submit()") }
        #expect(browser.location.hasSuffix("/dashboard/sign-in"))
        try browser.open(server.url.appendingPathComponent("dashboard"))
        #expect(browser.location.hasSuffix("/dashboard/sign-in"))
        #expect(try Self.curl(server.url.appendingPathComponent("dashboard"), cookie: value).status == 303)
        #expect(try server.sql("SELECT count(*) FROM dashboard_sessions") == ["0"])
    }

    // MARK: - Hostile input

    @Test func forgedExpiredOrTamperedSessionsMarkupAndHugeRangesAreRefusedOrEscaped() async throws {
        let server = try ServerProcess(environment: ["LOG_LEVEL": "info"])
        // A step id with markup, as a device could push it.
        let hostile = "<img src=x onerror=alert(1)>"
        let token = try await TokenSignerForTests().token(account: "mallory", app: "growth")
        let item = PushItem(
            seq: 1, time: 1_764_000_000, event: "next", catalogVersion: 1,
            facts: [
                .object([
                    "fact": "flowStarted", "flow": "welcome", "plan": .strings([hostile]),
                    "catalogVersion": 1,
                ]),
                .object(["fact": "stepEntered", "flow": "welcome", "step": .string(hostile), "index": 1]),
            ], records: [:])
        let pushed = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/mallory/push"), token: token,
            body: Data(try PushBatch(device: "m1", items: [item]).tourValue.jsonUTF8()))
        #expect(pushed.status == 200)
        try await Self.waitUntilCounted(server)
        let session = try signIn(server)

        // Rendered inert: the markup is text on the page, in the CSV it cannot run as a formula.
        let funnel = try Self.curl(
            server.url.appendingPathComponent("dashboard/apps/growth/flows/welcome"), cookie: session)
        #expect(funnel.status == 200)
        #expect(!funnel.body.contains(hostile))
        #expect(funnel.body.contains("&lt;img src"))
        // What the refusals below must leave as it is (counted by now: the page caught up first).
        let before = try server.sql(
            "SELECT (SELECT count(*) FROM insight_counts) || ' ' || (SELECT count(*) FROM dashboard_sessions)"
        )
        let browser = try Browser()
        try browser.open(server.url.appendingPathComponent("dashboard/sign-in"))
        _ = try browser.evaluate(
            "document.querySelector('input[name=credential]').value = '\(try server.operatorCredential())'")
        try browser.leave { _ = try browser.evaluate("document.querySelector('form').submit()") }
        try browser.open(server.url.appendingPathComponent("dashboard/apps/growth/flows/welcome"))
        #expect(try browser.evaluate("document.querySelectorAll('img').length") as? Int == 0)
        #expect(try browser.evaluate("document.body.innerText.includes('\(hostile)')") as? Bool == true)

        // Ids with markup in the path, a huge or reversed or malformed range, an unknown format: refused,
        // escaped.
        for (path, status) in [
            ("dashboard/apps/%3Cscript%3Ealert(1)%3C%2Fscript%3E", 400),
            ("dashboard/apps/growth/flows/%3Cb%3Ex%3C%2Fb%3E", 400),
            ("dashboard/apps/growth/flows/welcome?from=2000-01-01&to=2100-12-31", 400),
            ("dashboard/apps/growth/flows/welcome?from=2026-02-01&to=2026-01-01", 400),
            ("dashboard/apps/growth?from=%3Cscript%3E", 400),
            ("dashboard/apps/growth?format=%3Cscript%3E", 400),
            ("dashboard/apps/nosuchapp", 404),
            ("dashboard/nosuchpage", 404),
            ("dashboard/apps/growth/flows/welcome/%3Cb%3Ex%3C%2Fb%3E", 404),
        ] {
            let answer = try Self.curl(URL(string: server.url.absoluteString + "/" + path)!, cookie: session)
            #expect(answer.status == status, "\(path)")
            #expect(!answer.body.lowercased().contains("<script"), "\(path)")
            #expect(!answer.body.contains("<b>"), "\(path)")
        }
        let unknown = try Self.curl(
            server.url.appendingPathComponent("dashboard/nosuchpage"), cookie: session)
        #expect(unknown.body.contains("There is no such dashboard page"))
        #expect(
            unknown.body.contains("<html") || unknown.body.contains("<!DOCTYPE")
                || unknown.body.contains("<!doctype"))
        let slash = try Self.curl(URL(string: server.url.absoluteString + "/dashboard/")!, cookie: session)
        #expect(slash.status == 200, "a trailing slash is the overview")
        // Without a session, an unknown page says nothing of what exists: it goes to sign in.
        let anonymous = try Self.curl(server.url.appendingPathComponent("dashboard/nosuchpage"), cookie: nil)
        #expect(anonymous.status == 303)
        let huge = try Self.curl(
            URL(string: server.url.absoluteString + "/dashboard/apps/growth?from=2000-01-01&to=2100-12-31")!,
            cookie: session)
        #expect(huge.body.contains("at most 731 days"))

        // Forged, tampered and expired sessions open nothing and go to sign in.
        var tampered = Array(session)
        tampered[5] = tampered[5] == "A" ? "B" : "A"
        for cookie in [String(repeating: "A", count: 43), String(tampered), "not-a-session", session + "x"] {
            let answer = try Self.curl(server.url.appendingPathComponent("dashboard"), cookie: cookie)
            #expect(answer.status == 303)
            #expect(answer.location?.hasSuffix("/dashboard/sign-in") == true)
        }
        let credentialID = try #require(
            try server.sql("SELECT id FROM person_credentials WHERE person = 'operator'").first)
        // A session lasts no longer than the credential that opened it. The credential must live long
        // enough to sign in and open a page, however loaded the machine: a life too short for that
        // (the sign-in refused as expired, or the page sent back to sign in) is tried again, twice as long.
        var shortLived: [String] = []
        var expiring: String?
        var expiresAt = Date()
        for seconds in [2, 4, 8, 16, 32, 64] as [Int64] where expiring == nil {
            let made = try await TokenSignerForTests().personToken(
                "operator", credential: credentialID, seconds: seconds)
            shortLived.append(made)
            expiresAt = Date(timeIntervalSince1970: Double(Int64(Date().timeIntervalSince1970) + seconds))
            guard let cookie = try? signIn(server, credential: made),
                try Self.curl(server.url.appendingPathComponent("dashboard"), cookie: cookie).status == 200
            else { continue }
            expiring = cookie
        }
        let expiringCookie = try #require(
            expiring, "no short-lived credential, even of 64 s, opened the dashboard")
        try await Task.sleep(for: .seconds(max(0, expiresAt.timeIntervalSinceNow) + 1))
        let expired = try Self.curl(server.url.appendingPathComponent("dashboard"), cookie: expiringCookie)
        #expect(expired.status == 303)
        // The browser is told to forget the cookie that opened nothing.
        #expect(expired.setCookieHeader?.hasPrefix("onboarding_session=;") == true)
        #expect(expired.setCookieHeader?.contains("Max-Age=0") == true)
        // An account token, a forged token, a retired shared admin token and no token do not sign in.
        for bad in [
            token, "obt2.forged.token", "", await (try TokenSignerForTests()).adminToken(seconds: 600),
        ] {
            let answer = try Self.postSignIn(server, credential: bad)
            #expect([401, 403].contains(answer.status))
            #expect(answer.setCookie == nil)
            if !bad.isEmpty { #expect(!answer.body.contains(bad)) }
        }
        // Nothing changed: the counts and the live sessions are as they were (the expired one aside).
        let after = try server.sql(
            """
            SELECT (SELECT count(*) FROM insight_counts) || ' ' || (SELECT count(*) FROM \
            dashboard_sessions WHERE expires_at > extract(epoch from now()))
            """
        )
        #expect(
            after
                == before.map {
                    $0.split(separator: " ")[0] + " " + String(Int($0.split(separator: " ")[1])! + 1)
                })
        #expect(server.logText.contains("/dashboard"), "the server logs every request at info")
        #expect(!server.logText.contains(session))
        for made in shortLived { #expect(!server.logText.contains(made)) }
    }
}
