import Foundation
import TestThreads
import Testing
import TourFixtures

/// Translators' files through the studio in a real browser: an XLIFF file for a new locale and a
/// String Catalog of every locale downloaded from a draft, translated here as a tool would,
/// pasted back (each a new revision whose note says what changed), previewed in the new locale,
/// published signed in the browser, and shown by a device in that locale. A file with a wrong
/// translation saves nothing; a viewer downloads but cannot import.
@Suite("The studio: translation files", .ownThread)
struct StudioTranslationTests {
    @Test func anXLIFFAndAStringCatalogGoOutComeBackArePreviewedAndPublished() async throws {
        let server = try ServerProcess()
        try JourneyDashboardTests.registerReleases("moodtracker", folder: "MoodTracker", on: server)
        let keyFile = try server.publicationKey(app: "moodtracker")
        let publisher = try server.credential("pia", role: "publisher", app: "moodtracker")
        let browser = try Browser()
        try JourneyDashboardTests.signIn(browser, server, publisher)
        try browser.open(server.url.appendingPathComponent("dashboard/apps/moodtracker/studio"))
        try browser.leave {
            _ = try browser.evaluate("document.querySelector('form[action$=\"/studio/drafts\"]').submit()")
        }
        let draft = browser.location.components(separatedBy: "?")[0]
        #expect(draft.hasSuffix("/studio/drafts/1"), "\(draft)")
        #expect(
            try browser.evaluate("document.body.textContent.includes('XLIFF 2.0 for pt-BR')") as? Bool == true
        )

