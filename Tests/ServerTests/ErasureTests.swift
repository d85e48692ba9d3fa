import AccountSync
import Crypto
import Foundation
import OnboardingServer
import ServerSyncAPI
import ServerTokens
import TestThreads
import Testing
import TourCodec
import TourFixtures

/// Erasure and export: one subject's data leaves every table in one transaction, every
/// count built from it is corrected (checked against a recount of what remains), the act is
/// audited without the subject's id, and its old tokens cannot put the data back.
@Suite("Erasure and export", .ownThread)
struct ErasureTests {
    /// Nothing of the erased accounts `ids` is left in any table that names an account or a
    /// subject: their pushes, facts, records, budget counts and every aggregate row of theirs.
    static func nothingLeft(of ids: [String], on server: ServerProcess) throws {
        let list = ids.map { "'\($0)'" }.joined(separator: ",")
        for (table, column) in [
            ("pushes", "account"), ("facts", "account"), ("account_flows", "account"),
            ("unplanned_facts", "account"),
            ("insight_firsts", "subject"), ("insight_assignments", "account"), ("budget_counts", "account"),
            ("insight_journeys", "subject"),
        ] {
            #expect(
                try server.sql("SELECT count(*) FROM \(table) WHERE \(column) IN (\(list))") == ["0"],
                "\(table)")
        }
        #expect(
            try server.sql("SELECT count(*) FROM insight_members WHERE kind = 'account' AND id IN (\(list))")
                == ["0"])
        let subjects = ids.map { "'account:\($0)'" }.joined(separator: ",")
        #expect(
            try server.sql("SELECT count(*) FROM insight_arm_firsts WHERE subject IN (\(subjects))") == ["0"])
    }

    /// Every figure the report shows, recounted from the raw rows that remain, beside the report's.
    static func recountMatches(_ server: ServerProcess, owner: String) async throws {
        try await DashboardTests.waitUntilCounted(server)
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: owner
        ).json
        func one(_ sql: String) throws -> Int { Int(try server.sql(sql).first ?? "") ?? -1 }
        #expect(
            report["accounts"] as? Int
                == (try one("SELECT count(DISTINCT account) FROM pushes WHERE app = 'growth'")))
        #expect(
            report["devices"] as? Int
                == (try one("SELECT count(DISTINCT device) FROM pushes WHERE app = 'growth'")))
        let welcome = try #require(
            (report["flows"] as? [[String: Any]])?.first { $0["flow"] as? String == "welcome" })
        func facts(_ filter: String) throws -> Int {
            try one(
                """
                SELECT count(DISTINCT account) FROM facts WHERE app = 'growth' AND flow = 'welcome' \
                AND \(filter)
                """
            )
        }
        #expect(welcome["started"] as? Int == (try facts("kind = 'flowStarted'")))
        #expect(
            welcome["completedHere"] as? Int == (try facts("kind = 'flowEnded' AND ending = 'completed'")))
        #expect(welcome["skippedHere"] as? Int == (try facts("kind = 'flowEnded' AND ending = 'skipped'")))
        #expect(
            welcome["devices"] as? Int
                == (try one(
                    "SELECT count(DISTINCT device) FROM facts WHERE app = 'growth' AND flow = 'welcome'")))
        for step in (welcome["steps"] as? [[String: Any]]) ?? [] {
            let name = try #require(step["step"] as? String)
            #expect(
                step["accounts"] as? Int == (try facts("kind = 'stepEntered' AND step = '\(name)'")),
                "\(name)")
        }
        let standings = try server.sql(
            """
            SELECT standing || ' ' || count(*) FROM account_flows WHERE app = 'growth' AND flow = \
            'welcome' GROUP BY standing ORDER BY standing
            """
        )
        let reported = (welcome["accounts"] as? [String: Int] ?? [:]).filter { $0.value > 0 }.sorted {
            $0.key < $1.key
        }
        .map { "\($0.key) \($0.value)" }
        #expect(reported == standings)
        // The experiment's aggregates against the facts.
        #expect(
            try server.sql(
                """
                SELECT variant || ' ' || sum(subjects) FROM insight_arm_counts WHERE app = 'growth' AND \
                milestone = 'assigned' GROUP BY variant HAVING sum(subjects) > 0 ORDER BY variant
                """
            )
                == server.sql(
                    """
                    SELECT v || ' ' || n FROM (SELECT body->>'variant' AS v, count(DISTINCT \
                    body->>'subject') AS n FROM facts WHERE app = 'growth' AND kind = 'assigned' GROUP \
                    BY 1) t ORDER BY v
                    """
                ))
    }

    /// The journeys' aggregates (v16) against the facts that remain: starts, each step's reaches,
    /// standings, every split's starts, stage times, and first assignments by day.
    static func journeysRecountMatch(_ server: ServerProcess) throws {
        func rows(_ sql: String) throws -> [String] { try server.sql(sql) }
        let started =
            """
            SELECT DISTINCT account FROM facts WHERE app = 'growth' AND flow = 'welcome' AND kind = \
            'flowStarted'
            """
        #expect(
            try rows(
                """
                SELECT split || ' ' || sum(subjects) FROM insight_cohorts WHERE app = 'growth' AND flow \
                = 'welcome' AND measure = 'started' GROUP BY split HAVING sum(subjects) <> 0 ORDER BY \
                split
                """
            )
                == journeySplits.map {
                    "\($0) \(try rows("SELECT count(*) FROM (\(started)) s").first ?? "")"
                })
        #expect(
            try rows(
                """
                SELECT step || ' ' || sum(subjects) FROM insight_cohorts WHERE app = 'growth' AND flow = \
                'welcome' AND split = 'all' AND measure = 'step' GROUP BY step HAVING sum(subjects) <> 0 \
                ORDER BY step
                """
            )
                == rows(
                    """
                    SELECT step || ' ' || count(DISTINCT account) FROM facts WHERE app = 'growth' AND \
                    flow = 'welcome' AND kind = 'stepEntered' AND account IN (\(started)) GROUP BY step \
                    ORDER BY step
                    """
                ))
        #expect(
            try rows(
                """
                SELECT measure || ' ' || step || ' ' || sum(subjects) FROM insight_cohorts WHERE app = \
                'growth' AND flow = 'welcome' AND split = 'all' AND measure IN ('waiting', 'skipped') \
                GROUP BY measure, step HAVING sum(subjects) <> 0 ORDER BY 1
                """
            )
                == rows(
                    """
                    SELECT CASE WHEN skipped_step IS NULL THEN 'waiting ' || furthest_step ELSE 'skipped \
                    ' || skipped_step END || ' ' || count(*) FROM insight_journeys WHERE app = 'growth' \
                    AND flow = 'welcome' AND NOT (completed AND skipped_step IS NULL) GROUP BY \
                    skipped_step, furthest_step ORDER BY 1
                    """
                ))
        #expect(
            try rows(
                "SELECT sum(subjects) FROM insight_stage_times WHERE app = 'growth' AND flow = 'welcome'")
                == rows(
                    """
                    SELECT count(*) FROM insight_firsts WHERE app = 'growth' AND flow = 'welcome' AND \
                    cohort AND millis IS NOT NULL
                    """
                ))
        #expect(
            try rows(
                """
                SELECT variant || ' ' || sum(subjects) FROM insight_arm_days WHERE app = 'growth' GROUP \
                BY variant HAVING sum(subjects) > 0 ORDER BY variant
                """
            )
                == rows(
                    """
                    SELECT v || ' ' || n FROM (SELECT body->>'variant' AS v, count(DISTINCT \
                    body->>'subject') AS n FROM facts WHERE app = 'growth' AND kind = 'assigned' GROUP \
                    BY 1) t ORDER BY v
                    """
                ))
    }

    static let journeySplits = ["accessibility", "all", "app", "catalog", "device", "locale", "variant"]

    @Test func erasingSubjectsCorrectsEveryCountAndLeavesNoRowOfThem() async throws {
        let server = try ServerProcess()
        let owner = try server.operatorCredential()
        let population = DashboardTests.Population(app: "growth", count: 60, seed: 44)
        try await population.push(to: server)
        try await Self.recountMatches(server, owner: owner)
        try Self.journeysRecountMatch(server)

        // Export first: the account itself, with its own token, and an owner; no one else.
        let victim = try #require(population.accounts.first { $0.reached >= 3 && $0.devices.count > 1 })
        let victimToken = try server.token(account: victim.id, app: "growth")
        let exportURL = server.url.appendingPathComponent("v1/apps/growth/accounts/\(victim.id)/export")
        let exported = try await HTTP.get(exportURL, token: victimToken)
        #expect(exported.status == 200)
        let pushes = try #require(exported.json["pushes"] as? [[String: Any]])
        #expect(
            pushes.count
                == (try Int(
                    server.sql("SELECT count(*) FROM pushes WHERE account = '\(victim.id)'").first ?? "")))
        #expect(pushes.contains { ($0["facts"] as? [[String: Any]])?.isEmpty == false })
        #expect((exported.json["records"] as? [[String: Any]])?.isEmpty == false)
        #expect(try await HTTP.get(exportURL, token: owner).status == 200)
        #expect(
            try await HTTP.get(exportURL, token: try server.token(account: "acct1", app: "growth")).status
                == 403)
        let viewer = try server.credential("vera", role: "viewer", app: "growth")
        #expect(try await HTTP.get(exportURL, token: viewer).status == 403)

        // Erase: a viewer may not; an owner through the API, the operator through the CLI.
        let erasedIDs = [victim.id] + population.accounts.filter { $0.id != victim.id }.prefix(9).map(\.id)
        #expect(
            try await HTTP.send(
                "DELETE", server.url.appendingPathComponent("v1/apps/growth/accounts/\(victim.id)"),
                token: viewer, body: nil
            ).status == 403)
        for id in erasedIDs.dropLast() {
            let answer = try await HTTP.send(
                "DELETE", server.url.appendingPathComponent("v1/apps/growth/accounts/\(id)"), token: owner,
                body: nil)
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        }
        let byCommand = try server.command(["erase", "--app", "growth", "--account", erasedIDs.last!])
        #expect(byCommand.status == 0, "\(byCommand.stderr)")
        #expect(byCommand.stdout.contains("erased"))
        try await Self.recountMatches(server, owner: owner)
        try Self.journeysRecountMatch(server)

        try Self.nothingLeft(of: erasedIDs, on: server)
        // Audited by a keyed hash, never by the id nor by a hash anyone can compute from a guess.
        #expect(
            try server.sql("SELECT count(*) FROM audit_log WHERE action = 'subject.erased'") == [
                "\(erasedIDs.count)"
            ])
        let audit = try server.sql(
            """
            SELECT target || ' ' || coalesce(details::text, '') FROM audit_log WHERE action = \
            'subject.erased'
            """
        )
        #expect(
            audit.allSatisfy { line in !erasedIDs.contains { line.contains($0) } && line.hasPrefix("hmac:") })
        let signer = try TokenSigner(secret: ServerProcess.secret)
        let names = try server.sql("SELECT target FROM audit_log WHERE action = 'subject.erased' ORDER BY id")
        #expect(names == erasedIDs.map { signer.subjectPseudonym(app: "growth", subject: $0) })
        let unsalted = erasedIDs.map { id in
            SHA256.hash(data: Data("growth\u{0}\(id)".utf8)).map { String(format: "%02x", $0) }.joined()
        }
        #expect(
            !names.contains { name in unsalted.contains { $0.hasPrefix(String(name.dropFirst(5).prefix(16))) }
            })
        // Another server's key ring names the same subject otherwise: the name is keyed.
        let other = try TokenSigner(secret: String(repeating: "z", count: 40))
        #expect(
            other.subjectPseudonym(app: "growth", subject: victim.id)
                != signer.subjectPseudonym(app: "growth", subject: victim.id))
        // Its tokens until the erasure cannot put the data back.
        let item = PushItem(
            seq: 99, time: 1_764_000_000, event: "next", catalogVersion: 1, facts: [], records: [:])
        let again = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/\(victim.id)/push"),
            token: victimToken,
            body: Data(try PushBatch(device: "dev", items: [item]).tourValue.jsonUTF8()))
        #expect(again.status == 401)
        #expect(try server.sql("SELECT count(*) FROM pushes WHERE account = '\(victim.id)'") == ["0"])
        // Refused input changes nothing and says what is allowed.
        let badInstall = try await HTTP.send(
            "DELETE", server.url.appendingPathComponent("v1/apps/growth/installs/nothex"), token: owner,
            body: nil)
        #expect(badInstall.status == 400)
        #expect(try server.command(["erase", "--app", "growth"]).status != 0)
    }

    /// An install's data erased: gone from the server with its enrollment; the device's next sync
    /// enrolls it afresh as a new subject (its old credential is refused).
    @Test func anInstallIsErasedAndStartsAfreshAsANewSubject() async throws {
        let server = try ServerProcess()
        let owner = try server.operatorCredential()
        try server.acceptEnrollments(of: "lockedin")
        let device = try Device(asInstall: "lockedin", server: server)
        #expect(try device.run("launch").status == 0)
        #expect(try device.run("do", "next").status == 0)
        #expect(try device.run("sync").status == 0)
        let install = try #require(try server.sql("SELECT install FROM installs").first)
        let export = try server.command(["export", "--app", "lockedin", "--install", install])
        #expect(export.status == 0)
        #expect(export.stdout.contains("\"subject\":\"install.\(install)\""))
        let erased = try await HTTP.send(
            "DELETE", server.url.appendingPathComponent("v1/apps/lockedin/installs/\(install)"), token: owner,
            body: nil)
        #expect(erased.status == 200, "\(String(decoding: erased.body, as: UTF8.self))")
        #expect(try server.sql("SELECT count(*) FROM pushes WHERE account = 'install.\(install)'") == ["0"])
        #expect(try server.sql("SELECT count(*) FROM installs") == ["0"])
        #expect(try device.run("do", "back").status == 0)
        #expect(try device.run("sync").status == 0)
        let now = try server.sql("SELECT install FROM installs")
        #expect(now.count == 1 && now != [install])
    }

    /// Retention: facts of pushes received before the cut-off go, in batches; every count stays,
    /// and the pushed rows and records stay (sync needs them).
    @Test func retentionDropsOldFactsAndKeepsEveryNumber() async throws {
        let server = try ServerProcess()
        let owner = try server.operatorCredential()
        let population = DashboardTests.Population(app: "growth", count: 80, seed: 45)
        try await population.push(to: server)
        try await DashboardTests.waitUntilCounted(server)
        // Everything so far arrived long ago (received times follow the transactions' order, as
        // on a real server); then some accounts push again today.
        _ = try server.sql("UPDATE pushes SET received_at = now() - interval '10 days'")
        for account in population.accounts.prefix(5) {
            let token = try server.token(account: account.id, app: "growth")
            let fact: TourValue = .object([
                "fact": "stepEntered", "flow": "welcome", "step": "intro", "index": 1,
            ])
            let item = PushItem(
                seq: 100, time: 1_764_500_000, event: "next", catalogVersion: 1, facts: [fact], records: [:])
            let answer = try await HTTP.post(
                server.url.appendingPathComponent("v1/apps/growth/accounts/\(account.id)/push"), token: token,
                body: Data(try PushBatch(device: "today", items: [item]).tourValue.jsonUTF8()))
            #expect(answer.status == 200)
        }
        try await DashboardTests.waitUntilCounted(server)
        let before = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: owner
        ).body
        let pushes = try server.sql("SELECT count(*) FROM pushes")
        #expect(try server.sql("SELECT count(*) FROM facts WHERE device = 'today'") == ["5"])
        #expect(try server.sql("SELECT count(*) > 5 FROM facts") == ["t"])

        let refused = try server.command(["retain-facts", "--days", "0"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("from 1 to 36500"))
        let ran = try server.command(["retain-facts", "--days", "7"])
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(ran.stdout.hasPrefix("dropped "))
        #expect(
            try server.sql("SELECT device FROM facts") == Array(repeating: "today", count: 5),
            "only today's facts stay")
        #expect(try server.sql("SELECT count(*) FROM pushes") == pushes)
        let after = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: owner
        ).body
        #expect(after == before, "every number stays")
        // Run again: nothing more to drop, the watermark holds.
        #expect(try server.command(["retain-facts", "--days", "7"]).stdout.hasPrefix("dropped 0 facts"))
    }
}
