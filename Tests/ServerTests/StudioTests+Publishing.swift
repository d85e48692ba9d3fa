import Foundation
import Testing
import TourCodec
import TourCore

/// A product manager's day in the studio: remove a step and choose where its users go,
/// read the forecast from the server's own counts, publish at 20% signed in the browser, see new
/// devices draw it by the rollout and a device mid-flow land where the forecast said, raise to
/// 100%, roll back, and find every act on the audit trail.
extension StudioTests {
    static func status(_ device: Device) throws -> (source: String?, step: String?) {
        let status = try device.status()
        let source = (status["catalog"] as? [String: Any])?["source"] as? String
        let flows = status["flows"] as? [[String: Any]] ?? []
        return (source, flows.first { $0["id"] as? String == "tutorial" }?["step"] as? String)
    }

    /// Submits the form whose action ends with `action` (the first one), then confirms on the page
    /// that says what it will do.
    static func submitAndConfirm(_ browser: Browser, _ action: String, confirming words: String) throws {
        try browser.leave {
            _ = try browser.evaluate("document.querySelector('form[action$=\"\(action)\"]').submit()")
        }
        #expect(
            try browser.evaluate("document.body.textContent.includes(\(String(reflecting: words)))") as? Bool
                == true, "\(browser.location)")
        try browser.leave { _ = try browser.evaluate("document.querySelector('main form').submit()") }
        try browser.reloadWhileUnavailable(at: "/studio?done=")
    }

    @Test func aProductManagersDayFromADraftToARollback() async throws {
        let server = try ServerProcess()
        try JourneyDashboardTests.registerReleases("moodtracker", folder: "MoodTracker", on: server)
        let keyFile = try server.publicationKey(app: "moodtracker")
        let publisher = try server.credential("pia", role: "publisher", app: "moodtracker")
        // A device mid-flow on viewHistory, the step the day removes.
        let midFlow = JourneyDashboardTests.virtual(
            try Device("moodtracker", account: "m-mid", server: server), kind: "phone")
        for line in ["launch", "wait 0.5", "do next"] {
            #expect(try midFlow.run(line.split(separator: " ").map(String.init)).status == 0)
        }
        #expect(try midFlow.run("sync").status == 0)
        #expect(try Self.status(midFlow).step == "viewHistory")
        // Another on the same step that will only look (sync and status: no act) while version 3 runs.
        let looking = JourneyDashboardTests.virtual(
            try Device("moodtracker", account: "m-look", server: server), kind: "phone")
        for line in ["launch", "wait 0.5", "do next", "sync"] {
            #expect(try looking.run(line.split(separator: " ").map(String.init)).status == 0)
        }
        try await DashboardTests.waitUntilCounted(server)

        let browser = try Browser()
        try JourneyDashboardTests.signIn(browser, server, publisher)
        try browser.open(server.url.appendingPathComponent("dashboard/apps/moodtracker/studio"))
        try browser.leave {
            _ = try browser.evaluate("document.querySelector('form[action$=\"/studio/drafts\"]').submit()")
        }
        try browser.open(
            URL(string: browser.location.components(separatedBy: "?")[0] + "?flow=tutorial&step=viewHistory")!
        )
        // Remove viewHistory; its users go on at the next step.
        try browser.leave {
            _ = try browser.evaluate(
                """
                (() => { const f = [...document.querySelectorAll('form')].find(f => \
                f.querySelector('input[name=op][value=remove]')); \
                f.querySelector('select[name=users]').value = 'goOnAtNext'; f.submit() })()
                """
            )
        }
        #expect(
            try browser.evaluate("document.body.textContent.includes('passes every check publishing runs')")
                as? Bool == true)
        let forecast = try #require(
            try browser.evaluate(
                """
                [...document.querySelectorAll('table')].find(t => \
                t.caption.textContent.startsWith('Users mid-flow')).tBodies[0].textContent
                """
            )
                as? String)
        #expect(forecast.contains("viewHistory2go on at allSet"), "\(forecast)")

        // Publish at 20%: signed in the browser with the key file (read there, never sent).
        let keyText = try String(contentsOfFile: keyFile, encoding: .utf8)
        _ = try browser.evaluate("window.studioSign(\(String(reflecting: keyText)))")
        let signature = try #require(
            try browser.evaluate("document.querySelector('[name=signature]').value") as? String)
        #expect(signature.count == 88, "\(signature)")
        _ = try browser.evaluate("document.querySelector('[name=rollout]').value = '20'")
        // The confirmation names the users affected per step and the step they go on at.
        try browser.leave {
            _ = try browser.evaluate("document.querySelector('form[action$=\"/publish\"]').submit()")
        }
        let confirming = try #require(try browser.evaluate("document.body.textContent") as? String)
        #expect(confirming.contains("goes to 20% of moodtracker's subjects"))
        #expect(
            confirming.contains(
                "tutorial step viewHistory (2 users waiting there): from version 2 they go on at allSet."),
            "\(confirming)")
        #expect(
            try browser.evaluate(
                """
                [...document.querySelectorAll('table')].some(t => \
                t.caption.textContent.startsWith('Users mid-flow in tutorial'))
                """
            )
                as? Bool == true)
        try browser.leave { _ = try browser.evaluate("document.querySelector('main form').submit()") }
        try browser.reloadWhileUnavailable(at: "/studio?done=")
        let published = try browser.evaluate("document.body.textContent") as? String ?? ""
        #expect(
            published.contains("Version 3 is published at 20%."),
            "\(browser.location): \(published.prefix(600))")

        // New devices draw it by the rollout on their first launch (Mood Tracker's tutorial is the
        // install's: the draw is by the install), some in and some out.
        var drawn: Set<Bool> = []
        for index in 0..<40 where drawn.count < 2 {
            let device = JourneyDashboardTests.virtual(
                try Device("moodtracker", account: "new-\(index)", server: server), kind: "phone")
            #expect(try device.run("launch").status == 0)
            let id = try Shell.run("/usr/bin/sqlite3", [device.database.path, "SELECT id FROM sync_device"])
                .stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let included = Rollout.includes(
                subject: "install:" + id, salt: "moodtracker/catalog/3", percent: 20)
            #expect(try Self.status(device).source == (included ? "published" : "compiled"), "new-\(index)")
            drawn.insert(included)
        }
        #expect(drawn.count == 2, "40 installs all on one side of 20%: odds about 1 in 7,500")

        // Raise to 100%: the device mid-flow lands where the forecast said.
        try browser.open(server.url.appendingPathComponent("dashboard/apps/moodtracker/studio"))
        _ = try browser.evaluate(
            "document.querySelector('form[action$=\"/studio/rollout\"] input[name=rollout]').value = '100'")
        try Self.submitAndConfirm(browser, "/studio/rollout", confirming: "from 20% to 100%")
        #expect(
            try browser.evaluate("document.body.textContent.includes('Version 3 is published at 100%.')")
                as? Bool == true)
        #expect(try looking.run("sync").status == 0)
        #expect(try Self.status(looking).source == "published")
        #expect(try Self.status(looking).step == "allSet", "shown moved, as version 3 places it")
        let relaunch = try midFlow.run("launch")
        #expect(relaunch.status == 0)
        #expect(try Self.status(midFlow).source == "published")
        // The run moved as the forecast said (then the tutorial's own policy discards a run a relaunch
        // interrupts).
        #expect(
            try midFlow.run("journal").stdout.contains(
                "tutorial run moved from catalog v2 viewHistory to v3 allSet"))

        // Roll back: devices go back to the compiled catalog; the page warns that a move only shown
        // (no act since) goes back with them.
        try Self.submitAndConfirm(
            browser, "/studio/rollback",
            confirming:
                """
                goes back to the step it was on in version 2 (in binaries): tutorial viewHistory, where \
                version 3 has them go on at allSet
                """
        )
        #expect(
            try browser.evaluate("document.body.textContent.includes('Version 3 is rolled back.')") as? Bool
                == true)
        #expect(try midFlow.run("launch").status == 0)
        #expect(try Self.status(midFlow).source == "compiled")
        // The one that only looked goes back to the step it was on, as the confirmation said.
        #expect(try looking.run("sync").status == 0)
        #expect(try Self.status(looking).source == "compiled")
        #expect(try Self.status(looking).step == "viewHistory")

        // Every act, by its person, on the audit trail.
        #expect(
            try server.sql(
                """
                SELECT action || ' ' || actor || ' ' || coalesce(target, '') FROM audit_log WHERE app = \
                'moodtracker' AND actor = 'pia' ORDER BY id
                """
            )
                == [
                    "catalog.draft-started pia draft 1", "catalog.draft-saved pia draft 1",
                    "catalog.published pia version 3",
                    "catalog.rollout-changed pia version 3", "catalog.withdrawn pia version 3",
                ])
        // A draft that breaks a rule cannot be published: the form is not offered, and a post is refused.
    }
}

