import Foundation
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures

/// The studio in a real headless Chromium against the real server and PostgreSQL: an
/// editor starts a draft of Mood Tracker's catalog, changes a title in English and Brazilian
/// Portuguese, sees a missing translation flagged and fixes it, previews the card in pt-BR at the
/// largest text size with VoiceOver, walks on, sees the check pass and the diff; each save is a
/// revision and an audit row; a forged or stale save changes nothing.
@Suite("The studio", .serialized, .ownThread)
struct StudioTests {
    static func field(_ locale: String, _ id: String) -> String { "textarea[name=\"text|\(locale)|\(id)\"]" }

    /// Types `text` into a field the way the page's form sends it (the browser's own value).
    static func fill(_ browser: Browser, _ selector: String, _ text: String) throws {
        let literal = String(decoding: try JSONSerialization.data(withJSONObject: [text]), as: UTF8.self)
        let set = try browser.evaluate(
            """
            (() => { const f = document.querySelector('\(selector)'); if (!f) return false; f.value \
            = \(literal)[0]; return true })()
            """
        )
        try #require(set as? Bool == true, "no field \(selector)")
    }

    static func text(_ browser: Browser, _ selector: String) throws -> String? {
        try browser.evaluate("document.querySelector('\(selector)')?.textContent ?? null") as? String
    }

    static func value(_ browser: Browser, _ selector: String) throws -> String? {
        try browser.evaluate("document.querySelector('\(selector)')?.value ?? null") as? String
    }

    static func audit(_ browser: Browser) throws {
        let problems = try AccessibilityAudit.problems(browser)
        #expect(problems.isEmpty, "\(problems)")
    }

    static func save(_ browser: Browser) throws {
        try browser.leave {
            _ = try browser.evaluate("document.querySelector('section.editor form').submit()")
        }
    }

    @Test func anEditorChangesTranslatesPreviewsAndChecksAFlowInTheBrowser() async throws {
        let server = try ServerProcess()
        try JourneyDashboardTests.registerReleases("moodtracker", folder: "MoodTracker", on: server)
        let editor = try server.credential("pat", role: "editor", app: "moodtracker")
        let viewer = try server.credential("val", role: "viewer", app: "moodtracker")
        let browser = try Browser()

        // A viewer reads the studio and may not start a draft.
        try JourneyDashboardTests.signIn(browser, server, viewer)
        // Found from the app's page: its studio is in the navigation of every page.
        try browser.open(server.url.appendingPathComponent("dashboard/apps/moodtracker"))
        try browser.leave {
            _ = try browser.evaluate(
                "document.querySelector('nav a[href=\"/dashboard/apps/moodtracker/studio\"]').click()")
        }
        #expect(browser.title.hasPrefix("Studio: moodtracker"), "\(browser.title)")
        #expect(
            try browser.evaluate("document.querySelector('form[action$=\"/studio/drafts\"]') === null")
                as? Bool == true)
        try Self.audit(browser)
        try browser.leave { _ = try browser.evaluate("document.querySelector('form.sign-out').submit()") }

