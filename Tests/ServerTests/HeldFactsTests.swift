import AccountSync
import CatalogDocuments
import Foundation
import OnboardingServer
import ServerPublishing
import ServerTokens
import TestThreads
import Testing
import TourCodec
import TourFixtures

/// Facts set apart are held and admitted when a plan declares them (`HeldFacts`): a
/// population pushes under a plan that does not yet declare its experiment nor one of its steps;
/// once a catalog that declares them lands, every held fact is counted, once, and every aggregate
/// equals a recount of the facts, the experiment's steps per variant included.
@Suite("Facts held until a plan declares them", .ownThread)
struct HeldFactsTests {
    /// A Growth catalog whose flow is the dashboard population's `welcome`, with `steps`, and the
    /// population's experiment when `experiment`.
    static func document(version: Int, steps: [String], experiment: Bool) throws -> String {
        var catalog = ExperimentFixture.catalog(version: version, experiment: nil)
        catalog.app = "growth"
        catalog.flows[0].id = "welcome"
        catalog.flows[0].steps = steps.map { id in
            StepDefinition(
                StepID(rawValue: id), StepContent(title: id.capitalized, body: "The \(id) card"),
                actions: [.next()], canSkip: true)
        }
        if experiment {
            catalog.flows[0].experiment = Experiment(
                "tourLength",
                variants: [
                    .init("full", weight: 50),
                    .init("short", weight: 50, shows: .steps(["intro", "finish"])),
                ],
                control: "full", goal: .effect("activated"))
        }
        let text = try CatalogDocument(catalog, declarations: ExperimentFixture.declarations).text()
        // The plan reads only documents that read back: a typo here would make every fact unplanned.
        _ = try CatalogDocument(text: text)
        return text
    }

    /// Inserts a document as another server process storing it would (no admission by this one).
    static func insert(_ server: ServerProcess, _ text: String, version: Int) throws {
        _ = try server.sql(
            """
            INSERT INTO catalogs (app, version, source, fingerprint, document, recorded_at, recorded_by)
            VALUES ('growth', \(version), 'published', 'held-\(version)', $doc$\(text)$doc$, extract(epoch \
            FROM clock_timestamp()), 'test')
            """)
    }

    static func count(_ server: ServerProcess, _ sql: String) throws -> Int {
        Int(try server.sql(sql).first ?? "") ?? -1
    }

    /// Each (variant, step) with how many experiment subjects entered it after their assignment on
    /// the device that assigned them, from the stored facts.
    static let armStepsRecounted = """
        SELECT a.body->>'variant' || ' ' || s.step || ' ' || count(DISTINCT a.body->>'subject')
        FROM facts a JOIN facts s ON s.app = a.app AND s.account = a.account AND s.device = a.device AND \
        s.flow = a.flow
            AND (s.seq, s.idx) > (a.seq, a.idx) AND s.kind = 'stepEntered'
        WHERE a.app = 'growth' AND a.kind = 'assigned'
        GROUP BY a.body->>'variant', s.step ORDER BY 1
        """
    static let armStepsCounted = """
        SELECT variant || ' ' || step || ' ' || sum(subjects) FROM insight_arm_counts
        WHERE app = 'growth' AND milestone = 'step' GROUP BY variant, step HAVING sum(subjects) > 0 ORDER BY 1
        """

