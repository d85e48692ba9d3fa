import CarrierWaveOnboarding
import FiniteOnboarding
import Foundation
import GrowthOnboarding
import LockedInOnboarding
import MoodTrackerOnboarding
import Persistence
import Testing
import TourFixtures
import TourRuntime

/// Two users on one install (one database), for every product: product state that mirrors or
/// feeds a flow lives in the flow's scope, so both users read the same for an install-scoped flow,
/// and each their own for a user-scoped one.
@Suite("One install, several users")
struct OneInstallManyUsersTests {
    /// Two users of one database file.
    func users(_ product: Product) throws -> (alice: Journey, bob: Journey) {
        let path = Scratch.folder.appendingPathComponent("install-\(UUID().uuidString).sqlite")
        let database = try OnboardingDatabase.open(path: path.path)
        return (
            try Journey(product, user: "alice", database: database),
            try Journey(product, user: "bob", database: database)
        )
    }

    @Test func lockedInsOnboardingAndItsBankBelongToTheInstall() async throws {
        let (alice, bob) = try users(LockedInCatalog.product)
        try await alice.launch()
        try await alice.act("next")
        try await alice.act("chooseApps", ["apps": "Instagram"])
        for action in ["next", "next", "grantScreenTime", "next", "letsGo"] { try await alice.act(action) }
        #expect(try await bob.status(LockedInCatalog.onboarding) == .completed)
        let state = try await bob.state()
        #expect(state["hasCompletedOnboarding"] == true)
        #expect(state["startingBankMinutes"] == 60)
        #expect(state["balanceMinutes"] == 60)
        try await bob.launch()
        try await bob.expect(nil, nil)
    }

    @Test func moodTrackersTutorialFlagIsTheInstallsAndMoodsAreEachUsers() async throws {
        let (alice, bob) = try users(MoodTrackerCatalog.product)
        try await alice.launch()
        try await alice.wait(0.5)
        for _ in 0..<3 { try await alice.act("next") }
        #expect(try await bob.state()["hasSeenTutorial"] == true)
        try await bob.launch()
        try await bob.wait(0.5)
        try await bob.expect(nil, nil)
        // A reset by one user clears the flag for both, and the tutorial shows again for both.
        try await bob.send(.resetRequested(nil))
        #expect(try await alice.state()["hasSeenTutorial"] == nil)
        try await alice.launch()
        try await alice.wait(0.5)
        try await alice.expect(MoodTrackerCatalog.tutorial, "swipeToSelect")
        // Moods are the account's.
        try await alice.act("swipeRight")
        #expect(try await alice.state()["moodEntries"]?.count == 1)
        #expect(try await bob.state()["moodEntries"] == nil)
    }

    @Test func finitesPhasesAndBirthDateFeedTheInstallsWalkthrough() async throws {
        let (alice, bob) = try users(FiniteCatalog.product)
        try await alice.act("setBirthDate", ["date": "1990-05-01"])
        try await alice.act("addPhase", ["name": "School"])
        try await bob.launch()
        try await bob.wait(1.5)
        // The install has phases: "Add your first chapter" is left out for whoever sees the walkthrough.
        #expect(try await bob.card()?.progress?.total == 5)
        #expect(try await bob.state()["birthDate"] == "1990-05-01")
    }

    @Test func carrierWavesConnectedServicesAreTheInstalls() async throws {
        let product = CarrierWaveCatalog.product(connector: StubServiceConnector(online: true))
        let (alice, bob) = try users(product)
        try await alice.launch()
        try await alice.act("next")
        try await alice.act("next")
        try await alice.act("connect", ["username": "W1AW", "password": "pw"])
        #expect(try await bob.state()["accounts"] == ["qrz": "W1AW"])
        try await bob.expect(CarrierWaveCatalog.intro, "moreServices")
    }

    @Test func growthsTourAndOnboardingAreEachAccounts() async throws {
        let (alice, bob) = try users(GrowthCatalog.product)
        try await alice.act("completeOnboarding")
        try await alice.send(.featureVisited("dashboard"))
        try await alice.act("skip")
        #expect(try await bob.state()["onboardingComplete"] == nil)
        try await bob.act("completeOnboarding")
        try await bob.send(.featureVisited("dashboard"))
        try await bob.expect(GrowthCatalog.appTour, "dashboard")
        #expect(try await alice.status(GrowthCatalog.appTour) == .skipped)
    }
}