extension StudioTests {
    /// A draft that breaks a rule (here an effect the app's binary does not declare, as a hand-made
    /// revision would carry) shows why, offers no publish form, and a post to publish it is refused
    /// with the problem; a document this server cannot read is refused whole.
    @Test func aDraftThatBreaksARuleCannotBePublishedAndSaysWhy() async throws {
        let server = try ServerProcess()
        try JourneyDashboardTests.registerReleases("moodtracker", folder: "MoodTracker", on: server)
        _ = try server.publicationKey(app: "moodtracker")
        let publisher = try server.credential("pia", role: "publisher", app: "moodtracker")
        let browser = try Browser()
        try JourneyDashboardTests.signIn(browser, server, publisher)
        try browser.open(server.url.appendingPathComponent("dashboard/apps/moodtracker/studio"))
        try browser.leave {
            _ = try browser.evaluate("document.querySelector('form[action$=\"/studio/drafts\"]').submit()")
        }
        #expect(
            try browser.evaluate("document.querySelector('form[data-signing]') !== null") as? Bool == true)
        let document = try #require(
            try server.sql("SELECT document FROM catalog_drafts WHERE draft = 1").first)
        #expect(document.contains("\"markTutorialSeen\""))
        let broken = document.replacingOccurrences(
            of: "\"markTutorialSeen\"", with: "\"markTutorialSeenTwice\"")
        _ = try server.sql(
            """
            INSERT INTO catalog_drafts SELECT app, draft, 2, version, $doc$\(broken)$doc$, based_on, \
            author, saved_at, 'by hand' FROM catalog_drafts WHERE draft = 1
            """
        )
        try browser.open(server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts/1"))
        let check = try #require(
            try browser.evaluate(
                """
                [...document.querySelectorAll('table')].find(t => \
                t.caption.textContent.startsWith('Check:'))?.textContent
                """
            ) as? String)
        #expect(check.contains("cannot be published") && check.contains("markTutorialSeenTwice"), "\(check)")
        #expect(
            try browser.evaluate("document.querySelector('form[data-signing]') === null") as? Bool == true)
        let cookie = try #require(
            try browser.cookies(for: server.url.appendingPathComponent("dashboard")).first {
                $0["name"] as? String == "onboarding_session"
            }?["value"]
                as? String)
        let token = try #require(
            try browser.evaluate("document.querySelector('input[name=form_token]').value") as? String)
        let refused = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts/1/publish"),
            cookie: cookie,
            form: "form_token=\(token)&revision=2&rollout=20&key=k&signature=c2ln",
            headers: ["Origin: \(server.url.absoluteString)"])
        #expect(refused.status == 422, "\(refused.status)")
        #expect(
            refused.body.contains("cannot be published") && refused.body.contains("markTutorialSeenTwice"))
        #expect(
            try server.sql("SELECT count(*) FROM catalogs WHERE app = 'moodtracker' AND version = 3") == ["0"]
        )
        // An editor (who may save drafts) may not publish, with a token of their own session.
        let editorCookie = try DashboardTests().signIn(
            server, credential: try server.credential("ed", role: "editor", app: "moodtracker"))
        let editorPage = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts/1"),
            cookie: editorCookie)
        let editorToken = try #require(
            editorPage.body.range(of: #"name="form_token" value="([^"]+)""#, options: .regularExpression).map
            {
                String(editorPage.body[$0].dropFirst(#"name="form_token" value=""#.count).dropLast())
            })
        let byEditor = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/rollback"),
            cookie: editorCookie,
            form: "form_token=\(editorToken)&version=2&confirm=yes",
            headers: ["Origin: \(server.url.absoluteString)"])
        #expect(byEditor.status == 403, "\(byEditor.status) \(byEditor.body.prefix(300))")
        #expect(byEditor.body.contains("needs the publisher role"))
        // A newer format than this server reads: refused whole, saying so.
        let newer = document.replacingOccurrences(of: "\"format\":3", with: "\"format\":99")
        #expect(newer != document)
        _ = try server.sql(
            """
            INSERT INTO catalog_drafts SELECT app, draft, 3, version, $doc$\(newer)$doc$, based_on, \
            author, saved_at, 'by hand' FROM catalog_drafts WHERE draft = 1 AND revision = 1
            """
        )
        let unreadable = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts/1"), cookie: cookie)
        #expect(unreadable.status == 422, "\(unreadable.status)")
        #expect(
            unreadable.body.contains("not a catalog document this server reads"),
            "\(unreadable.body.prefix(600))")
    }
}