        // The editor starts a draft from the newest version (2): it is version 3.
        try JourneyDashboardTests.signIn(browser, server, editor)
        try browser.open(server.url.appendingPathComponent("dashboard/apps/moodtracker/studio"))
        try browser.leave {
            _ = try browser.evaluate("document.querySelector('form[action$=\"/studio/drafts\"]').submit()")
        }
        #expect(
            browser.location.hasSuffix("/dashboard/apps/moodtracker/studio/drafts/1"), "\(browser.location)")
        #expect(
            try browser.evaluate(
                "document.body.textContent.includes('Version 3, started from version 2; revision 1')")
                as? Bool == true)
        #expect(
            try browser.evaluate("document.body.textContent.includes('passes every check publishing runs')")
                as? Bool == true)

        // A title in English and in pt-BR.
        let title = "tutorial.swipeToSelect.title"
        #expect(try Self.value(browser, Self.field("en", title)) == "Swipe to Select")
        try Self.fill(browser, Self.field("en", title), "Swipe to record a mood")
        try Self.fill(browser, Self.field("pt-BR", title), "Deslize para registrar")
        try Self.save(browser)
        #expect(
            try browser.evaluate("document.body.textContent.includes('Saved as revision 2.')") as? Bool
                == true)
        #expect(try Self.value(browser, Self.field("en", title)) == "Swipe to record a mood")
        #expect(try Self.value(browser, Self.field("pt-BR", title)) == "Deslize para registrar")

        // A translation emptied is flagged beside its field and in the translations table; filled, it is not.
        let body = "tutorial.swipeToSelect.body"
        try Self.fill(browser, Self.field("pt-BR", body), "")
        try Self.save(browser)
        let flagged = try #require(
            try browser.evaluate(
                """
                (() => { const f = document.querySelector('\(Self.field("pt-BR", body))'); return \
                f.getAttribute('aria-invalid') + ' ' + \
                document.getElementById(f.getAttribute('aria-describedby')).textContent })()
                """
            )
                as? String)
        #expect(flagged.hasPrefix("true Missing: no pt-BR text"), "\(flagged)")
        #expect(
            try browser.evaluate(
                """
                [...document.querySelectorAll('table')].find(t => t.caption.textContent === \
                'Translations').tBodies[0].rows[0].cells[1].textContent
                """
            ) as? String == "1")
        try Self.fill(
            browser, Self.field("pt-BR", body),
            "Deslize em direções diferentes para registrar como você se sente.")
        try Self.save(browser)
        #expect(
            try browser.evaluate(
                "document.querySelector('\(Self.field("pt-BR", body))').hasAttribute('aria-invalid')")
                as? Bool == false)
        try Self.audit(browser)

        _ = try browser.evaluate("document.getElementById('editor')?.scrollIntoView()")
        try DashboardTests().saveScreenshot(browser, "dashboard-studio")
        // The diff against version 2 says what changed; the check still passes.
        #expect(
            try browser.evaluate("document.body.textContent.includes('passes every check publishing runs')")
                as? Bool == true)
        let diff = try #require(
            try browser.evaluate(
                """
                [...document.querySelectorAll('table')].find(t => \
                t.caption.textContent.startsWith('Against version 2')).textContent
                """
            ) as? String)
        #expect(diff.contains("swipeToSelect"), "\(diff)")

        // The preview in pt-BR at the largest text size with VoiceOver: the engine's card.
        try browser.open(
            URL(
                string: server.url.absoluteString
                    + """
                    /dashboard/apps/moodtracker/studio/drafts/1/preview?flow=tutorial&step=swipeToSelect&\
                    locale=pt-BR&textSize=accessibilityExtraExtraExtraLarge&voiceOver=on
                    """
            )!)
        #expect(try Self.text(browser, ".device [data-field=title]") == "Deslize para registrar")
        #expect(try Self.text(browser, ".device [data-field=progress]") == "Passo 1 de 3")
        #expect(
            try browser.evaluate("document.querySelector('.device').dataset.textSize") as? String
                == "accessibilityExtraExtraExtraLarge")
        #expect(try browser.evaluate("document.querySelector('.device').lang") as? String == "pt-BR")
        let spoken = try #require(
            try browser.evaluate("[...document.querySelectorAll('.spoken li')].map(l => l.textContent)")
                as? [String])
        #expect(spoken.prefix(2) == ["Passo 1 de 3", "Deslize para registrar, heading"], "\(spoken)")
        try Self.audit(browser)
        try DashboardTests().saveScreenshot(browser, "dashboard-studio-preview")
        // Walk on by the card's first action: the next card, as the engine moves.
        try browser.leave { _ = try browser.evaluate("document.querySelector('.device a.action').click()") }
        #expect(try Self.text(browser, ".device [data-field=progress]") == "Passo 2 de 3")
        #expect(browser.location.contains("walk=next"))

        // A save made from an older revision changes nothing and says why; so does a forged one.
        let cookie = try #require(
            try browser.cookies(for: server.url.appendingPathComponent("dashboard")).first {
                $0["name"] as? String == "onboarding_session"
            }?["value"]
                as? String)
        let token = try #require(
            try { () throws -> String? in
                try browser.open(
                    server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts/1"))
                return try browser.evaluate("document.querySelector('input[name=form_token]').value")
                    as? String
            }())
        let origin = "Origin: \(server.url.absoluteString)"
        let stale = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts/1/texts"),
            cookie: cookie,
            form: "form_token=\(token)&revision=2&text%7Cen%7C\(title)=Stale", headers: [origin])
        #expect(stale.status == 409, "\(stale.status) \(stale.body)")
        #expect(stale.body.contains("nothing was saved"))
        let forged = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts/1/texts"),
            cookie: cookie,
            form: "revision=4&text%7Cen%7C\(title)=Forged", headers: [origin])
        #expect(forged.status == 403)
        let unknown = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts/1/texts"),
            cookie: cookie,
            form: "form_token=\(token)&revision=4&text%7Cen%7Ctutorial.nowhere.title=X", headers: [origin])
        #expect(unknown.status == 400)
        #expect(unknown.body.contains("Nothing was saved"))

        // Two saves made from the same revision at once: one is saved, the other refused as stale
        // (never a failure of the server).
        let answers = Locked([Int]())
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let answer = try? DashboardTests.curl(
                server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts/1/texts"),
                cookie: cookie,
                form: "form_token=\(token)&revision=4&text%7Cen%7C\(title)=Race\(index)", headers: [origin])
            answers.withLock { $0.append(answer?.status ?? 0) }
        }
        #expect(answers.withLock { $0.sorted() } == [303, 409])

        // Every save a revision with its author, and an audit row each.
        #expect(
            try server.sql(
                """
                SELECT revision || ' ' || author FROM catalog_drafts WHERE app = 'moodtracker' ORDER BY \
                revision
                """
            )
                == ["1 pat", "2 pat", "3 pat", "4 pat", "5 pat"])
        #expect(
            try server.sql(
                """
                SELECT action || ' ' || actor FROM audit_log WHERE app = 'moodtracker' AND action LIKE \
                'catalog.draft%' ORDER BY id
                """
            )
                == ["catalog.draft-started pat"] + Array(repeating: "catalog.draft-saved pat", count: 4))
        let stored = try #require(
            try server.sql("SELECT document FROM catalog_drafts WHERE revision = 4").first)
        let catalog = try TourValue(jsonText: stored)
        #expect(catalog.objectValue?["version"]?.intValue == 3)
        #expect(stored.contains("Swipe to record a mood") && stored.contains("Deslize para registrar"))
    }
}
