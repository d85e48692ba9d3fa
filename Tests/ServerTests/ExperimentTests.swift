import AccountSync
import CatalogDocuments
import Foundation
import OnboardingServer
import ServerTokens
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures

/// Experiments over the real server and PostgreSQL: the per-variant report of 2,000 simulated
/// subjects with a holdout, and an experiment started by a publication on real devices, where every
/// device of an account is in the same variant.
@Suite("Experiments", .ownThread)
struct ExperimentTests {
    /// Registers the trial app's catalog (ExperimentFixture), as its binary would: the server knows
    /// the experiment's control and goal from it.
    static func registerTrial(on server: ServerProcess) throws {
        let document = CatalogDocument(
            ExperimentFixture.catalog(), declarations: ExperimentFixture.declarations)
        let file = Scratch.folder.appendingPathComponent("trial-\(UUID().uuidString).json")
        try document.text().write(to: file, atomically: true, encoding: .utf8)
        let registered = try PublishingTests().serverCommand(
            server, ["register", "--app", ExperimentFixture.app, file.path])
        #expect(registered.status == 0, "\(registered.stderr)")
    }

    /// Publishes Growth's compiled catalog, one version up, with the tour's experiment `tourLength`
    /// (the whole tour against two steps, 50/50) at 100%.
    static func publishGrowthTourLength(on server: ServerProcess, by admin: String) async throws {
        let compiled = try PublishingTests.registerGrowthCompiled(on: server)
        let version = try #require(try TourValue(jsonText: compiled).objectValue?["version"]?.intValue)
        let published = try PublishingTests.edited(compiled) { document, flow in
            document["version"] = .int(version + 1)
            document["format"] = 2
            flow["experiment"] = [
                "id": "tourLength", "control": "full", "goal": "completion",
                "variants": [
                    ["name": "full", "weight": 50],
                    ["name": "short", "weight": 50, "steps": ["dashboard", "profile"]],
                ],
            ]
        }
        let answer = try await PublishingTests().publish(
            server, admin, published, rollout: 100, key: try server.publicationKey(app: "growth"),
            app: "growth")
        try #require(answer.status == 201, "\(String(decoding: answer.body, as: UTF8.self))")
    }

    /// 2,000 subjects simulated through the engine push their facts as their accounts' devices;
    /// `?by=variant` counts what the test counted and computes the intervals as an independent
    /// computation does.
    @Test func theServersReportByVariantCountsEverySubjectAndItsIntervalsAreRight() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_SECRET": ServerProcess.secret])
        // The server knows the experiment's control and goal from the catalog the binary registered.
        try Self.registerTrial(on: server)

        let subjects = try ExperimentFixture.simulate(2_000)
        let signer = try TokenSigner(secret: ServerProcess.secret)
        let expires = Int64(Date().timeIntervalSince1970) + 3_600
        // Each account's device pushes once, eight accounts at a time.
        let url = server.url
        let answers = try await concurrently(subjects) { subject in
            let token = await signer.sign(
                TokenClaims(
                    subject: subject.account, scope: .account, app: ExperimentFixture.app, expires: expires))
            let items = subject.rows.enumerated().map { index, facts in
                PushItem(
                    seq: Int64(index + 1), time: subject.times[index].timeIntervalSince1970, event: "event",
                    catalogVersion: 1, facts: facts.map(\.tourValue), records: [:])
            }
            let answer = try await HTTP.post(
                url.appendingPathComponent("v1/apps/trial/accounts/\(subject.account)/push"), token: token,
                body: Data(
                    try PushBatch(device: "device-\(subject.account)", items: items).tourValue.jsonUTF8()))
            return (subject.account, answer.status, String(decoding: answer.body, as: UTF8.self))
        }
        for (account, status, body) in answers {
            try #require(status == 200, "push \(account): \(body)")
        }

