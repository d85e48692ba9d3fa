import AccountSync
import CatalogDocuments
import Foundation
import OnboardingServer
import ServerControlPlane
import ServerTokens
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures

/// Guarded rollouts through real servers and PostgreSQL: a publication made by the real
/// `publish --stages … --guard …`, subjects who run the flow through the engine and push as their
/// devices do, and the rollout guard of the server (every 0.2 s here) raising the rollout or
/// rolling it back by itself. Each new subject takes the published version exactly when the live
/// rollout's bucket includes it, as a device does.
@Suite("Guarded rollouts through a real server", .ownThread)
struct GuardedRolloutServerTests {
    static let app = ExperimentFixture.app
    static let guardOptions = ["--rollout-guard-interval", "0.2"]

    /// The trial app's version 1 (no experiment) registered as compiled, and a publication key.
    static func prepare(_ server: ServerProcess) throws -> String {
        let v1 = CatalogDocument(
            ExperimentFixture.catalog(version: 1, experiment: nil),
            declarations: ExperimentFixture.declarations)
        let file = Scratch.folder.appendingPathComponent("trial-\(UUID().uuidString).json")
        try v1.text().write(to: file, atomically: true, encoding: .utf8)
        let registered = try server.command(["register", "--app", app, file.path])
        guard registered.status == 0 else { throw HarnessFailure("register: \(registered.stderr)") }
        return try server.publicationKey(app: app)
    }

    /// Version 2 published by the real command with `options` (`--stages`, `--guard`, ...).
    static func publishV2(_ server: ServerProcess, key: String, _ options: [String]) throws -> Shell.Result {
        let v2 = CatalogDocument(
            ExperimentFixture.catalog(version: 2, experiment: nil),
            declarations: ExperimentFixture.declarations)
        let file = Scratch.folder.appendingPathComponent("trial-v2-\(UUID().uuidString).json")
        try v2.text().write(to: file, atomically: true, encoding: .utf8)
        return try server.command(["publish", "--app", app, "--key", key] + options + [file.path])
    }

