import Foundation
import Testing
import TourCodec
import TourCore

extension StudioTests {
    /// Steps changed in forms: one added (shaped like a step the binary declares), a timer, the
    /// skip policy, a step moved; each a revision, the check passing, the preview counting it.
    @Test func anEditorAddsAStepSetsATimerAndTheSkipPolicy() async throws {
        let server = try ServerProcess()
        try JourneyDashboardTests.registerReleases("moodtracker", folder: "MoodTracker", on: server)
        let editor = try server.credential("pat", role: "editor", app: "moodtracker")
        let browser = try Browser()
        try JourneyDashboardTests.signIn(browser, server, editor)
        try browser.open(server.url.appendingPathComponent("dashboard/apps/moodtracker/studio"))
        try browser.leave {
            _ = try browser.evaluate("document.querySelector('form[action$=\"/studio/drafts\"]').submit()")
        }
        func submit(_ op: String, _ values: [String: String]) throws {
            let assignments = values.map {
                "f.querySelector('[name=\($0.key)]').value = \(String(reflecting: $0.value));"
            }.joined()
            try browser.leave {
                _ = try browser.evaluate(
                    """
                    (() => { const f = [...document.querySelectorAll('form')].find(f => \
                    f.querySelector('input[name=op][value=\(op)]')); \(assignments) f.submit() })()
                    """
                )
            }
        }
        func steps() throws -> [String] {
            try #require(
                try browser.evaluate(
                    """
                    [...[...document.querySelectorAll('table')].find(t => \
                    t.caption.textContent.startsWith('Steps of')).tBodies[0].rows].map(r => \
                    r.cells[1].textContent + ' ' + r.cells[5].textContent)
                    """
                )
                    as? [String])
        }
        try submit("add", ["like": "allSet", "id": "reminder"])
        let added = try steps()
        #expect(added == ["swipeToSelect no", "reminder no", "viewHistory no", "allSet no"], "\(added)")
        try submit("timer", ["seconds": "5"])
        #expect(try steps()[1] == "reminder after 5 s")
        try submit("skip", ["policy": "recordSkipped"])
        try submit("down", [:])
        #expect(
            try steps().map { $0.components(separatedBy: " ")[0] } == [
                "swipeToSelect", "viewHistory", "reminder", "allSet",
            ])
        #expect(
            try browser.evaluate("document.body.textContent.includes('passes every check publishing runs')")
                as? Bool == true)
        // The new step's texts have no pt-BR yet: flagged; a bad timer is refused, nothing saved.
        #expect(
            try browser.evaluate(
                """
                document.querySelector('\(Self.field("pt-BR", "tutorial.reminder.title"))').getAttribute(\
                'aria-invalid')
                """
            ) as? String == "true")
        try submit("timer", ["seconds": "-3"])
        #expect(
            try browser.evaluate("document.body.textContent.includes('at most 3600, or empty for none')")
                as? Bool == true)
        let stored = try #require(
            try server.sql(
                "SELECT document FROM catalog_drafts WHERE draft = 1 ORDER BY revision DESC LIMIT 1"
            ).first)
        #expect(stored.contains("\"skip\":\"recordSkipped\""), "\(stored.prefix(400))")
        #expect(try server.sql("SELECT max(revision) FROM catalog_drafts") == ["5"])
        // A refused text save keeps what was typed and says why beside the field (no script needed).
        try browser.open(
            URL(
                string: server.url.absoluteString
                    + "/dashboard/apps/moodtracker/studio/drafts/1?flow=tutorial&step=reminder")!)
        try Self.fill(browser, Self.field("en", "tutorial.reminder.title"), "  ")
        try Self.fill(browser, Self.field("pt-BR", "tutorial.reminder.title"), "Lembrete")
        try Self.save(browser)
        let beside = try #require(
            try browser.evaluate(
                """
                (() => { const f = \
                document.querySelector('\(Self.field("en", "tutorial.reminder.title"))'); return f.value \
                + '|' + document.getElementById(f.getAttribute('aria-describedby')).textContent })()
                """
            )
                as? String)
        #expect(
            beside
                == "  |The source language's text cannot be empty: write it, or remove the step. "
                + "Nothing was saved.",
            "\(beside)")
        #expect(try Self.value(browser, Self.field("pt-BR", "tutorial.reminder.title")) == "Lembrete")
        #expect(try server.sql("SELECT max(revision) FROM catalog_drafts") == ["5"])
        try browser.open(
            URL(
                string: server.url.absoluteString
                    + "/dashboard/apps/moodtracker/studio/drafts/1/preview?flow=tutorial&step=reminder")!)
        #expect(try Self.text(browser, ".device [data-field=progress]") == "Step 3 of 4")

        // Renames and removals compose into one migration from version 2: a step added here needs
        // none; viewHistory renamed twice and then removed is one removal of viewHistory.
        try browser.open(
            URL(
                string: server.url.absoluteString
                    + "/dashboard/apps/moodtracker/studio/drafts/1?flow=tutorial&step=reminder")!)
        try submit("rename", ["to": "nudge"])
        try browser.open(
            URL(
                string: server.url.absoluteString
                    + "/dashboard/apps/moodtracker/studio/drafts/1?flow=tutorial&step=viewHistory")!)
        try submit("rename", ["to": "history"])
        try submit("rename", ["to": "timeline"])
        try submit("remove", ["users": "goOnAtNext"])
        #expect(
            try steps().map { $0.components(separatedBy: " ")[0] } == ["swipeToSelect", "nudge", "allSet"])
        #expect(
            try browser.evaluate("document.body.textContent.includes('passes every check publishing runs')")
                as? Bool == true)
        let migrated = try #require(
            try server.sql(
                "SELECT document FROM catalog_drafts WHERE draft = 1 ORDER BY revision DESC LIMIT 1"
            ).first)
        let migrations = try #require(try TourValue(jsonText: migrated).objectValue?["migrations"])
        let migrationText = try migrations.jsonText()
        #expect(
            migrationText
                == #"[{"flows":{"tutorial":{"removedSteps":{"viewHistory":"goOnAtNext"}}},"from":2}]"#,
            "\(migrationText)")
    }
}
