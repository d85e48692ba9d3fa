import Foundation
import Testing

/// The studio's forms against what an attacker sends: another site's post, a replayed save, an
/// oversized form, a person without the role. Each is refused with its reason and changes nothing.
/// (No studio form carries a time: every time is the server's, so a skewed client clock has
/// nothing to skew.)
extension StudioTests {
    static func token(in page: String) -> String? {
        page.range(of: #"name="form_token" value="([^"]+)""#, options: .regularExpression).map {
            String(page[$0].dropFirst(#"name="form_token" value=""#.count).dropLast())
        }
    }

    @Test func studioFormsRefuseForgedReplayedOversizedAndWrongRoleRequests() async throws {
        let server = try ServerProcess()
        try JourneyDashboardTests.registerReleases("moodtracker", folder: "MoodTracker", on: server)
        let editor = try DashboardTests().signIn(
            server, credential: try server.credential("ed", role: "editor", app: "moodtracker"))
        let origin = "Origin: \(server.url.absoluteString)"
        let studio = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio"), cookie: editor)
        let token = try #require(Self.token(in: studio.body))
        let started = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts"), cookie: editor,
            form: "form_token=\(token)&from=2", headers: [origin])
        #expect(started.status == 303)
        let texts = server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts/1/texts")
        let field = "text%7Cen%7Ctutorial.swipeToSelect.title"
        func revisions() throws -> [String] { try server.sql("SELECT count(*) FROM catalog_drafts") }

        // Another site's page posting with the victim's cookie (and even a stolen token): refused.
        let crossSite = try DashboardTests.curl(
            texts, cookie: editor, form: "form_token=\(token)&revision=1&\(field)=Forged",
            headers: ["Origin: https://evil.example"])
        #expect(crossSite.status == 403)
        #expect(crossSite.body.contains("did not come from a page of this dashboard"))
        // A save, then the same request again: the replay changes nothing (the text is already so),
        // and one from the same old revision with other text is stale; neither is saved.
        let saved = try DashboardTests.curl(
            texts, cookie: editor, form: "form_token=\(token)&revision=1&\(field)=Once", headers: [origin])
        #expect(saved.status == 303)
        let replayed = try DashboardTests.curl(
            texts, cookie: editor, form: "form_token=\(token)&revision=1&\(field)=Once", headers: [origin])
        #expect(replayed.status == 303)
        #expect(try revisions() == ["2"])
        let stale = try DashboardTests.curl(
            texts, cookie: editor, form: "form_token=\(token)&revision=1&\(field)=Twice", headers: [origin])
        #expect(stale.status == 409)
        #expect(stale.body.contains("nothing was saved"))
        // An oversized form (over 16 KiB): refused whole before it is read.
        let big = String(repeating: "x", count: 20_000)
        let oversized = try DashboardTests.curl(
            texts, cookie: editor, form: "form_token=\(token)&revision=2&\(field)=\(big)", headers: [origin])
        #expect(oversized.status == 413)
        #expect(oversized.body.contains("at most 16 KiB"))
        // A viewer, with a token of their own session, may read but not save.
        let viewer = try DashboardTests().signIn(
            server, credential: try server.credential("vi", role: "viewer", app: "moodtracker"))
        let viewerPage = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts/1"), cookie: viewer)
        #expect(viewerPage.status == 200)
        let viewerToken = try #require(Self.token(in: viewerPage.body))
        let byViewer = try DashboardTests.curl(
            texts, cookie: viewer, form: "form_token=\(viewerToken)&revision=2&\(field)=Viewer",
            headers: [origin])
        #expect(byViewer.status == 403)
        #expect(byViewer.body.contains("needs the editor role"))
        // Another app's draft through this app's role: not found there, nothing read.
        let elsewhere = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/finite/studio/drafts/1"), cookie: editor)
        #expect(elsewhere.status == 403)
        #expect(try revisions() == ["2"])
        #expect(
            try server.sql("SELECT note FROM catalog_drafts WHERE revision = 2") == [
                "tutorial.swipeToSelect.title in en"
            ])
    }
}
