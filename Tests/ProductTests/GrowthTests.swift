import Foundation
import GrowthOnboarding
import Persistence
import Testing
import TourRuntime

@Suite("Growth app tour (seed 003)")
struct GrowthTests {
    let tour = GrowthCatalog.appTour

    func journey(user: String = "ann", database: OnboardingDatabase? = nil) throws -> Journey {
        try Journey(GrowthCatalog.product, user: user, database: database)
    }

    @Test func theTourStartsOnTheFirstDashboardVisitAfterOnboarding() async throws {
        let journey = try journey()
        try await journey.launch()
        try await journey.send(.featureVisited("dashboard"))
        try await journey.expect(nil, nil)
        try await journey.act("completeOnboarding")
        try await journey.send(.featureVisited("dashboard"))
        try await journey.expect(tour, "dashboard")
        #expect(try await journey.card()?.progress?.description == "Step 1 of 5")
    }

    @Test func eachStepIsConfiguredByIdTargetTitleDescriptionPaddingAndPosition() async throws {
        let journey = try journey()
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
        let journey = try journey()
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
        #expect(try await journey.state()["tourStatus"] == "skipped")
    }

    @Test func oncePerUserAccount() async throws {
        let database = try OnboardingDatabase.inMemory()
        let ann = try journey(user: "ann", database: database)
        try await ann.act("completeOnboarding")
        try await ann.send(.featureVisited("dashboard"))
        for _ in 0..<5 { try await ann.act("next") }
        try await ann.launch()
        try await ann.send(.featureVisited("dashboard"))
        try await ann.expect(nil, nil)
        let bob = try journey(user: "bob", database: database)
        try await bob.act("completeOnboarding")
        try await bob.send(.featureVisited("dashboard"))
        try await bob.expect(tour, "dashboard")
    }

    // The tour following the account to another device (and offline devices catching up) is
    // tested against the real account server: Tests/ServerTests/GrowthAcrossDevicesTests.swift.

    @Test func anInterruptedTourResumesWhereItWas() async throws {
        let journey = try journey()
        try await journey.act("completeOnboarding")
        try await journey.send(.featureVisited("dashboard"))
        try await journey.act("next")
        try await journey.act("next")
        try await journey.launch()
        try await journey.expect(tour, "progress")
    }
}

extension GrowthTests {
    @Test func theDebugResetClearsTheTourStatusSoTheTourShowsAgain() async throws {
        let journey = try journey()
        try await journey.act("completeOnboarding")
        try await journey.send(.featureVisited("dashboard"))
        try await journey.act("skip")
        #expect(try await journey.state()["tourStatus"] == "skipped")
        try await journey.send(.resetRequested(nil))
        #expect(try await journey.state()["tourStatus"] == "notStarted")
        try await journey.launch()
        try await journey.send(.featureVisited("dashboard"))
        try await journey.expect(tour, "dashboard")
    }
}
