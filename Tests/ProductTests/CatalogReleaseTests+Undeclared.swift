import FiniteOnboarding
import Foundation
import LockedInOnboarding
import Persistence
import Testing
import TourCore
import TourRuntime

extension CatalogReleaseTests {
    /// LockedIn shipped with `difficulty` removed and `permissions` renamed `access`, the version
    /// left at 1 and nothing declared (what the check refuses): nobody is stranded, each move is
    /// journalled as undeclared, and the report spans the change.
    @Test func anUndeclaredReleaseThatShipsAnywayStrandsNoOne() async throws {
        let folder = Folder()
        let database = try OnboardingDatabase.open(path: folder.database)
        let v1 = Self.lockedInV1
        var careless = v1
        careless.catalog.flows[0].steps.removeAll { $0.id == "difficulty" }
        let permissions = careless.catalog.flows[0].steps.firstIndex { $0.id == "permissions" }!
        careless.catalog.flows[0].steps[permissions].id = "access"
        #expect(careless.catalog.version == 1)
        let history = [RecordedCatalog(file: "1.json", text: try v1.document.text())]
        #expect(
            careless.problems(releases: history).contains {
                $0.kind == .changedWithoutVersion && $0.step == "difficulty"
            })

        let toPermissions: [TourEvent] = [
            .appLaunched(version: "1.0"), .actionPerformed("next", parameters: [:]),
            .actionPerformed("chooseApps", parameters: ["apps": "Instagram"]),
            .actionPerformed("next", parameters: [:]),
            .actionPerformed("selectDifficulty", parameters: ["difficulty": "hard"]),
            .actionPerformed("next", parameters: [:]),
        ]
        let users: [(String, [TourEvent])] = [
            ("eve", Array(toPermissions.prefix(4))), ("finn", toPermissions),
            ("gus", [.appLaunched(version: "1.0")]),
            ("hana", Array(toPermissions.prefix(2))),
        ]
        for (user, events) in users {
            let person = session(v1, user, database)
            for event in events { try await person.send(event) }
        }
        // The forecast (`check --against`) says which moves nothing declared.
        let forecast = ReleaseForecast(
            engine: careless.engine, stored: try database.storedFlows(app: "lockedin"))
        let groups = Set(
            forecast.groups.map { "\($0.fromStep?.rawValue ?? "-") \($0.outcome.rawValue) \($0.undeclared)" })
        // Users before the removed step stay where they are, their plan redone without it.
        #expect(
            groups == [
                "difficulty restarted true", "permissions restarted true", "welcome moved true",
                "appSelection moved true",
            ])

        for (user, _) in users {
            let person = session(careless, user, database)
            let card = try #require(try await person.snapshot().card, "\(user) sees no card")
            #expect(careless.catalog.flows[0].step(card.step) != nil)
            try await person.send(.clockAdvanced)
            let stored = try #require(try database.storedFlows(app: "lockedin")[user]?[Self.onboarding]?.run)
            #expect(
                careless.catalog.flows[0].step(stored.currentStep ?? "") != nil,
                "\(user) on \(String(describing: stored.currentStep))")
        }
        let rows = try database.journal(app: "lockedin")
        let undeclared = rows.flatMap { $0.facts ?? [] }.filter {
            if case .runMigrated(_, 1, 1, _, _, _, .restarted, true) = $0 { true } else { false }
        }
        #expect(undeclared.count == 2)  // eve and finn
        #expect(
            rows.contains {
                $0.outcome.contains("difficulty is not in this catalog and no migration declares it")
            })
        // Journal rows name the document they ran under.
        #expect(
            Set(rows.compactMap(\.catalogFingerprint))
                == Set([v1.fingerprint, careless.fingerprint].compactMap { $0 }))

        let funnel = try #require(
            try FlowFunnel.compute(
                app: "lockedin", engine: careless.engine, rows: rows.map(JournalEntry.init)
            ).first)
        let figures = Dictionary(uniqueKeysWithValues: funnel.steps.map { ($0.step, $0) })
        #expect(figures["difficulty"]?.removed == true)
        #expect(figures["permissions"]?.removed == true)
        #expect(figures["difficulty"]?.reached == 2)  // eve, finn under the old catalog
        #expect(figures["welcome"]?.reached == 6)  // four users, two of them again after the restart
        #expect(funnel.started == 6)

        // The journal still replays: rows of the old document by their facts, the rest through the engine.
        let replayed = try JournalReplay.replay(app: "lockedin", engine: careless.engine, from: database)
        let stored = try database.storedFlows(app: "lockedin")
        for (subject, flows) in stored {
            #expect(
                replayed[subject]?[Self.onboarding]?.currentStep == flows[Self.onboarding]?.currentStep,
                "\(subject)")
        }
    }
}
