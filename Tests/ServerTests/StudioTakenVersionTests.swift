import Foundation
import TestThreads
import Testing
import TourCodec
import TourFixtures

/// Two drafts of one version: once another document is published under it, the other draft's page
/// says its version is taken and offers no publish form (it said it passed every check, and the
/// publish was refused only at the final confirmation). And a draft made during that partial
/// rollout forecasts the users of every version devices run, not only the newest's.
@Suite("The studio: a draft whose version is taken", .ownThread)
struct StudioTakenVersionTests {
    @Test func aDraftWhoseVersionWasPublishedSinceSaysSoAndOffersNoPublish() throws {
        let server = try ServerProcess()
        try JourneyDashboardTests.registerReleases("moodtracker", folder: "MoodTracker", on: server)
        let cookie = try DashboardTests().signIn(server)
        let studio = server.url.appendingPathComponent("dashboard/apps/moodtracker/studio")
        let token = try #require(
            DashboardTests.formToken(try DashboardTests.curl(studio, cookie: cookie).body))
        let started = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts"), cookie: cookie,
            form: "form_token=\(token)&from=2")
        let draft = try #require(started.location, "\(started.status) \(started.body.prefix(300))")
        let page = {
            try DashboardTests.curl(URL(string: server.url.absoluteString + draft)!, cookie: cookie).body
        }
        #expect(try page().contains("passes every check publishing runs"))
        #expect(try page().contains("/publish\""), "a publisher sees the publish form")

        // Another document is published as version 3 (another draft, or the command line).
        let compiled = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("moodtracker").path, ["catalog", "--json"]
        ).stdout
        let other = try PublishingTests.reworded(compiled, title: "Swipe, then rest", version: 3)
        let file = Scratch.folder.appendingPathComponent(
            "v3-\(UUID().uuidString).json")
        try other.write(to: file, atomically: true, encoding: .utf8)
        let published = try server.command([
            "publish", "--app", "moodtracker", "--key", try server.publicationKey(app: "moodtracker"),
            "--rollout", "20", file.path,
        ])
        try #require(published.status == 0, "\(published.stderr)")

        let now = try page()
        #expect(now.contains("Version 3 is taken"), "\(now.prefix(2000))")
        #expect(!now.contains("passes every check publishing runs"))
        #expect(!now.contains("/publish\""), "no publish form for a version that is taken")

        // A draft of version 4 from version 3, live at 20%: its forecast counts the users of both
        // versions devices run (the 80% outside the rollout run version 2, the binaries').
        let next = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/studio/drafts"), cookie: cookie,
            form: "form_token=\(token)&from=3")
        let nextDraft = try #require(next.location, "\(next.status) \(next.body.prefix(300))")
        let forecast = try DashboardTests.curl(
            URL(string: server.url.absoluteString + nextDraft)!, cookie: cookie
        ).body
        #expect(forecast.contains("the versions devices run now (3, 2)"), "\(forecast.prefix(3_000))")
        #expect(forecast.contains("From version 3 (at 20%) they"))
        #expect(forecast.contains("From version 2 (in binaries) they"))
    }
}
