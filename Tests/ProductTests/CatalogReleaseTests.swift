import FiniteOnboarding
import Foundation
import LockedInOnboarding
import Persistence
import Testing
import TourCore
import TourFixtures
import TourRuntime

/// A release that changes flows while users are mid-flow: catalog v2 of Finite and LockedIn (a step
/// renamed, a step removed, a step added, an action renamed, a field added), shipped over a real
/// database file written by v1. Every stored user resumes where the declarations say, the report
/// spans both versions, and the journal shows each move.
@Suite("Shipping a change to a flow")
struct CatalogReleaseTests {
    static let walkthrough = FiniteCatalog.walkthrough
    static let onboarding = LockedInCatalog.onboarding

    /// Finite v2: `markWeek` is now `reflectWeek` and its `saveMark` is `saveReflection`;
    /// `chaptersExplanation` is gone (runs on it go on at the next step); a `privacy` step is added
    /// before `viewModesIntro`; the walkthrough has a new field with an initial value.
    static var finiteV2: Product {
        var product = FiniteCatalog.product
        var flow = product.catalog.flows[0]
        flow.steps.removeAll { $0.id == "chaptersExplanation" }
        let privacy = StepDefinition(
            "privacy", StepContent(title: "Private by design", body: "Your weeks stay on this device."),
            actions: [.next()], canSkip: true)
        flow.steps.insert(privacy, at: flow.steps.index(of: "viewModesIntro"))
        let mark = flow.steps.index(of: "markWeek")
        flow.steps[mark].id = "reflectWeek"
        let save = flow.steps[mark].actions.index(named: "saveMark")
        flow.steps[mark].actions[save].name = "saveReflection"
        flow.fields.append(FieldSpec("reflectionMood", .text, initial: "calm"))
        product.catalog.flows[0] = flow
        product.catalog.version = 2
        product.catalog.migrations = [
            CatalogMigration(
                from: 1,
                [
                    walkthrough: FlowChanges(
                        renamedSteps: ["markWeek": "reflectWeek"],
                        removedSteps: ["chaptersExplanation": .goOnAtNext],
                        renamedActions: ["saveMark": "saveReflection"])
                ])
        ]
        return product
    }

    /// LockedIn's onboarding is per install; this test keeps several users in one file, so both
    /// versions run it per user (as the benchmarks do).
    static var lockedInV1: Product {
        var product = LockedInCatalog.product
        for index in product.catalog.flows.indices { product.catalog.flows[index].scope = .user }
        product.catalog.stateScopes = StateScopes(.user)
        return product
    }

    /// LockedIn v2: `difficulty` is removed and runs on it start again; `selectDifficulty` moved
    /// nowhere; a `goal` step is added after `appSelection`; CONTINUE on the permissions step is
    /// renamed `proceed`.
    static var lockedInV2: Product {
        var product = lockedInV1
        var flow = product.catalog.flows[0]
        flow.steps.removeAll { $0.id == "difficulty" }
        let goal = StepDefinition(
            "goal", StepContent(title: "YOUR GOAL", body: "How many workouts a week?"), actions: [.next()])
        flow.steps.insert(goal, at: flow.steps.index(of: "appSelection") + 1)
        let permissions = flow.steps.index(of: "permissions")
        let next = flow.steps[permissions].actions.index(named: "next")
        flow.steps[permissions].actions[next].name = "proceed"
        product.catalog.flows[0] = flow
        product.catalog.version = 2
        product.catalog.migrations = [
            CatalogMigration(
                from: 1,
                [
                    onboarding: FlowChanges(
                        removedSteps: ["difficulty": .restart], renamedActions: ["next": "proceed"])
                ])
        ]
        return product
    }

    final class Folder: @unchecked Sendable {
        let url = Scratch.folder.appendingPathComponent("release-\(UUID().uuidString)")
        init() { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
        var database: String { url.appendingPathComponent("onboarding.sqlite").path }
    }

    func session(_ product: Product, _ user: String, _ database: OnboardingDatabase) -> TourSession {
        TourSession(product: product, user: user, database: database, time: .virtual(start: Journey.start))
    }