    /// A change that lowers completion by ten points (95% to 85%) is rolled back by the guard
    /// before it passes 25%, with one audit row naming the guard and its evidence; devices are no
    /// longer offered it, and the guard does nothing more.
    @Test func aChangeThatLowersCompletionIsRolledBackBeforeItPassesAQuarter() async throws {
        let server = try ServerProcess(serveOptions: Self.guardOptions)
        let key = try Self.prepare(server)
        let published = try Self.publishV2(
            server, key: key,
            [
                "--stages", "5,25,50,100", "--guard", "completion:-2pp", "--stage-time", "0s",
                "--stage-subjects", "500",
            ])
        #expect(published.status == 0, "\(published.stderr)")
        #expect(published.stdout.contains("rollout 5%"), "\(published.stdout)")
        #expect(published.stdout.contains("guarded: stages 5%, 25%, 50%, 100%"), "\(published.stdout)")

        var population = try Population(server, seed: 10)
        var highest = 5
        var status = "running"
        for _ in 0..<20 where status == "running" {
            try await population.arrive(candidates: 100, baselines: 100, completion: [1: 0.95, 2: 0.85])
            let looked = try population.untilLooked()
            status = looked.status
            highest = max(highest, looked.rollout)
        }
        #expect(status == "rolled-back", "after \(population.pushed) subjects")
        #expect(highest <= 25, "the rollout reached \(highest)%")
        #expect(try population.rollout() == 0)
        let rows = try server.sql(
            """
            SELECT actor, source, details FROM audit_log WHERE app = 'trial' AND action = \
            'rollout.rolled-back'
            """
        )
        #expect(rows.count == 1, "\(rows)")
        let fields = rows.first?.split(separator: "|", maxSplits: 2).map(String.init) ?? []
        #expect(fields.first == "rollout guard")
        #expect(fields.dropFirst().first?.contains("pid") == true)
        let details = try TourValue(jsonText: fields.last ?? "{}").objectValue ?? [:]
        let upper = details["interval"]?.listValue?.last.flatMap {
            if case .double(let value) = $0 { value } else { nil }
        }
        #expect((upper ?? 0) < -0.02, "\(details)")
        #expect(details["candidate"]?.objectValue?["version"]?.intValue == 2)
        // Devices are offered version 2 no more: every device falls back on its next pull (a
        // device mid-flow on it goes by the flow's policy, as after a rollback by hand).
        let token = await population.signer.sign(
            TokenClaims(
                subject: "late", scope: .account, app: "trial",
                expires: Int64(Date().timeIntervalSince1970) + 600))
        let list = try await HTTP.get(
            server.url.appendingPathComponent("v1/apps/trial/catalogs"), token: token)
        #expect((list.json["publications"] as? [Any])?.isEmpty == true, "\(list.json)")
        // The guard is done: more subjects change nothing, and the command line says so.
        try await population.arrive(candidates: 0, baselines: 50, completion: [1: 0.95, 2: 0.85])
        usleep(600_000)
        #expect(try server.sql("SELECT count(*) FROM audit_log WHERE action LIKE 'rollout.%'") == ["2"])
        let shown = try server.command(["rollout", "show", "--app", "trial"])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("version 2 against 1: rolled-back"), "\(shown.stdout)")
        #expect(
            shown.stdout.contains("rolled back: the guardrail shows a drop beyond 2 pts"), "\(shown.stdout)")
        let resumed = try server.command(["rollout", "resume", "--app", "trial", "--version", "2"])
        #expect(
            resumed.status == 1 && resumed.stderr.contains("the guarded rollout is rolled-back"),
            "\(resumed.stderr)")
    }

    /// The same through real Mood Tracker devices: a device mid-flow on the guarded version when
    /// the guard rolls it back is not stranded (it goes on at the same step of the version below),
    /// and a new device runs the compiled catalog. The other subjects run the product's own
    /// catalogs through the engine and push as their devices do.
    @Test func realDevicesFallBackWhenTheGuardRollsBackAndOneMidFlowIsNotStranded() async throws {
        let server = try ServerProcess(serveOptions: Self.guardOptions)
        try JourneyDashboardTests.registerReleases("moodtracker", folder: "MoodTracker", on: server)
        let key = try server.publicationKey(app: "moodtracker")
        let compiled = try #require(
            try server.sql("SELECT document FROM catalogs WHERE app = 'moodtracker' AND version = 2").first)
        let v3 = try PublishingTests.reworded(compiled, title: "Swipe to choose", version: 3)
        let file = Scratch.folder.appendingPathComponent("moodtracker-v3-\(UUID().uuidString).json")
        try v3.write(to: file, atomically: true, encoding: .utf8)
        let published = try server.command([
            "publish", "--app", "moodtracker", "--key", key, "--stages", "5,25,50,100", "--guard",
            "completion:-2pp",
            "--stage-time", "0s", "--stage-subjects", "500", file.path,
        ])
        #expect(published.status == 0, "\(published.stderr)")

        // A device the 5% draws, mid-flow on version 3's second step.
        var midFlow: Device?
        for index in 0..<120 where midFlow == nil {
            let device = JourneyDashboardTests.virtual(
                try Device("moodtracker", account: "m-\(index)", server: server), kind: "phone")
            #expect(try device.run("launch").status == 0)
            if try StudioTests.status(device).source == "published" { midFlow = device }
        }
        let device = try #require(midFlow, "no install of 120 drawn by 5%: odds about 1 in 470")
        for line in ["wait 0.5", "do next", "sync"] {
            #expect(try device.run(line.split(separator: " ").map(String.init)).status == 0)
        }
        #expect(try StudioTests.status(device).step == "viewHistory")

        var population = try Population(
            server, seed: 13, app: "moodtracker", candidate: 3,
            engines: [
                2: TourEngine(catalog: try CatalogDocument(text: compiled).catalog),
                3: TourEngine(catalog: try CatalogDocument(text: v3).catalog),
            ])
        var (status, highest) = ("running", 5)
        for _ in 0..<20 where status == "running" {
            try await population.arrive(candidates: 100, baselines: 100, completion: [2: 0.95, 3: 0.85])
            let looked = try population.untilLooked(besides: 1)
            (status, highest) = (looked.status, max(highest, looked.rollout))
        }
        #expect(
            status == "rolled-back" && highest <= 25, "\(status) at \(highest)% after \(population.pushed)")

        // The device mid-flow, told by its next sync (a relaunch would end Mood Tracker's tutorial
        // by the product's own rule), goes on where it was on the compiled catalog; a new device
        // runs that catalog too.
        #expect(try device.run("sync").status == 0)
        let after = try StudioTests.status(device)
        #expect(after.source == "compiled" && after.step == "viewHistory", "\(after)")
        #expect(try device.run("do", "next").status == 0)
        #expect(try StudioTests.status(device).step == "allSet")
        let newcomer = JourneyDashboardTests.virtual(
            try Device("moodtracker", account: "m-new", server: server), kind: "phone")
        #expect(try newcomer.run("launch").status == 0)
        #expect(try StudioTests.status(newcomer).source == "compiled")
    }

    /// A neutral change goes through every stage to 100%; paused, it stays where it is however
    /// many subjects come; resumed, it goes on. A rollout under a guard is not raised by hand.
    @Test func aNeutralChangeReachesEveryStageAndAPausedOneStaysWhereItIs() async throws {
        let server = try ServerProcess(serveOptions: Self.guardOptions)
        let key = try Self.prepare(server)
        let published = try Self.publishV2(
            server, key: key,
            [
                "--stages", "10,50,100", "--guard", "completion:-5pp", "--stage-time", "1s",
                "--stage-subjects", "100",
            ])
        #expect(published.status == 0, "\(published.stderr)")
        var population = try Population(server, seed: 11)
        try await population.arrive(candidates: 100, baselines: 100, completion: [1: 0.9, 2: 0.9])
        _ = try population.untilLooked()
        // The stage's minimum time is met by now (a second), its subjects too: raised.
        #expect(try population.untilRollout(leaves: 10) == 50)

        // Raising by hand is refused while the guard holds it.
        let byHand = try server.command([
            "publish", "--app", "trial", "--rollout", "100", "--key", key, Self.v2File(),
        ])
        #expect(byHand.status == 1)
        #expect(byHand.stderr.contains("is under a guarded rollout (running, at 50%)"), "\(byHand.stderr)")

        // The app's page shows the rollout, the guardrail at each look and, to a publisher, the
        // commands; the pause is a form of the dashboard's, refused from another site.
        let publisher = try server.credential("pia", role: "publisher", app: "trial")
        let viewer = try server.credential("vic", role: "viewer", app: "trial")
        let session = try DashboardTests().signIn(server, credential: publisher)
        let page = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/trial"), cookie: session)
        #expect(page.status == 200)
        for expected in [
            "Guarded rollouts: raised stage by stage", "2 of 3: 10% → 50% → 100%",
            "completion of tour may drop by at most 5 pts",
            "Version 2: the guardrail at each look", "raised to 50%", "Pause the guard of version 2",
        ] {
            #expect(page.body.contains(expected), "\(expected)")
        }
        let viewerPage = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/trial"),
            cookie: try DashboardTests().signIn(server, credential: viewer))
        #expect(viewerPage.body.contains("Guarded rollouts") && !viewerPage.body.contains("Pause the guard"))
        let token = try #require(DashboardTests.formToken(page.body))
        let pause = server.url.appendingPathComponent("dashboard/apps/trial/rollouts/2/pause")
        let crossSite = try DashboardTests.curl(
            pause, cookie: session, form: "form_token=\(token)",
            headers: ["Origin: https://evil.example", "Sec-Fetch-Site: cross-site"])
        #expect(crossSite.status == 403)
        #expect(try server.sql("SELECT status FROM guarded_rollouts") == ["running"])
        let paused = try DashboardTests.curl(
            pause, cookie: session, form: "form_token=\(token)",
            headers: ["Origin: \(server.url.absoluteString)"])
        #expect(paused.status == 303, "\(paused.body)")
        #expect(try server.sql("SELECT status FROM guarded_rollouts") == ["paused"])
        try await population.arrive(candidates: 150, baselines: 150, completion: [1: 0.9, 2: 0.9])
        usleep(2_000_000)
        #expect(try population.rollout() == 50, "a paused rollout stays where it is")

        // Resumed through the API by a publisher: the stage's clock starts again, then it goes on.
        let resume = server.url.appendingPathComponent("v1/apps/trial/rollouts/2/resume")
        #expect(try await HTTP.post(resume, token: viewer, body: Data()).status == 403)
        let resumed = try await HTTP.post(resume, token: publisher, body: Data())
        #expect(resumed.status == 200, "\(String(decoding: resumed.body, as: UTF8.self))")
        #expect(try population.untilRollout(leaves: 50) == 100)
        try await population.arrive(candidates: 100, baselines: 100, completion: [1: 0.9, 2: 0.9])
        var final = try population.untilLooked()
        let finalDeadline = Date().addingTimeInterval(60)
        while final.status == "running", Date() < finalDeadline {
            usleep(200_000)
            final = try population.untilLooked()
        }
        #expect(final.status == "complete" && final.rollout == 100)
        let actions = try server.sql(
            "SELECT action || ' ' || actor FROM audit_log WHERE action LIKE 'rollout.%' ORDER BY id")
        let atTheDatabase = Actor.commandLine().name
        #expect(
            actions == [
                "rollout.guarded \(atTheDatabase)", "rollout.raised rollout guard", "rollout.paused pia",
                "rollout.resumed pia",
                "rollout.raised rollout guard", "rollout.completed rollout guard",
            ], "\(actions)")
        // The guardrail's interval over time, as the API gives it.
        let list = try await HTTP.get(
            server.url.appendingPathComponent("v1/apps/trial/rollouts"), token: viewer)
        let rollout = try #require((list.json["rollouts"] as? [[String: Any]])?.first)
        #expect(rollout["status"] as? String == "complete")
        #expect(((rollout["looks"] as? [Any])?.count ?? 0) >= 3)
    }

    /// The studio publishes a draft as a guarded rollout: the stages and guardrail on its publish
    /// form, said on the confirmation page, stored with the publication; a plan that is not one is
    /// refused and publishes nothing.
    @Test func theStudioPublishesADraftAsAGuardedRollout() async throws {
        let server = try ServerProcess(serveOptions: Self.guardOptions)
        let keyFile = try Self.prepare(server)
        let session = try DashboardTests().signIn(
            server, credential: try server.credential("pia", role: "publisher", app: "trial"))
        let origin = "Origin: \(server.url.absoluteString)"
        let studio = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/trial/studio"), cookie: session)
        let token = try #require(DashboardTests.formToken(studio.body))
        let started = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/trial/studio/drafts"), cookie: session,
            form: "form_token=\(token)&from=1",
            headers: [origin])
        #expect(started.status == 303, "\(started.body)")
        let draftPage = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/trial/studio/drafts/1"), cookie: session)
        #expect(draftPage.body.contains("Guarded rollout (optional)"), "\(draftPage.body.prefix(300))")
        let document = try #require(
            try server.sql("SELECT document FROM catalog_drafts WHERE app = 'trial' AND draft = 1").first)
        let key = try PublicationSigningKey(fileText: String(contentsOfFile: keyFile, encoding: .utf8))
        let signature = try key.sign(document: document)
        let encoded = signature.signature.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let publish = server.url.appendingPathComponent("dashboard/apps/trial/studio/drafts/1/publish")
        let form =
            """
            form_token=\(token)&revision=1&rollout=100&key=\(signature.key)&signature=\(encoded)&guard=co\
            mpletion%3A-5pp
            """
            + "&stage_time=1h&stage_subjects=100"

        let falling = try DashboardTests.curl(
            publish, cookie: session, form: form + "&stages=50%2C10", headers: [origin])
        #expect(falling.status == 400)
        #expect(falling.body.contains("rising percentages from 1 to 100"), "\(falling.body)")
        let confirmation = try DashboardTests.curl(
            publish, cookie: session, form: form + "&stages=10%2C50%2C100", headers: [origin])
        #expect(confirmation.status == 200)
        #expect(
            confirmation.body.contains("Publish version 2 of trial at 10% (the first of its stages)?"),
            "\(confirmation.body)")
        #expect(
            confirmation.body.contains(
                "A guarded rollout: the rollout guard raises it through 10%, 50%, 100%"))
        #expect(try server.sql("SELECT count(*) FROM catalogs WHERE app = 'trial' AND version = 2") == ["0"])

        let confirmed = try DashboardTests.curl(
            publish, cookie: session, form: form + "&stages=10%2C50%2C100&confirm=yes", headers: [origin])
        #expect(confirmed.status == 303, "\(confirmed.body)")
        #expect(try server.sql("SELECT rollout FROM catalogs WHERE app = 'trial' AND version = 2") == ["10"])
        #expect(
            try server.sql(
                "SELECT stages, guard_metric, guard_flow, minimum_seconds, status FROM guarded_rollouts")
                == ["{10,50,100}|completion:-5pp|tour|3600|running"])
        #expect(try server.sql("SELECT actor FROM audit_log WHERE action = 'rollout.guarded'") == ["pia"])
        // The studio shows the guard, offers its commands and no rollout form for the guarded version.
        let after = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard/apps/trial/studio"), cookie: session)
        #expect(
            after.body.contains("1 of 3: 10% → 50% → 100%")
                && after.body.contains("Pause the guard of version 2"))
        #expect(!after.body.contains("Version 2 at (%)") && after.body.contains("Roll back version 2"))
    }

    /// The connections holding the rollout guard's lock in `server`'s database, by application
    /// name (which names the server's pid).
    static func guardHolders(_ server: ServerProcess) throws -> [String] {
        try server.sql(
            """
            SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objid = \(0x0B0A_6A7D) AND l.classid = 0
                AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """)
    }

    static func v2File() throws -> String {
        let v2 = CatalogDocument(
            ExperimentFixture.catalog(version: 2, experiment: nil),
            declarations: ExperimentFixture.declarations)
        let file = Scratch.folder.appendingPathComponent("trial-v2-\(UUID().uuidString).json")
        try v2.text().write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }
}