        let admin = try server.operatorCredential()
        let answer = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/trial/report").appending(queryItems: [
                .init(name: "by", value: "variant")
            ]),
            token: admin)
        try #require(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        let experiments = try #require(answer.json["experiments"] as? [[String: Any]])
        let report = try #require(experiments.first)
        #expect(experiments.count == 1)
        #expect(report["experiment"] as? String == "tourLength")
        #expect(report["control"] as? String == "full")
        #expect(report["goal"] as? String == "effect activated")
        #expect(report["enoughSubjects"] as? Bool == true)
        let variants = try #require(report["variants"] as? [[String: Any]])
        #expect(variants.map { $0["variant"] as? String } == ["full", "short", "holdout"])

        // What the test counts from what it simulated.
        func tally(_ variant: String) -> (assigned: Int, exposed: Int, goal: Int, steps: [String: Int]) {
            let members = subjects.filter { $0.variant == variant }
            var steps: [String: Int] = [:]
            for member in members {
                let entered = Set(
                    member.rows.joined().compactMap { fact -> String? in
                        if case .stepEntered(_, let step, _) = fact { return step.rawValue }
                        return nil
                    })
                for step in entered { steps[step, default: 0] += 1 }
            }
            return (
                members.count, variant == "holdout" ? 0 : members.count, members.filter(\.activated).count,
                steps
            )
        }
        let control = tally("full")
        for entry in variants {
            let name = try #require(entry["variant"] as? String)
            let expected = tally(name)
            #expect(entry["assigned"] as? Int == expected.assigned, "\(name)")
            #expect(entry["exposed"] as? Int == expected.exposed, "\(name)")
            #expect(entry["goalReached"] as? Int == expected.goal, "\(name)")
            let steps = (entry["steps"] as? [[String: Any]] ?? []).reduce(into: [String: Int]()) {
                $0[$1["step"] as? String ?? ""] = $1["reached"] as? Int
            }
            #expect(steps == expected.steps, "\(name)")
            let interval = try #require(entry["goalRateInterval"] as? [Double])
            let wilson = IndependentStatistics.wilson(expected.goal, expected.assigned)
            #expect(
                abs(interval[0] - wilson.lower) < 1e-9 && abs(interval[1] - wilson.upper) < 1e-9, "\(name)")
            if name == "full" {
                #expect(entry["verdict"] as? String == "control")
                continue
            }
            let difference = IndependentStatistics.newcombe(
                expected.goal, expected.assigned, control.goal, control.assigned)
            let range = try #require(entry["differenceInterval"] as? [Double])
            #expect(abs((entry["differenceToControl"] as? Double ?? .nan) - difference.estimate) < 1e-9)
            #expect(
                abs(range[0] - difference.lower) < 1e-9 && abs(range[1] - difference.upper) < 1e-9, "\(name)")
        }
        // Asked for a grouping it does not have, the server says which it has.
        let wrong = try await HTTP.get(
            server.url.appendingPathComponent("v1/apps/trial/report").appending(queryItems: [
                .init(name: "by", value: "device")
            ]),
            token: admin)
        #expect(wrong.status == 400)
        #expect(String(decoding: wrong.body, as: UTF8.self).contains("by takes flow"))
    }

    /// A credential counts for its own subject only. Twenty honest accounts push; then one account
    /// token pushes the same journeys with facts naming other accounts (`account:ghost-N`): each
    /// such push is refused `422 fact_subject`, naming the row, and nothing of it is stored or
    /// counted. The same token's facts naming installs, and an install credential's facts naming
    /// thirty made-up installs, are counted for the credential's own subject: one each, whatever
    /// the facts say.
    @Test func aCredentialCountsForItsOwnSubjectOnly() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_SECRET": ServerProcess.secret])
        try Self.registerTrial(on: server)
        let signer = try TokenSigner(secret: ServerProcess.secret)
        let expires = Int64(Date().timeIntervalSince1970) + 3_600
        let admin = try server.operatorCredential()

        /// The subject's journey as one push, each experiment fact naming `named(subject)`.
        func push(
            _ subject: ExperimentFixture.Subject, as pusher: String, scope: TokenClaims.Scope,
            naming named: String
        )
            async throws -> HTTP.Answer
        {
            let token = await signer.sign(
                TokenClaims(subject: pusher, scope: scope, app: ExperimentFixture.app, expires: expires))
            let items = subject.rows.enumerated().map { index, facts in
                PushItem(
                    seq: Int64(index + 1), time: subject.times[index].timeIntervalSince1970, event: "event",
                    catalogVersion: 1,
                    facts: facts.map { fact in
                        guard case .object(var body) = fact.tourValue, body["subject"] != nil else {
                            return fact.tourValue
                        }
                        body["subject"] = .string(named)
                        return .object(body)
                    }, records: [:])
            }
            return try await HTTP.post(
                server.url.appendingPathComponent("v1/apps/trial/accounts/\(pusher)/push"), token: token,
                body: Data(
                    try PushBatch(
                        device: "device-\(pusher)-\(named.split(separator: ":").last ?? "")", items: items
                    ).tourValue.jsonUTF8()))
        }
        func assigned() async throws -> [String: Int] {
            let answer = try await HTTP.counted(
                server.url.appendingPathComponent("v1/apps/trial/report").appending(queryItems: [
                    .init(name: "by", value: "variant")
                ]),
                token: admin)
            try #require(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            let variants =
                (answer.json["experiments"] as? [[String: Any]])?.first?["variants"] as? [[String: Any]] ?? []
            return Dictionary(
                uniqueKeysWithValues: variants.map {
                    ($0["variant"] as? String ?? "", $0["assigned"] as? Int ?? -1)
                })
        }

        let subjects = try ExperimentFixture.simulate(50)
        for subject in subjects.prefix(20) {
            let answer = try await push(
                subject, as: subject.account, scope: .account, naming: "account:\(subject.account)")
            try #require(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        }
        let honest = try await assigned()
        #expect(honest.values.reduce(0, +) == 20, "\(honest)")

        // Facts naming other accounts: refused, the row named, nothing stored.
        for (index, subject) in subjects.dropFirst(20).prefix(10).enumerated() {
            let answer = try await push(
                subject, as: "mallory", scope: .account, naming: "account:ghost-\(index)")
            #expect(answer.status == 422)
            #expect(answer.errorCode == "fact_subject")
            let firstAssigned = subject.rows.firstIndex {
                $0.contains { if case .assigned = $0 { true } else { false } }
            }
            #expect(
                answer.json["error"].flatMap { ($0 as? [String: Any])?["seq"] as? Int }
                    == firstAssigned.map { $0 + 1 })
        }
        #expect(try await assigned() == honest)
        #expect(try server.sql("SELECT count(*) FROM pushes WHERE account = 'mallory'") == ["0"])

        // Facts naming installs, by an account's token and by an install's credential: counted for
        // the credential, once each, however many installs they name.
        for subject in subjects.dropFirst(30).prefix(10) {
            let answer = try await push(
                subject, as: "mallory", scope: .account, naming: "install:made-up-\(subject.account)")
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        }
        for subject in subjects.dropFirst(40).prefix(10) {
            let answer = try await push(
                subject, as: "install.h1", scope: .install, naming: "install:made-up-\(subject.account)")
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        }
        let after = try await assigned()
        // Each credential is at most one subject in each variant its facts named.
        let added = after.map { $0.value - (honest[$0.key] ?? 0) }
        #expect(added.allSatisfy { $0 >= 0 && $0 <= 2 }, "\(honest) → \(after)")
        #expect(added.reduce(0, +) >= 2 && added.reduce(0, +) <= 2 * after.count, "\(honest) → \(after)")
        let named = try server.sql(
            """
            SELECT DISTINCT body->>'subject' FROM facts WHERE body->>'subject' IS NOT NULL AND account \
            IN ('mallory', 'install.h1') ORDER BY 1
            """
        )
        #expect(named == ["account:mallory", "install:h1"])
    }

    /// Growth's tour with an experiment (the whole tour against a two-step tour), started by a
    /// publication: two accounts on two real devices each. Each account's devices are in one
    /// variant, the one its account's hash names; the short variant shows two steps; the device's
    /// own report and the server's agree.
    @Test func anExperimentStartedByAPublicationPutsEveryDeviceOfAnAccountInOneVariant() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_SECRET": ServerProcess.secret])
        let admin = try server.operatorCredential()
        let compiled = try PublishingTests.registerGrowthCompiled(on: server)
        let version = try #require(try TourValue(jsonText: compiled).objectValue?["version"]?.intValue)
        let experiment: TourValue = [
            "id": "tourLength", "control": "full", "goal": "completion",
            "variants": [
                ["name": "full", "weight": 50],
                ["name": "short", "weight": 50, "steps": ["dashboard", "profile"]],
            ],
        ]
        let published = try PublishingTests.edited(compiled) { document, flow in
            document["version"] = .int(version + 1)
            document["format"] = 2
            flow["experiment"] = experiment
        }
        let answer = try await PublishingTests().publish(
            server, admin, published, rollout: 100, key: try server.publicationKey(app: "growth"),
            app: "growth")
        try #require(answer.status == 201, "\(String(decoding: answer.body, as: UTF8.self))")

        let declared = Experiment(
            "tourLength",
            variants: [
                .init("full", weight: 50),
                .init("short", weight: 50, shows: .steps(["dashboard", "profile"])),
            ])
        for account in ["ann", "bo"] {
            let expected = try #require(declared.assign("account:\(account)")).name
            let steps = expected == "short" ? "Step 1 of 2" : "Step 1 of 5"
            // The tablet starts the tour offline (its assignment needs no server), then the phone
            // online; each is assigned on its own, and both the same.
            let tablet = try Device("growth", account: account, server: server)
            let phone = try Device("growth", account: account, server: server)
            #expect(try tablet.run("status").status == 0)  // pulls the publication
            #expect(try tablet.run("do", "completeOnboarding", offline: true).status == 0)
            let offline = try tablet.run("visit", "dashboard", offline: true)
            #expect(offline.stdout.contains(steps), "\(account) tablet: \(offline.stdout)")
            #expect(try phone.run("do", "completeOnboarding").status == 0)
            let online = try phone.run("visit", "dashboard")
            #expect(online.stdout.contains(steps), "\(account) phone: \(online.stdout)")
            for device in [tablet, phone] {
                let journal = try device.run("journal", "--json", offline: true).stdout
                #expect(journal.contains(#""fact":"assigned""#), "\(journal)")
                #expect(journal.contains(#""variant":"\#(expected)""#))
                #expect(journal.contains(#""subject":"account:\#(account)""#))
            }
            while try phone.flowStatus("app_tour") == "active" { try phone.run("do", "next") }
            let report = try phone.run("report", "--by", "variant", "--json")
            #expect(report.status == 0, "\(report.stderr)")
            #expect(report.stdout.contains(#""goalReached":1"#), "\(report.stdout)")
            let table = try phone.run("report", "--by", "variant").stdout
            #expect(
                table.contains("app_tour experiment tourLength · goal: completion · control: full"),
                "\(table)")
            #expect(table.contains("not enough subjects yet"), "\(table)")
            // The tablet, back online, pushes its own assignment and learns the phone's completion.
            for device in [tablet, phone] {
                let sync = try device.run("sync")
                #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
                #expect(try device.waiting() == 0)
            }
        }
        // The server counts each account once, however many of its devices were assigned.
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report").appending(queryItems: [
                .init(name: "by", value: "variant")
            ]),
            token: admin)
        let variants =
            ((report.json["experiments"] as? [[String: Any]])?.first?["variants"] as? [[String: Any]]) ?? []
        let assigned = variants.reduce(0) { $0 + ($1["assigned"] as? Int ?? 0) }
        let reached = variants.reduce(0) { $0 + ($1["goalReached"] as? Int ?? 0) }
        #expect(assigned == 2 && reached == 2, "\(variants)")
        let facts = try server.sql("SELECT count(*) FROM facts WHERE app = 'growth' AND kind = 'assigned'")
        #expect(facts == ["4"], "each of the four devices pushed its assignment: \(facts)")
    }
}