    /// v1 users of Finite at each interesting place (Finite's walkthrough is per install, so each
    /// user has a file of their own).
    func finiteV1(at place: String, _ folder: Folder) async throws -> OnboardingDatabase {
        let file = folder.url.appendingPathComponent("\(place)-\(UUID().uuidString).sqlite")
        let database = try OnboardingDatabase.open(path: file.path)
        let user = session(FiniteCatalog.product, "ann", database)
        let script: [TourEvent] =
            [
                .actionPerformed("setBirthDate", parameters: ["date": "1990-05-01"]),
                .appLaunched(version: "1.0"),
                .signal("revealCompleted"),
            ]
        for event in script { try await user.send(event) }
        try await user.advanceClock(by: 1.5)
        let moves: [String: [TourEvent]] = [
            "gridIntro": [],
            "viewModesIntro": [
                .actionPerformed("next", parameters: [:]),
                .actionPerformed("tapCurrentWeek", parameters: [:]),
            ],
            "chaptersExplanation": [
                .actionPerformed("next", parameters: [:]),
                .actionPerformed("tapCurrentWeek", parameters: [:]),
                .actionPerformed("swipeToChapters", parameters: [:]),
            ],
            "markWeek": [
                .actionPerformed("next", parameters: [:]),
                .actionPerformed("tapCurrentWeek", parameters: [:]),
                .actionPerformed("swipeToChapters", parameters: [:]),
                .actionPerformed("next", parameters: [:]),
                .actionPerformed("dismissPhase", parameters: [:]),
                .actionPerformed("longPressWeek", parameters: ["week": "100"]),
            ],
        ]
        for event in moves[place] ?? [] { try await user.send(event) }
        let stored = try database.storedFlows(app: "finite")["@install"]?[Self.walkthrough]
        #expect(
            stored?.currentStep?.rawValue == place, "v1 user not at \(place): \(String(describing: stored))")
        return database
    }

    @Test func finiteUsersOfV1ResumeWhereTheDeclarationsSay() async throws {
        let folder = Folder()
        let v2 = Self.finiteV2
        #expect(v2.problems.isEmpty, "\(v2.problems)")

        // Renamed step: the user is on it under its new name, the staged long-press kept, and the
        // renamed action (by its new name) completes it.
        let onMark = try await finiteV1(at: "markWeek", folder)
        let marker = session(v2, "ann", onMark)
        let card = try #require(try await marker.snapshot().card)
        #expect(card.step == "reflectWeek")
        #expect(card.actions.map(\.name).contains("saveReflection"))
        let moved = try await marker.send(
            .actionPerformed("saveReflection", parameters: ["note": "first job"]))
        #expect(
            moved[0].record.facts.contains {
                if case .runMigrated(Self.walkthrough, 1, 2, "markWeek", "reflectWeek", _, .moved, false) = $0
                {
                    true
                } else {
                    false
                }
            })
        #expect(moved[0].record.facts.contains(.stepCompleted(flow: Self.walkthrough, step: "reflectWeek")))
        #expect(try await marker.snapshot().card?.step == "complete")
        let stored = try #require(try onMark.storedFlows(app: "finite")["@install"]?[Self.walkthrough]?.run)
        #expect(stored.catalogVersion == 2)
        #expect(stored.fields["reflectionMood"] == "calm")

        // Removed step, go on at the next: the user is on addPhase.
        let onChapters = try await finiteV1(at: "chaptersExplanation", folder)
        let chapters = session(v2, "ann", onChapters)
        #expect(try await chapters.snapshot().card?.step == "addPhase")
        try await chapters.send(.appLaunched(version: "2.0"))
        #expect(try await chapters.snapshot().card?.step == "addPhase")

        // A step added before the user's step is behind them: not shown, and the count includes it.
        let onViewModes = try await finiteV1(at: "viewModesIntro", folder)
        let viewer = session(v2, "ann", onViewModes)
        try await viewer.send(.appLaunched(version: "2.0"))
        let viewing = try #require(try await viewer.snapshot().card)
        #expect(viewing.step == "viewModesIntro")
        #expect(viewing.progress?.step == 4)
        try await viewer.send(.actionPerformed("swipeToChapters", parameters: [:]))
        #expect(try await viewer.snapshot().card?.step == "addPhase")

        // An old action name typed against the new catalog still works (scripts of the last release).
        let onMarkAgain = try await finiteV1(at: "markWeek", folder)
        let typist = session(v2, "ann", onMarkAgain)
        try await typist.send(.appLaunched(version: "2.0"))
        try await typist.send(.actionPerformed("longPressWeek", parameters: ["week": "100"]))
        try await typist.send(.actionPerformed("saveMark", parameters: ["note": "old name"]))
        #expect(try await typist.snapshot().card?.step == "complete")

