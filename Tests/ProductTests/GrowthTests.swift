import Foundation
import GrowthOnboarding
import Testing
import TourRuntime

@Suite("Growth app tour (seed 003)")
struct GrowthTests {
    let tour = GrowthCatalog.appTour

    final class Store: @unchecked Sendable {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "profiles-\(UUID().uuidString).json"
        ).path
        deinit { try? FileManager.default.removeItem(atPath: path) }
        func contents() -> [String: String] {
            (FileManager.default.contents(atPath: path)).flatMap {
                try? JSONDecoder().decode([String: String].self, from: $0)
            } ?? [:]
        }
    }

    func journey(user: String = "ann", store: Store, online: Bool = true, database: OnboardingDatabase? = nil)
        throws -> Journey
    {
        try Journey(
            GrowthCatalog.product(profiles: FileProfileStore(path: store.path, online: online)), user: user,
            database: database)
    }

    @Test func theTourStartsOnTheFirstDashboardVisitAfterOnboarding() async throws {
        let store = Store()
        let journey = try journey(store: store)
        try await journey.launch()
        try await journey.send(.featureVisited("dashboard"))
        try await journey.expect(nil, nil)
        try await journey.act("completeOnboarding")
        try await journey.send(.featureVisited("dashboard"))
        try await journey.expect(tour, "dashboard")
        #expect(try await journey.card()?.progress?.description == "Step 1 of 5")
    }

    @Test func eachStepIsConfiguredByIdTargetTitleDescriptionPaddingAndPosition() async throws {
        let store = Store()
        let journey = try journey(store: store)
        try await journey.act("completeOnboarding")
        try await journey.send(.featureVisited("dashboard"))
        for (index, step) in GrowthCatalog.steps.enumerated() {
            let card = try #require(try await journey.card(), "growth app_tour step \(step.id): no card")
            #expect(card.step == step.id)
            #expect(card.anchor == step.targetViewId)
            #expect(card.title == step.title)
            #expect(card.body == step.description)
            #expect(card.highlightPadding == step.highlightPadding)
            #expect(card.popover == step.position)
            #expect(card.progress?.description == "Step \(index + 1) of 5")
            try await journey.act("next")
        }
        #expect(try await journey.status(tour) == .completed)
    }

    @Test func nextPreviousAndSkipWithTheirLabels() async throws {
        let store = Store()
        let journey = try journey(store: store)
        try await journey.act("completeOnboarding")
        try await journey.send(.featureVisited("dashboard"))
        try await journey.refuses("back")
        try await journey.act("next")
        #expect(try await journey.card()?.actions.map(\.label) == ["Next", "Previous", "Skip Tour"])
        try await journey.act("back")
        try await journey.expect(tour, "dashboard")
        for _ in 0..<4 { try await journey.act("next") }
        #expect(try await journey.card()?.actions.first?.label == "Done")
        try await journey.act("skip")
        #expect(try await journey.status(tour) == .skipped)
        #expect(store.contents() == ["ann": "skipped"])
    }

    @Test func oncePerUserAccount() async throws {
        let store = Store()
        let database = try OnboardingDatabase.inMemory()
        let ann = try journey(user: "ann", store: store, database: database)
        try await ann.act("completeOnboarding")
        try await ann.send(.featureVisited("dashboard"))
        for _ in 0..<5 { try await ann.act("next") }
        try await ann.launch()
        try await ann.send(.featureVisited("dashboard"))
        try await ann.expect(nil, nil)
        let bob = try journey(user: "bob", store: store, database: database)
        try await bob.act("completeOnboarding")
        try await bob.send(.featureVisited("dashboard"))
        try await bob.expect(tour, "dashboard")
    }

    @Test func theProfileFlagFollowsTheAccountToAnotherDevice() async throws {
        let store = Store()
        let phone = try journey(store: store)
        try await phone.act("completeOnboarding")
        try await phone.send(.featureVisited("dashboard"))
        try await phone.act("skip")
        let tablet = try journey(store: store)
        try await tablet.act("completeOnboarding")
        try await tablet.launch()
        try await tablet.send(.featureVisited("dashboard"))
        try await tablet.expect(nil, nil)
    }

    @Test func offlineTheOutcomeIsKeptLocallyAndReachesTheProfileStoreOnceBack() async throws {
        let store = Store()
        let database = try OnboardingDatabase.inMemory()
        let offline = try journey(store: store, online: false, database: database)
        try await offline.act("completeOnboarding")
        try await offline.send(.featureVisited("dashboard"))
        for _ in 0..<5 { try await offline.act("next") }
        #expect(try await offline.state()["pendingProfileWrite"] == "completed")
        #expect(store.contents().isEmpty)
        try await offline.launch()
        try await offline.send(.featureVisited("dashboard"))
        try await offline.expect(nil, nil)
        let online = try journey(store: store, online: true, database: database)
        try await online.launch()
        #expect(store.contents() == ["ann": "completed"])
        #expect(try await online.state()["pendingProfileWrite"] == nil)
        #expect(try await online.state()["profileTourStatus"] == "completed")
    }

    @Test func anInterruptedTourResumesWhereItWas() async throws {
        let store = Store()
        let journey = try journey(store: store)
        try await journey.act("completeOnboarding")
        try await journey.send(.featureVisited("dashboard"))
        try await journey.act("next")
        try await journey.act("next")
        try await journey.launch()
        try await journey.expect(tour, "progress")
    }
}

extension GrowthTests {
    @Test func theDebugResetClearsTheProfileFlagSoTheTourShowsAgain() async throws {
        let store = Store()
        let journey = try journey(store: store)
        try await journey.act("completeOnboarding")
        try await journey.send(.featureVisited("dashboard"))
        try await journey.act("skip")
        #expect(store.contents() == ["ann": "skipped"])
        try await journey.send(.resetRequested(nil))
        #expect(store.contents() == ["ann": "notStarted"])
        try await journey.launch()
        try await journey.send(.featureVisited("dashboard"))
        try await journey.expect(tour, "dashboard")
    }
}