extension ExperimentTests {
    /// An assignment bug injected through real devices: Growth's tour experiment (50/50) published,
    /// fifty accounts run the tour on a device each, and the devices the short variant was
    /// assigned to never report (as a build that crashes in that variant before it syncs) but for
    /// one in twenty. The server's report flags the sample ratio, says why, and names no verdict.
    @Test func aSampleRatioMismatchFromDevicesIsFlaggedAndNamesNoVerdict() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_SECRET": ServerProcess.secret])
        let admin = try server.operatorCredential()
        try await Self.publishGrowthTourLength(on: server, by: admin)
        let declared = Experiment(
            "tourLength", variants: [.init("full", weight: 50), .init("short", weight: 50)])

        // Fifty accounts, a device each, eight at a time: the variant of each that synced.
        let syncedVariants = try await concurrently(Array(0..<50)) { index -> String? in
            let account = "srm\(index)"
            let variant = try #require(declared.assign("account:\(account)")).name
            let device = try Device("growth", account: account, server: server)
            #expect(try device.run("status").status == 0)  // pulls the publication
            #expect(try device.run("do", "completeOnboarding", offline: true).status == 0)
            #expect(try device.run("visit", "dashboard", offline: true).status == 0)
            guard variant == "full" || index % 20 == 0 else { return nil }
            #expect(try device.run("sync").status == 0)
            return variant
        }
        let synced = syncedVariants.compactMap { $0 }.reduce(into: [String: Int]()) {
            $0[$1, default: 0] += 1
        }
        // The loss the test injected is one the check must see (p < 0.001 by the table).
        try #require(
            SampleRatio(experiment: declared, assigned: synced).map { $0.chiSquare > 10.828 } == true,
            "\(synced)")
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report").appending(queryItems: [
                .init(name: "by", value: "variant")
            ]),
            token: admin)
        let experiment = try #require(
            (report.json["experiments"] as? [[String: Any]])?.first, "\(report.json)")
        let variants = experiment["variants"] as? [[String: Any]] ?? []
        #expect(variants.map { $0["assigned"] as? Int ?? -1 } == [synced["full"] ?? 0, synced["short"] ?? 0])
        let ratio = try #require(experiment["sampleRatio"] as? [String: Any])
        #expect(ratio["mismatch"] as? Bool == true, "\(ratio)")
        #expect((ratio["pValue"] as? Double ?? 1) < 0.001)
        #expect(variants.allSatisfy { $0["verdict"] == nil }, "\(variants)")
        #expect(experiment["winner"] == nil)
        #expect(
            (experiment["conclusion"] as? String ?? "").contains("does not match the weights"),
            "\(experiment)")
    }
}
