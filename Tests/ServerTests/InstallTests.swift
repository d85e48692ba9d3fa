import Foundation
import TestThreads
import Testing
import TourCodec
import TourFixtures
import TourRuntime

/// Installs as subjects: apps without sign-in enroll each install with the app's public
/// enrollment key, and the install then syncs, gets publications and counts on the dashboard like
/// an account, through real servers, real PostgreSQL and the products' real CLIs.
@Suite("Installs without sign-in", .ownThread)
struct InstallTests {
    static func enroll(_ server: ServerProcess, app: String, key: String) async throws -> HTTP.Answer {
        try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/\(app)/installs"),
            body: Data(try TourValue.members(["enrollmentKey": .string(key)]).jsonUTF8()))
    }

    static func flows(_ server: ServerProcess, app: String, subject: String, token: String?) async throws
        -> Int
    {
        try await HTTP.get(
            server.url.appendingPathComponent("v1/apps/\(app)/accounts/\(subject)/flows"), token: token
        ).status
    }

    @Test func anInstallEnrollsWithItsAppsKeyAndItsCredentialOpensItsOwnSubjectOnly() async throws {
        let server = try ServerProcess(environment: ["LOG_LEVEL": "info"])
        let finiteKey = try #require(registeredProducts.first { $0.executable == "finite" }?.enrollmentKey)
        // No key accepted yet: refused, and nothing is enrolled.
        let early = try await Self.enroll(server, app: "finite", key: finiteKey)
        #expect(early.status == 403)
        #expect(early.errorCode == "enrollment_refused")
        try server.acceptEnrollments(of: "finite")
        let growthKey = try server.acceptEnrollments(of: "growth")

        let first = try await Self.enroll(server, app: "finite", key: finiteKey)
        #expect(first.status == 201)
        let subject = try #require(first.json["subject"] as? String)
        let credential = try #require(first.json["credential"] as? String)
        #expect(subject.hasPrefix("install.") && subject.count == "install.".count + 32)
        #expect(try await Self.flows(server, app: "finite", subject: subject, token: credential) == 200)

        // Another install: a subject of its own, which the first one's credential does not open.
        let second = try await Self.enroll(server, app: "finite", key: finiteKey)
        let other = try #require(second.json["subject"] as? String)
        #expect(other != subject)
        #expect(try await Self.flows(server, app: "finite", subject: other, token: credential) == 403)
        // Not another app's, not an account's; and no account token opens an install.
        #expect(try await Self.flows(server, app: "growth", subject: subject, token: credential) == 403)
        #expect(try await Self.flows(server, app: "finite", subject: "ann", token: credential) == 403)
        let annToken = try server.token(account: "ann", app: "finite")
        #expect(try await Self.flows(server, app: "finite", subject: subject, token: annToken) == 403)
        #expect(try await Self.flows(server, app: "finite", subject: subject, token: nil) == 401)
        var tampered = Array(credential)
        tampered[tampered.count - 3] = tampered[tampered.count - 3] == "A" ? "B" : "A"
        #expect(try await Self.flows(server, app: "finite", subject: subject, token: String(tampered)) == 401)
        // A name in the installs' namespace cannot be minted as an account.
        let minted = try server.command(["token", "--app", "finite", "--account", subject])
        #expect(minted.status != 0)
        #expect(minted.stderr.contains("installs'"))

        // Another app's key, malformed bodies: refused with one message each, nothing enrolled.
        #expect(try await Self.enroll(server, app: "finite", key: growthKey).status == 403)
        #expect(try await Self.enroll(server, app: "finite", key: "short").status == 400)
        let notJSON = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/finite/installs"), body: Data("key=1".utf8))
        #expect(notJSON.status == 400)
        #expect(notJSON.json["error"] != nil)
        #expect(try server.sql("SELECT count(*) FROM installs") == ["2"])

        // A retired key enrolls no one new; installs enrolled with it keep working.
        let retired = try server.command(["enrollment-keys", "retire", "--app", "finite", finiteKey])
        #expect(retired.status == 0, "\(retired.stderr)")
        #expect(try await Self.enroll(server, app: "finite", key: finiteKey).status == 403)
        #expect(try await Self.flows(server, app: "finite", subject: subject, token: credential) == 200)
        let listed = try server.command(["enrollment-keys", "list", "--app", "finite"])
        #expect(listed.stdout.contains(finiteKey) && listed.stdout.contains("retired"))
        #expect(
            try server.sql(
                """
                SELECT action FROM audit_log WHERE action LIKE 'enrollment-key.%' AND app = 'finite' \
                ORDER BY id
                """
            )
                == ["enrollment-key.added", "enrollment-key.retired"])
        // The credential is never logged.
        #expect(!server.logText.contains(credential))
    }

    @Test func enrollmentsFromOneAddressAreLimited() async throws {
        let server = try ServerProcess(serveOptions: ["--enrollments-per-minute", "3"])
        let key = try server.acceptEnrollments(of: "moodtracker")
        for _ in 0..<3 { #expect(try await Self.enroll(server, app: "moodtracker", key: key).status == 201) }
        let limited = try await Self.enroll(server, app: "moodtracker", key: key)
        #expect(limited.status == 429)
        #expect(
            limited.retryAfter.flatMap(Int.init).map { $0 >= 1 && $0 <= 20 } == true,
            "\(limited.retryAfter ?? "none")")
        // Guessing keys costs the same: the limit is on attempts, not on successes.
        #expect(try await Self.enroll(server, app: "moodtracker", key: "guess-guess-guess-1").status == 429)
        #expect(try server.sql("SELECT count(*) FROM installs") == ["3"])
    }

    /// A Finite install with no token: its first command that reaches the server enrolls it, its
    /// credential is kept sealed (the database alone does not give it away), a published wording
    /// change reaches it on its next launch, and its walkthrough counts in the app's report.
    @Test func aFiniteInstallEnrollsGetsAPublishedWordingAndCountsInTheReport() async throws {
        let server = try ServerProcess()
        let admin = try server.operatorCredential()
        try server.acceptEnrollments(of: "finite")
        let device = try Device(asInstall: "finite", server: server)
        let launched = try device.run("launch")
        #expect(launched.status == 0, "\(launched.stderr)")
        let subject = try #require(
            try server.sql("SELECT 'install.' || install FROM installs WHERE app = 'finite'").first)
        #expect(try device.run("wait", "1.5").stdout.contains("Your Life in Weeks"))
        #expect(try device.run("sync").status == 0)
        #expect(
            try server.sql("SELECT count(*) > 0 FROM pushes WHERE app = 'finite' AND account = '\(subject)'")
                == ["t"])

        // Sealed: neither the database file nor its journal holds the credential; the key file
        // beside it is its owner's only.
        let sealed = try Shell.run(
            "/usr/bin/sqlite3", [device.database.path, "SELECT sealed FROM secret_store"]
        ).stdout
        let box = try #require(Data(base64Encoded: sealed.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(box.range(of: Data("install.".utf8)) == nil, "sealed, not encoded")
        // Neither in the file nor in its write-ahead log: no JWT header (HS256, as this server signs) in any
        // order.
        for file in [device.database.path, device.database.path + "-wal"]
        where FileManager.default.fileExists(atPath: file) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            for header in ["eyJhbGci", "eyJraWQi", "eyJ0eXAi", "\"credential\""] {
                #expect(bytes.range(of: Data(header.utf8)) == nil, "\(header) in \(file)")
            }
        }
        let keyFile = device.database.path + ".secrets-key"
        let mode = try #require(
            try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int)
        #expect(mode & 0o077 == 0, "mode \(String(mode, radix: 8))")
        // Every later command uses the kept credential: still one install.
        #expect(try device.run("status").status == 0)
        #expect(try server.sql("SELECT count(*) FROM installs") == ["1"])

        // A wording change published for every Finite install, without an app release.
        let compiled = try PublishingTests.registerCompiled(of: "finite", on: server)
        let version = try #require(try TourValue(jsonText: compiled).objectValue?["version"]?.intValue) + 1
        let reworded = try PublishingTests.reworded(
            compiled, title: "Your Life, Week by Week", version: version)
        let published = try await PublishingTests().publish(
            server, admin, reworded, rollout: 100, key: try server.publicationKey(app: "finite"),
            app: "finite")
        try #require(published.status == 201, "\(String(decoding: published.body, as: UTF8.self))")
        let status = try device.status()
        #expect((status["catalog"] as? [String: Any])?["source"] as? String == "published")
        #expect(try device.run("reset").status == 0)
        #expect(try device.run("launch").status == 0)
        #expect(try device.run("wait", "1.5").stdout.contains("Your Life, Week by Week"))

        // Counted: the report has the install's walkthrough, and its facts are the install's.
        #expect(try device.run("sync").status == 0)
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/finite/report"), token: admin
        ).json
        let walkthrough = try #require(
            (report["flows"] as? [[String: Any]])?.first { $0["flow"] as? String == "walkthrough" })
        #expect(walkthrough["started"] as? Int == 1)
        #expect(report["accounts"] as? Int == 1)
        #expect(try server.sql("SELECT DISTINCT account FROM facts WHERE app = 'finite'") == [subject])

        // A copy of the database without its key file cannot use the credential: it enrolls anew.
        let copy = Scratch.folder.appendingPathComponent("copy-\(UUID().uuidString).sqlite")
        try FileManager.default.copyItem(at: device.database, to: copy)
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARDING_SERVER"] = server.url.absoluteString
        environment["ONBOARDING_TOKEN"] = nil
        let fromCopy = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("finite").path, ["sync", "--db", copy.path],
            environment: environment)
        #expect(fromCopy.status == 0, "\(fromCopy.stderr)")
        #expect(try server.sql("SELECT count(*) FROM installs") == ["2"])
    }

    /// The publications list is asked for at launch only when the one held is older than the
    /// server's max-age, and by `sync` whatever its age.
    @Test func publicationsArePulledAtLaunchWhenStaleAndBySync() async throws {
        let server = try ServerProcess(
            environment: ["LOG_LEVEL": "info"], serveOptions: ["--publication-max-age", "300"])
        let admin = try server.operatorCredential()
        try server.acceptEnrollments(of: "lockedin")
        let device = try Device(asInstall: "lockedin", server: server)
        func pulls() -> Int {
            server.logText.split(separator: "\n").filter {
                $0.contains("route=/v1/apps/{app}/catalogs ") && $0.contains("app=lockedin")
                    && $0.contains("method=GET")
            }.count
        }
        #expect(try device.run("status").status == 0)
        let afterFirst = pulls()
        #expect(afterFirst >= 1)
        for _ in 0..<3 { #expect(try device.run("status").status == 0) }
        #expect(pulls() == afterFirst, "fresh for 300 s: no launch asks again")

        // A publication now is not seen at the next launch (the list held is fresh), but `sync` asks.
        let compiled = try PublishingTests.registerCompiled(on: server)
        let answer = try await PublishingTests().publish(
            server, admin, try PublishingTests.reworded(compiled), rollout: 100,
            key: try server.publicationKey(app: "lockedin"))
        try #require(answer.status == 201)
        #expect((try device.status()["catalog"] as? [String: Any])?["source"] as? String == "compiled")
        #expect(try device.run("sync").status == 0)
        #expect(pulls() == afterFirst + 1)
        #expect((try device.status()["catalog"] as? [String: Any])?["source"] as? String == "published")
        // The answer says so: Cache-Control on the list and on its 304.
        let direct = try await HTTP.get(
            server.url.appendingPathComponent("v1/apps/lockedin/catalogs"), token: admin)
        #expect(direct.status == 200)
        #expect(direct.cacheControl == "private, max-age=300")
        let unchanged = try await HTTP.send(
            "GET", server.url.appendingPathComponent("v1/apps/lockedin/catalogs"), token: admin, body: nil,
            headers: ["If-None-Match": try #require(direct.entityTag)])
        #expect(unchanged.status == 304)
        #expect(unchanged.cacheControl == "private, max-age=300")
    }

    /// With analytics off, no fact leaves the device: the install's rows reach the server (sync
    /// needs them) with no fact, and facts flow again from the command that turns it on.
    @Test func withAnalyticsOffNoFactLeavesTheDevice() async throws {
        let server = try ServerProcess()
        try server.acceptEnrollments(of: "lockedin")
        let device = try Device(asInstall: "lockedin", server: server)
        #expect(try device.run("launch", "--analytics", "off").status == 0)
        #expect(try device.run("do", "next").status == 0)
        #expect(try device.run("sync").status == 0)
        #expect(try server.sql("SELECT count(*) > 0 FROM pushes WHERE app = 'lockedin'") == ["t"])
        #expect(try server.sql("SELECT count(*) FROM facts WHERE app = 'lockedin'") == ["0"])
        // The setting is kept: a later command without the option sends none either.
        #expect(try device.run("do", "back").status == 0)
        #expect(try device.run("sync").status == 0)
        #expect(try server.sql("SELECT count(*) FROM facts WHERE app = 'lockedin'") == ["0"])
        // Refused values change nothing and say what is allowed.
        let refused = try device.run("status", "--analytics", "maybe")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--analytics takes on or off"))
        // On again: the rows from then on carry their facts.
        #expect(try device.run("do", "next", "--analytics", "on").status == 0)
        #expect(try device.run("sync").status == 0)
        #expect(try server.sql("SELECT count(*) > 0 FROM facts WHERE app = 'lockedin'") == ["t"])
    }

    /// Twenty new Finite installs at a 50% rollout: each runs one version from its very first
    /// command on, online and offline (the subject is the install from the start).
    @Test func installsDrawARolloutOneWayFromTheirFirstCommand() async throws {
        let server = try ServerProcess()
        let admin = try server.operatorCredential()
        try server.acceptEnrollments(of: "finite")
        let compiled = try PublishingTests.registerCompiled(of: "finite", on: server)
        let version = try #require(try TourValue(jsonText: compiled).objectValue?["version"]?.intValue) + 1
        let reworded = try PublishingTests.edited(compiled) { document, _ in
            document["version"] = .int(version)
        }
        let published = try await PublishingTests().publish(
            server, admin, reworded, rollout: 50, key: try server.publicationKey(app: "finite"), app: "finite"
        )
        try #require(published.status == 201)
        var sides: [String] = []
        for index in 0..<20 {
            let device = try Device(asInstall: "finite", server: server)
            func source(_ status: [String: Any]) -> String? {
                (status["catalog"] as? [String: Any])?["source"] as? String
            }
            let first = try #require(source(try device.status()), "device \(index)")
            #expect(source(try device.status()) == first, "device \(index): its second command")
            #expect(try device.run("sync").status == 0)
            #expect(source(try device.status()) == first, "device \(index): after a sync")
            #expect(source(try device.status(offline: true)) == first, "device \(index): offline")
            sides.append(first)
        }
        #expect(Set(sides) == ["published", "compiled"], "\(sides)")
    }
}

extension InstallTests {
    /// Every product's installs reach the dashboard with no token minted by hand: one new install
    /// of each launches, waits and syncs, and each app's report and the overview count it.
    @Test func everyProductsInstallsReachTheDashboard() async throws {
        let server = try ServerProcess()
        let owner = try server.operatorCredential()
        for registration in registeredProducts {
            try server.acceptEnrollments(of: registration.executable)
            let device = try Device(asInstall: registration.executable, server: server)
            #expect(try device.run("launch").status == 0, "\(registration.executable)")
            #expect(try device.run("wait", "2").status == 0, "\(registration.executable)")
            // Growth's tour starts on the dashboard's first visit after its onboarding, not at launch.
            if registration.executable == "growth" {
                #expect(try device.run("do", "completeOnboarding").status == 0)
                #expect(try device.run("visit", "dashboard").status == 0)
            }
            let synced = try device.run("sync")
            #expect(synced.status == 0, "\(registration.executable): \(synced.stderr)")
        }
        try await DashboardTests.waitUntilCounted(server)
        for registration in registeredProducts {
            let report = try await HTTP.counted(
                server.url.appendingPathComponent("v1/apps/\(registration.executable)/report"), token: owner
            ).json
            #expect(report["accounts"] as? Int == 1, "\(registration.executable)")
            let started = (report["flows"] as? [[String: Any]] ?? []).compactMap { $0["started"] as? Int }
                .reduce(0, +)
            #expect(started >= 1, "\(registration.executable): \(report)")
        }
        let session = try DashboardTests().signIn(server)
        let overview = try DashboardTests.curl(
            server.url.appendingPathComponent("dashboard"), cookie: session)
        for registration in registeredProducts {
            #expect(
                overview.body.contains("/dashboard/apps/\(registration.executable)"),
                "\(registration.executable)")
        }
    }
}