        // A user who has not started yet starts on v2's plan, privacy included.
        let fresh = try await finiteV1(at: "gridIntro", folder)
        let freshUser = session(v2, "ann", fresh)
        try await freshUser.send(.actionPerformed("next", parameters: [:]))
        try await freshUser.send(.actionPerformed("tapCurrentWeek", parameters: [:]))
        #expect(try await freshUser.snapshot().card?.step == "privacy")
    }

    @Test func lockedInUsersOfV1MoveRestartOrStayAndTheReportSpansBothVersions() async throws {
        let folder = Folder()
        let database = try OnboardingDatabase.open(path: folder.database)
        let v1 = Self.lockedInV1
        let v2 = Self.lockedInV2
        #expect(v2.problems.isEmpty, "\(v2.problems)")
        let toPermissions: [TourEvent] = [
            .appLaunched(version: "1.0"), .actionPerformed("next", parameters: [:]),
            .actionPerformed("chooseApps", parameters: ["apps": "Instagram"]),
            .actionPerformed("next", parameters: [:]),
            .actionPerformed("selectDifficulty", parameters: ["difficulty": "hard"]),
            .actionPerformed("next", parameters: [:]),
        ]
        // Under v1: dana finished, eve is on difficulty, finn on permissions, gus on welcome.
        for (user, events) in [
            ("dana", toPermissions + [.actionPerformed("grantScreenTime", parameters: [:])]),
            ("eve", Array(toPermissions.prefix(4))), ("finn", toPermissions),
            ("gus", [.appLaunched(version: "1.0")]),
        ] {
            let person = session(v1, user, database)
            for event in events { try await person.send(event) }
        }
        let dana = session(v1, "dana", database)
        try await dana.send(.actionPerformed("next", parameters: [:]))
        try await dana.send(.actionPerformed("letsGo", parameters: [:]))
        #expect(try database.storedFlows(app: "lockedin")["dana"]?[Self.onboarding]?.status == .completed)

        // v2 ships. Status before any event already shows where each user will be.
        func step(_ user: String, _ product: Product) async throws -> StepID? {
            try await session(product, user, database).snapshot().card?.step
        }
        #expect(try await step("eve", v2) == "welcome")  // removed step, restart
        #expect(try await step("finn", v2) == "permissions")
        #expect(try await step("gus", v2) == "welcome")
        #expect(try await step("dana", v2) == nil)

        // The forecast of the release (what `lockedin check --against` prints) says the same.
        let forecast = ReleaseForecast(engine: v2.engine, stored: try database.storedFlows(app: "lockedin"))
        let groups = forecast.groups.map {
            let from = $0.fromStep?.rawValue ?? "-"
            let to = $0.toStep?.rawValue ?? "-"
            return "\(from) \($0.outcome.rawValue) \(to) \($0.subjects)"
        }
        #expect(
            Set(groups) == [
                "difficulty restarted - 1", "permissions moved permissions 1", "welcome moved welcome 1",
            ])
        #expect(
            forecast.records == [
                ReleaseForecast.Record(flow: Self.onboarding, status: .completed, subjects: 1)
            ])
        #expect(
            ReleaseForecast(engine: v1.engine, stored: try database.storedFlows(app: "lockedin")).groups
                .allSatisfy {
                    $0.outcome == .stays
                })

        // Each goes on under v2: eve restarted (journaled), finn proceeds by the renamed action,
        // gus sees the added goal step after appSelection.
        let eve = session(v2, "eve", database)
        let relaunch = try await eve.send(.appLaunched(version: "2.0"))
        #expect(
            relaunch[0].record.facts.contains {
                if case .runMigrated(Self.onboarding, 1, 2, "difficulty", nil, _, .restarted, false) = $0 {
                    true
                } else {
                    false
                }
            })
        #expect(relaunch[0].record.outcome.contains("restarted"))
        // (No relaunch for finn: LockedIn's onboarding starts again on every relaunch, by its seed.)
        let finn = session(v2, "finn", database)
        try await finn.send(.actionPerformed("grantScreenTime", parameters: [:]))
        try await finn.send(.actionPerformed("proceed", parameters: [:]))
        #expect(try await finn.snapshot().card?.step == "activation")
        let gus = session(v2, "gus", database)
        try await gus.send(.actionPerformed("next", parameters: [:]))
        try await gus.send(.actionPerformed("chooseApps", parameters: ["apps": "TikTok"]))
        try await gus.send(.actionPerformed("next", parameters: [:]))
        #expect(try await gus.snapshot().card?.step == "goal")
        try await gus.send(.actionPerformed("next", parameters: [:]))
        #expect(try await gus.snapshot().card?.step == "permissions")

        // The journal shows every move; the report spans both versions with today's steps and the
        // removed one flagged.
        let rows = try database.journal(app: "lockedin")
        #expect(Set(rows.compactMap(\.catalogVersion)) == [1, 2])
        let migrated = rows.flatMap { $0.facts ?? [] }.filter { $0.name == "runMigrated" }
        #expect(migrated.count == 3)  // eve, finn, gus
        let funnel = try #require(
            try FlowFunnel.compute(app: "lockedin", engine: v2.engine, rows: rows.map(JournalEntry.init))
                .first)
        #expect(funnel.started == 5)  // dana, eve (twice: dropped by the restart), finn, gus
        #expect(funnel.completed == 1)
        let figures = Dictionary(uniqueKeysWithValues: funnel.steps.map { ($0.step, $0) })
        #expect(figures["difficulty"]?.removed == true)
        #expect(figures["difficulty"]?.reached == 3)  // dana, eve, finn under v1
        #expect(figures["goal"]?.reached == 1)
        #expect(figures["welcome"]?.reached == 5)
        #expect(funnel.steps.last?.step == "difficulty")

        // Rebuilding from the journal under v2 (v1 rows by their facts, v2 rows by replay) gives
        // every user's stored status and step.
        let rebuilt = try JournalReplay.rebuild(app: "lockedin", engine: v2.engine, from: database)
        let stored = try database.storedFlows(app: "lockedin")
        for (subject, flows) in stored {
            for (flow, state) in flows {
                #expect(rebuilt[subject]?[flow]?.status == state.status, "\(subject) \(flow)")
                #expect(rebuilt[subject]?[flow]?.currentStep == state.currentStep, "\(subject) \(flow)")
            }
        }
    }

    /// Finite 3, over 2: `reflectWeek` is now `weekReflection`, `privacy` is gone (runs on it go on
    /// at the next step). Its migrations chain 1 → 2 → 3.
    static var finiteV3: Product {
        var product = finiteV2
        var flow = product.catalog.flows[0]
        flow.steps.removeAll { $0.id == "privacy" }
        let reflect = flow.steps.index(of: "reflectWeek")
        flow.steps[reflect].id = "weekReflection"
        product.catalog.flows[0] = flow
        product.catalog.version = 3
        product.catalog.migrations.append(
            CatalogMigration(
                from: 2,
                [
                    walkthrough: FlowChanges(
                        renamedSteps: ["reflectWeek": "weekReflection"],
                        removedSteps: ["privacy": .goOnAtNext])
                ]))
        return product
    }

    /// Finite's recorded history with version 2 recorded as it would be when it shipped.
    static var finiteHistory: [RecordedCatalog] {
        get throws {
            FiniteOnboarding.registration.releases + [
                RecordedCatalog(file: "2.json", text: try finiteV2.document.text())
            ]
        }
    }

    @Test func aChainOfThreeVersionsPlacesUsersParkedOnTheFirst() async throws {
        let folder = Folder()
        let v3 = Self.finiteV3
        let history = try Self.finiteHistory
        #expect(v3.problems(releases: history).isEmpty, "\(v3.problems(releases: history))")

        // A user parked on markWeek (with the week sheet's press) since version 1 is on weekReflection
        // under 3, the press kept, and the old action name still saves.
        let onMark = try await finiteV1(at: "markWeek", folder)
        let marker = session(v3, "ann", onMark)
        #expect(try await marker.snapshot().card?.step == "weekReflection")
        let saved = try await marker.send(.actionPerformed("saveMark", parameters: ["note": "still here"]))
        #expect(
            saved[0].record.facts.contains {
                if case .runMigrated(Self.walkthrough, 1, 3, "markWeek", "weekReflection", _, .moved, false) =
                    $0
                {
                    true
                } else {
                    false
                }
            })
        #expect(try await marker.snapshot().card?.step == "complete")

        // On a step version 2 removed: addPhase.
        let onChapters = try await finiteV1(at: "chaptersExplanation", folder)
        #expect(try await session(v3, "ann", onChapters).snapshot().card?.step == "addPhase")

        // A user who reached privacy under version 2 goes on at viewModesIntro under 3.
        let fresh = try await finiteV1(at: "gridIntro", folder)
        let underTwo = session(Self.finiteV2, "ann", fresh)
        try await underTwo.send(.actionPerformed("next", parameters: [:]))
        try await underTwo.send(.actionPerformed("tapCurrentWeek", parameters: [:]))
        #expect(try await underTwo.snapshot().card?.step == "privacy")
        let underThree = session(v3, "ann", fresh)
        let moved = try await underThree.send(.clockAdvanced)
        #expect(
            moved[0].record.facts.contains {
                if case .runMigrated(Self.walkthrough, 2, 3, "privacy", "viewModesIntro", _, .moved, false) =
                    $0
                {
                    true
                } else {
                    false
                }
            })
        #expect(try await underThree.snapshot().card?.step == "viewModesIntro")

        // Version 3 written as if only version 2 had existed strands those parked on version 1:
        // the check says so, naming the steps.
        var forgetful = v3
        forgetful.catalog.migrations.removeAll { $0.from == 1 }
        let problems = forgetful.problems(releases: history).filter { $0.kind == .unplacedStep }
        #expect(Set(problems.compactMap(\.step)) == ["markWeek", "chaptersExplanation"], "\(problems)")
        #expect(problems.allSatisfy { $0.detail.contains("Finite") && $0.flow == Self.walkthrough })
    }
}