        // Out: the XLIFF for French, as the page's own form asks for it (a download: curl with
        // the same person's session, since the page's policy lets no script fetch).
        let session = try DashboardTests().signIn(server, credential: publisher)
        func download(_ query: String) throws -> (text: String, name: String) {
            let answer = try DashboardTests.curl(
                URL(string: "\(draft)/strings?\(query)")!, cookie: session, headers: [])
            #expect(answer.status == 200, "\(answer.body)")
            return (answer.body, answer.headers["content-disposition"] ?? "")
        }
        #expect(
            try browser.evaluate(
                "document.querySelector('form[action$=\"/strings\"][method=get] input[name=locale]') !== null"
            ) as? Bool == true)
        let xliff = try download("format=xliff&locale=fr")
        #expect(xliff.name == "attachment; filename=\"moodtracker-3-fr.xliff\"")
        #expect(xliff.text.contains(#"srcLang="en" trgLang="fr""#))
        #expect(xliff.text.contains("<source>Swipe to Select</source>"))

        // Back: pasted into the form, a new revision that says what it took.
        func paste(_ file: String) throws {
            try browser.leave {
                _ = try browser.evaluate(
                    """
                    (() => { const f = \
                    document.querySelector('form[action$=\"/strings\"][method=post]'); \
                    f.querySelector('textarea[name=file]').value = \(String(reflecting: file)); \
                    f.submit() })()
                    """
                )
            }
        }
        try paste(TranslationTool.fill(xliff.text, prefix: "FR "))
        #expect(
            try browser.evaluate("document.body.textContent.includes('Saved as revision 2.')") as? Bool
                == true, "\(browser.location)")
        #expect(
            try server.sql("SELECT note FROM catalog_drafts WHERE draft = 1 AND revision = 2")
                == ["imported translations: fr: 17 added, 0 changed, 0 unchanged"])

        // A String Catalog of every locale: one Portuguese text changed by the translator.
        #expect(
            try download("format=table&locale=pt-BR").name
                == "attachment; filename=\"moodtracker-3-pt-BR.json\"")
        let catalog = try download("format=xcstrings")
        #expect(catalog.name == "attachment; filename=\"moodtracker-3-all.xcstrings\"")
        var root = try #require(
            try JSONSerialization.jsonObject(with: Data(catalog.text.utf8)) as? [String: Any])
        var texts = try #require(root["strings"] as? [String: [String: Any]])
        var title = try #require(texts["tutorial.allSet.title"])
        var localizations = try #require(title["localizations"] as? [String: Any])
        #expect(
            (localizations["fr"] as? [String: [String: String]])?["stringUnit"]?["value"]
                == "FR You're All Set!")
        localizations["pt-BR"] = ["stringUnit": ["state": "translated", "value": "Tudo certo!"]]
        title["localizations"] = localizations
        texts["tutorial.allSet.title"] = title
        root["strings"] = texts
        try paste(String(decoding: try JSONSerialization.data(withJSONObject: root), as: UTF8.self))
        #expect(
            try browser.evaluate("document.body.textContent.includes('Saved as revision 3.')") as? Bool
                == true)
        let note = try #require(
            try server.sql("SELECT note FROM catalog_drafts WHERE draft = 1 AND revision = 3").first)
        #expect(
            note.contains("fr: 0 added, 0 changed, 17 unchanged")
                && note.contains("pt-BR: 0 added, 1 changed, 16 unchanged"), "\(note)")

        // A wrong translation saves nothing and says which.
        try paste(
            TranslationTool.fill(xliff.text, prefix: "FR ").replacingOccurrences(
                of: "<target>FR Step {step} of {total}</target>", with: "<target>Étape</target>"))
        #expect(
            try browser.evaluate(
                """
                document.body.textContent.includes('the fr text of progress.step leaves out {step}, \
                {total}')
                """
            )
                as? Bool == true)
        #expect(try server.sql("SELECT max(revision) FROM catalog_drafts WHERE draft = 1") == ["3"])

        // The editor shows each text with its locales side by side: one group a text, one field a locale.
        try browser.open(URL(string: draft + "?flow=tutorial&step=swipeToSelect")!)
        let groups = try #require(
            try browser.evaluate(
                """
                [...document.querySelectorAll('#editor fieldset.text')].map(f => \
                f.querySelector('legend').textContent + ':' + [...f.querySelectorAll('textarea')].map(t \
                => t.lang).join(','))
                """
            ) as? [String])
        #expect(groups.count >= 4, "\(groups)")
        #expect(groups.allSatisfy { $0.hasSuffix(":en,fr,pt-BR") }, "\(groups)")
        #expect(groups.contains("title:en,fr,pt-BR"), "\(groups)")

        // Previewed in French, as the engine shows the card.
        try browser.open(URL(string: draft + "/preview?flow=tutorial&step=swipeToSelect&locale=fr")!)
        #expect(
            try browser.evaluate("document.body.textContent.includes('FR Swipe to Select')") as? Bool == true)

        // Published at 100%, signed in the browser; a device in French shows the new texts.
        try browser.open(URL(string: draft)!)
        let keyText = try String(contentsOfFile: keyFile, encoding: .utf8)
        _ = try browser.evaluate("window.studioSign(\(String(reflecting: keyText)))")
        _ = try browser.evaluate("document.querySelector('[name=rollout]').value = '100'")
        try StudioTests.submitAndConfirm(
            browser, "/publish", confirming: "goes to 100% of moodtracker's subjects")
        let published = try browser.evaluate("document.body.textContent") as? String ?? ""
        #expect(
            published.contains("Version 3 is published at 100%."),
            "\(browser.location): \(published.prefix(600))")
        let device = try Device("moodtracker", account: "francoise", server: server)
        #expect(try device.run("--locale", "fr", "launch").status == 0)
        let shown = try device.run("--locale", "fr", "wait", "0.5")
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("FR Swipe to Select"), "\(shown.stdout)")
        // The Portuguese text the String Catalog changed, in the same published version.
        let finished = try device.run("--locale", "pt-BR", "do", "next")
        #expect(finished.status == 0)
        let last = try device.run("--locale", "pt-BR", "do", "next")
        #expect(last.stdout.contains("Tudo certo!"), "\(finished.stdout)\n\(last.stdout)")

        // A viewer downloads, but is offered no import and cannot post one.
        let viewer = try DashboardTests().signIn(
            server, credential: try server.credential("vi", role: "viewer", app: "moodtracker"))
        let page = try DashboardTests.curl(URL(string: draft)!, cookie: viewer)
        #expect(page.body.contains("XLIFF 2.0 for fr") && !page.body.contains("name=\"file\""))
        let token = try #require(StudioTests.token(in: page.body))
        let refused = try DashboardTests.curl(
            URL(string: draft + "/strings")!, cookie: viewer, form: "form_token=\(token)&revision=3&file=x",
            headers: ["Origin: \(server.url.absoluteString)"])
        #expect(refused.status == 403)
        #expect(try server.sql("SELECT max(revision) FROM catalog_drafts WHERE draft = 1") == ["3"])

        // Only the import takes a form larger than 16 KiB, and it too has a bound.
        let editorToken = try #require(
            StudioTests.token(in: try DashboardTests.curl(URL(string: draft)!, cookie: session).body))
        func post(_ path: String, fileBytes: Int) throws -> DashboardTests.CurlAnswer {
            try DashboardTests.curl(
                URL(string: draft + path)!, cookie: session,
                form: "form_token=\(editorToken)&revision=3&file=" + String(repeating: "a", count: fileBytes),
                headers: ["Origin: \(server.url.absoluteString)"])
        }
        let large = try post("/strings", fileBytes: 40_000)
        #expect(large.status == 422 && large.body.contains("not a translation file"), "\(large.status)")
        #expect(try post("/texts", fileBytes: 40_000).status == 413)
        let overFile = try post("/strings", fileBytes: 3 << 19)
        #expect(overFile.status == 422, "\(overFile.status) \(overFile.body.prefix(400))")
        #expect(overFile.body.contains("a translation file is at most 1048576 bytes"))
        // Past the form's bound the server answers 413 and stops reading: curl, still sending,
        // may see the connection closed instead of the answer.
        let huge = try post("/strings", fileBytes: 4 << 20)
        #expect([0, 413].contains(huge.status), "\(huge.status) \(huge.body.prefix(300))")
        #expect(try server.sql("SELECT max(revision) FROM catalog_drafts WHERE draft = 1") == ["3"])
    }
}
