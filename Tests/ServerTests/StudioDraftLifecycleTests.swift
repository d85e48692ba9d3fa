import Foundation
import TestThreads
import Testing
import TourFixtures

/// A draft's life in the studio beyond its saves: a name, each revision opening on its own page (what
/// restoring it would change), an editor restores one as a new revision (nothing before it lost),
/// and deletes a draft with every revision; a viewer may open but neither restore nor delete; a
/// deletion from a page a save has since made stale deletes nothing; a deleted draft's number is
/// never given again. Each act is one audit row.
@Suite("The studio: a draft's revisions and deletion", .ownThread)
struct CatalogDraftLifecycleTests {
    @Test func revisionsOpenAndRestoreAndADraftIsDeletedWhole() throws {
        let server = try ServerProcess()
        try JourneyDashboardTests.registerReleases("moodtracker", folder: "MoodTracker", on: server)
        let editor = try DashboardTests().signIn(
            server, credential: try server.credential("ed", role: "editor", app: "moodtracker"))
        let origin = "Origin: \(server.url.absoluteString)"
        let base = server.url.absoluteString + "/dashboard/apps/moodtracker/studio"
        func get(_ path: String, _ cookie: String = "") throws -> (status: Int, body: String) {
            let answer = try DashboardTests.curl(
                URL(string: base + path)!, cookie: cookie.isEmpty ? editor : cookie)
            return (answer.status, answer.body)
        }
        func post(_ path: String, _ form: String, _ cookie: String = "") throws -> (
            status: Int, body: String, location: String?
        ) {
            let answer = try DashboardTests.curl(
                URL(string: base + path)!, cookie: cookie.isEmpty ? editor : cookie, form: form,
                headers: [origin])
            return (answer.status, answer.body, answer.location)
        }
        let token = try #require(StudioTests.token(in: try get("").body))
        #expect(try post("/drafts", "form_token=\(token)&from=2").status == 303)
        let field = "text%7Cen%7Ctutorial.swipeToSelect.title"
        #expect(
            try post("/drafts/1/texts", "form_token=\(token)&revision=1&\(field)=Second%20words").status
                == 303)
        #expect(
            try post("/drafts/1/texts", "form_token=\(token)&revision=2&\(field)=Third%20words").status == 303
        )
        func holds(revision: Int, _ text: String) throws -> Bool {
            try server.sql(
                """
                SELECT position('\(text)' in document) > 0 FROM catalog_drafts WHERE draft = 1 AND \
                revision = \(revision)
                """
            ) == ["t"]
        }
        func same(_ one: Int, _ other: Int) throws -> Bool {
            try server.sql(
                """
                SELECT (SELECT document FROM catalog_drafts WHERE draft = 1 AND revision = \(one))
                    = (SELECT document FROM catalog_drafts WHERE draft = 1 AND revision = \(other))
                """) == ["t"]
        }
        #expect(try holds(revision: 3, "Third words"))

        // The draft page links each revision; revision 1 opens and says what restoring it changes.
        let draftPage = try get("/drafts/1").body
        #expect(draftPage.contains("/drafts/1/revisions/1\""), "\(draftPage.suffix(3_000))")
        let opened = try get("/drafts/1/revisions/1")
        #expect(opened.status == 200)
        #expect(
            opened.body.contains("Restoring it changes the newest revision so"),
            "\(opened.body.prefix(3_000))")
        #expect(opened.body.contains("Third words"), "\(opened.body.prefix(3_000))")
        #expect(opened.body.contains("Restore revision 1 as revision 4"))
        #expect(try get("/drafts/1/revisions/9").status == 404)

        // A viewer opens it, but neither restores nor deletes.
        let viewer = try DashboardTests().signIn(
            server, credential: try server.credential("vi", role: "viewer", app: "moodtracker"))
        let viewerPage = try get("/drafts/1/revisions/1", viewer)
        #expect(viewerPage.status == 200)
        #expect(!viewerPage.body.contains("Restore revision"))
        let viewerToken = try #require(StudioTests.token(in: viewerPage.body))
        #expect(
            try post("/drafts/1/restore", "form_token=\(viewerToken)&revision=3&restore=1", viewer).status
                == 403)
        #expect(try post("/drafts/1/delete", "form_token=\(viewerToken)&revision=3", viewer).status == 403)
        // Another site's page posting the restore: refused.
        let forged = try DashboardTests.curl(
            URL(string: base + "/drafts/1/restore")!, cookie: editor,
            form: "form_token=\(token)&revision=3&restore=1",
            headers: ["Origin: https://evil.example"])
        #expect(forged.status == 403)
        #expect(try server.sql("SELECT count(*) FROM catalog_drafts WHERE draft = 1") == ["3"])

        // Restore revision 1: revision 4 holds its text; revisions 2 and 3 stay.
        let restored = try post("/drafts/1/restore", "form_token=\(token)&revision=3&restore=1")
        #expect(restored.status == 303, "\(restored.body.prefix(500))")
        #expect(try same(4, 1))
        #expect(try holds(revision: 3, "Third words") && !(try holds(revision: 4, "Third words")))
        #expect(
            try server.sql("SELECT note FROM catalog_drafts WHERE draft = 1 AND revision = 4") == [
                "restored revision 1"
            ])
        // From a page made before the restore: stale, nothing saved.
        #expect(try post("/drafts/1/restore", "form_token=\(token)&revision=3&restore=2").status == 409)
        // Not a revision before the newest: refused, saying which are.
        let wrong = try post("/drafts/1/restore", "form_token=\(token)&revision=4&restore=4")
        #expect(wrong.status == 400)
        #expect(wrong.body.contains("1 to 3"), "\(wrong.body.prefix(500))")

        // A name for the draft: in the studio's list and the page's title; no revision made.
        #expect(try post("/drafts/1/name", "form_token=\(token)&name=%20Shorter%20welcome%20").status == 303)
        #expect(try get("").body.contains("Draft 1 (Shorter welcome)"))
        #expect(try get("/drafts/1").body.contains("<title>Draft 1 (Shorter welcome) of moodtracker"))
        #expect(try server.sql("SELECT count(*) FROM catalog_drafts WHERE draft = 1") == ["4"])
        // Two lines, or too long: refused, saying what a name may be; a viewer may not name.
        let twoLines = try post("/drafts/1/name", "form_token=\(token)&name=a%0Ab")
        #expect(twoLines.status == 400)
        #expect(twoLines.body.contains("one line of at most 80 characters"), "\(twoLines.body.prefix(500))")
        #expect(
            try post("/drafts/1/name", "form_token=\(token)&name=\(String(repeating: "x", count: 81))").status
                == 400)
        #expect(try post("/drafts/1/name", "form_token=\(viewerToken)&name=Mine", viewer).status == 403)
        #expect(try server.sql("SELECT name FROM catalog_draft_names WHERE draft = 1") == ["Shorter welcome"])

        // Deleting from a page a save has made stale deletes nothing.
        let stale = try post("/drafts/1/delete", "form_token=\(token)&revision=3")
        #expect(stale.status == 409)
        #expect(stale.body.contains("nothing was deleted"))
        #expect(try server.sql("SELECT count(*) FROM catalog_drafts WHERE draft = 1") == ["4"])
        // From the newest: the draft goes with every revision; published and compiled versions stay.
        let catalogs = try server.sql("SELECT count(*) FROM catalogs WHERE app = 'moodtracker'")
        let deleted = try post("/drafts/1/delete", "form_token=\(token)&revision=4")
        #expect(deleted.status == 303)
        #expect(
            deleted.location?.hasSuffix("/studio?done=deleted-1") == true, "\(deleted.location ?? "none")")
        #expect(try get("?done=deleted-1").body.contains("Draft 1 is deleted."))
        #expect(try server.sql("SELECT count(*) FROM catalog_drafts WHERE app = 'moodtracker'") == ["0"])
        #expect(try server.sql("SELECT count(*) FROM catalog_draft_names WHERE app = 'moodtracker'") == ["0"])
        #expect(try server.sql("SELECT count(*) FROM catalogs WHERE app = 'moodtracker'") == catalogs)
        #expect(try get("/drafts/1").status == 404)
        // The next draft is number 2: the audit trail's "draft 1" names one draft only.
        let next = try post("/drafts", "form_token=\(token)&from=2")
        #expect(next.location?.hasSuffix("/studio/drafts/2") == true, "\(next.location ?? "none")")
        // One audit row per act.
        #expect(
            try server.sql(
                """
                SELECT action || ' ' || target FROM audit_log WHERE app = 'moodtracker' AND action LIKE \
                'catalog.draft-%' ORDER BY id
                """
            ) == [
                "catalog.draft-started draft 1", "catalog.draft-saved draft 1", "catalog.draft-saved draft 1",
                "catalog.draft-saved draft 1", "catalog.draft-renamed draft 1",
                "catalog.draft-deleted draft 1",
                "catalog.draft-started draft 2",
            ])
    }
}