    @Test func heldFactsAreCountedOnceWhenALaterCatalogDeclaresThem() async throws {
        let server = try ServerProcess()
        let owner = try server.operatorCredential()
        // Version 1 declares the flow without its experiment and without the step `remind`.
        try Self.insert(
            server, try Self.document(version: 1, steps: ["intro", "goals", "finish"], experiment: false),
            version: 1)
        let population = DashboardTests.Population(app: "growth", count: 40, seed: 2061)
        try await population.push(to: server)

        let assigned = population.accounts.filter { $0.reached > 0 }.count
        let reminded = population.accounts.filter { $0.reached > 2 }.count
        try #require(assigned > 10 && reminded > 3, "the population must reach the undeclared step")
        #expect(
            try Self.count(
                server,
                "SELECT count(*) FROM facts WHERE kind IN ('assigned', 'goalReached') OR step = 'remind'")
                == 0)
        // Held whole, each at its own place in its row (the assignment before the start it came with).
        #expect(
            try Self.count(
                server, "SELECT count(DISTINCT account) FROM held_facts WHERE kind = 'assigned' AND idx = 0")
                == assigned)
        #expect(
            try Self.count(server, "SELECT count(*) FROM facts WHERE kind = 'flowStarted' AND idx = 1") > 0)
        try await DashboardTests.waitUntilCounted(server)
        let before = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: owner
        ).json
        #expect(
            (before["unplanned"] as? [[String: Any]])?.contains { $0["step"] as? String == "tourLength" }
                == true)
        #expect(try server.sql(Self.armStepsCounted).isEmpty)

        // Another process stores version 2, which declares both: this server's admission finds them.
        try Self.insert(
            server,
            try Self.document(version: 2, steps: ["intro", "goals", "remind", "finish"], experiment: true),
            version: 2)
        try await Self.waitUntilAdmitted(server)
        #expect(
            try Self.count(server, "SELECT count(DISTINCT account) FROM facts WHERE kind = 'assigned'")
                == assigned)
        #expect(
            try Self.count(server, "SELECT count(DISTINCT account) FROM facts WHERE step = 'remind'")
                == reminded)
        #expect(try server.sql("SELECT flow || ' ' || step || ' ' || facts FROM unplanned_facts").isEmpty)

        try await ErasureTests.recountMatches(server, owner: owner)
        try ErasureTests.journeysRecountMatch(server)
        let armSteps = try server.sql(Self.armStepsRecounted)
        #expect(!armSteps.isEmpty)
        #expect(try server.sql(Self.armStepsCounted) == armSteps)
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: owner
        ).json
        #expect((report["unplanned"] as? [[String: Any]] ?? []).isEmpty)

        // Pushed again, nothing is counted twice; a later catalog admits nothing more.
        try await population.push(to: server)
        try Self.insert(
            server,
            try Self.document(version: 3, steps: ["intro", "goals", "remind", "finish"], experiment: true),
            version: 3)
        try await Self.waitUntilAdmitted(server)
        try await ErasureTests.recountMatches(server, owner: owner)
        try ErasureTests.journeysRecountMatch(server)
        #expect(try server.sql(Self.armStepsCounted) == armSteps)
    }

    /// A fact the newest plan still does not declare stays held, listed and uncounted, and is
    /// examined again only when the plan grows; an erasure takes it with the rest.
    @Test func aFactNoPlanDeclaresStaysHeldAndAnErasureTakesIt() async throws {
        let server = try ServerProcess()
        let owner = try server.operatorCredential()
        try Self.insert(
            server, try Self.document(version: 1, steps: ["intro"], experiment: false), version: 1)
        let probe = TrackingPlanTests.entered("probe", "x")
        #expect(
            try await TrackingPlanTests.push(
                server, account: "ann", seq: 1, facts: [TrackingPlanTests.entered("welcome", "intro"), probe])
                == 200)
        try Self.insert(
            server, try Self.document(version: 2, steps: ["intro", "goals"], experiment: false), version: 2)
        try await Self.waitUntilAdmitted(server)
        #expect(
            try server.sql("SELECT flow || ' ' || step || ' ' || generation FROM held_facts") == ["probe x 2"]
        )
        #expect(try server.sql("SELECT flow || ' ' || facts FROM unplanned_facts") == ["probe 1"])
        #expect(try Self.count(server, "SELECT count(*) FROM facts WHERE flow = 'probe'") == 0)

        let exported = try await HTTP.get(
            server.url.appendingPathComponent("v1/apps/growth/accounts/ann/export"), token: owner)
        let facts = (exported.json["pushes"] as? [[String: Any]])?.first?["facts"] as? [[String: Any]]
        #expect(facts?.compactMap { $0["flow"] as? String } == ["welcome", "probe"])

        let erased = try await HTTP.send(
            "DELETE", server.url.appendingPathComponent("v1/apps/growth/accounts/ann"), token: owner,
            body: nil)
        #expect(erased.status == 200, "\(String(decoding: erased.body, as: UTF8.self))")
        #expect(try Self.count(server, "SELECT count(*) FROM held_facts") == 0)
    }

    /// A build that runs an experiment its team registers only afterwards: its subjects' facts are
    /// held, and once `register` stores the catalog that declares the experiment, the report by
    /// variant counts every subject, exposure, goal and step the engine's simulation made.
    @Test func anExperimentRegisteredAfterItsFactsCountsThemAll() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_SECRET": ServerProcess.secret])
        func register(_ catalog: TourCatalog) throws {
            let file = Scratch.folder.appendingPathComponent(
                "trial-\(UUID().uuidString).json")
            try CatalogDocument(catalog, declarations: ExperimentFixture.declarations).text().write(
                to: file, atomically: true, encoding: .utf8)
            let registered = try PublishingTests().serverCommand(
                server, ["register", "--app", ExperimentFixture.app, file.path])
            try #require(registered.status == 0, "\(registered.stderr)")
        }
        try register(ExperimentFixture.catalog(version: 1, experiment: nil))
        let subjects = try ExperimentFixture.simulate(200, seed: 61)
        let signer = try TokenSigner(secret: ServerProcess.secret)
        for subject in subjects {
            let token = await signer.sign(
                TokenClaims(
                    subject: subject.account, scope: .account, app: ExperimentFixture.app,
                    expires: Int64(Date().timeIntervalSince1970) + 3_600))
            let items = subject.rows.enumerated().map { index, facts in
                PushItem(
                    seq: Int64(index + 1), time: subject.times[index].timeIntervalSince1970, event: "event",
                    catalogVersion: 1,
                    facts: facts.map(\.tourValue), records: [:])
            }
            let answer = try await HTTP.post(
                server.url.appendingPathComponent("v1/apps/trial/accounts/\(subject.account)/push"),
                token: token,
                body: Data(
                    try PushBatch(device: "device-\(subject.account)", items: items).tourValue.jsonUTF8()))
            try #require(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        }
        let admin = try server.operatorCredential()
        func variants() async throws -> [[String: Any]] {
            try await DashboardTests.waitUntilCounted(server)
            let answer = try await HTTP.counted(
                server.url.appendingPathComponent("v1/apps/trial/report").appending(queryItems: [
                    .init(name: "by", value: "variant")
                ]),
                token: admin)
            try #require(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            return ((answer.json["experiments"] as? [[String: Any]])?.first?["variants"] as? [[String: Any]])
                ?? []
        }
        #expect(try await variants().allSatisfy { ($0["assigned"] as? Int ?? 0) == 0 })

        try register(ExperimentFixture.catalog(version: 2))
        try await Self.waitUntilAdmitted(server)
        let counted = try await variants()
        #expect(counted.compactMap { $0["variant"] as? String } == ["full", "short", "holdout"])
        for entry in counted {
            let name = try #require(entry["variant"] as? String)
            let members = subjects.filter { $0.variant == name }
            var steps: [String: Int] = [:]
            for member in members {
                let entered = Set(
                    member.rows.joined().compactMap { fact -> String? in
                        if case .stepEntered(_, let step, _) = fact { return step.rawValue }
                        return nil
                    })
                for step in entered { steps[step, default: 0] += 1 }
            }
            #expect(entry["assigned"] as? Int == members.count, "\(name)")
            #expect(entry["exposed"] as? Int == (name == "holdout" ? 0 : members.count), "\(name)")
            #expect(entry["goalReached"] as? Int == members.filter(\.activated).count, "\(name)")
            let reached = (entry["steps"] as? [[String: Any]] ?? []).reduce(into: [String: Int]()) {
                $0[$1["step"] as? String ?? ""] = $1["reached"] as? Int
            }
            #expect(reached == steps, "\(name)")
        }
    }

    /// Waits until no held fact is older than its app's plan (the admission service's round).
    static func waitUntilAdmitted(_ server: ServerProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let stale = try count(
                server,
                """
                SELECT count(*) FROM held_facts h JOIN tracking_plan_generations g USING (app) WHERE \
                h.generation < g.generation
                """
            )
            if stale == 0 { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw HarnessFailure("held facts were not examined within a minute")
    }
}
