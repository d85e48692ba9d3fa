import Foundation
import LockedInOnboarding
import Permissions
import Testing
import TourRuntime

@Suite("LockedIn onboarding (seed 001)")
struct LockedInTests {
    let flow = LockedInCatalog.onboarding

    func atPermissions(_ permissions: StubPermissionProvider = StubPermissionProvider()) async throws
        -> Journey
    {
        let journey = try Journey(LockedInCatalog.product, permissions: permissions)
        try await journey.launch()
        try await journey.act("next")
        try await journey.act("chooseApps", ["apps": "Instagram,TikTok,YouTube,Reddit"])
        try await journey.act("next")
        try await journey.act("next")
        try await journey.expect(flow, "permissions")
        return journey
    }

    @Test func aFreshInstallGoesThroughOnboardingToTheDashboardWithASixtyMinuteBank() async throws {
        let journey = try await atPermissions(
            StubPermissionProvider(answers: [.screenTime: .granted, .health: .granted]))
        try await journey.act("grantScreenTime")
        try await journey.act("grantHealth")
        try await journey.act("next")
        try await journey.expect(flow, "activation")
        #expect(
            try await journey.card()?.details == [
                "Starting Bank: 60 min", "Difficulty: medium", "4 apps blocked",
            ])
        let transitions = try await journey.act("letsGo")
        try await journey.expect(nil, nil)
        #expect(try await journey.status(flow) == .completed)
        let state = try await journey.state()
        #expect(state["startingBankMinutes"] == 60)
        #expect(state["balanceMinutes"] == 60)
        #expect(state["difficulty"] == "medium")
        #expect(state["hasCompletedOnboarding"] == true)
        // LET'S GO: difficulty, balance and completion in one journal row's transaction.
        #expect(transitions.count == 1)
        let row = try #require(try journey.database.journal().last)
        #expect(row.event == "letsGo")
        #expect(row.effectsJSON.contains("startingBankMinutes"))
    }

    @Test func appSelectionNeedsAtLeastOneAppAndReportsTheCount() async throws {
        let journey = try Journey(LockedInCatalog.product)
        try await journey.launch()
        try await journey.act("next")
        #expect(try await journey.card()?.details == [])
        #expect(try await journey.refuses("next")?.reason == "Select at least one app to continue.")
        #expect(try await journey.card()?.actions.map(\.name) == ["chooseApps", "back"])
        try await journey.act("chooseApps", ["apps": "Instagram,TikTok,YouTube,Reddit"])
        #expect(try await journey.card()?.details == ["4 apps selected"])
        #expect(
            try await journey.refuses("chooseApps", ["apps": ""])?.reason
                == "chooseApps needs apps=VALUE; its parameters: apps")
    }

    @Test func fourDifficultiesWithMediumPreselected() async throws {
        #expect(Difficulty.all.map(\.rank) == [1, 2, 3, 4])
        #expect(Difficulty.all.map(\.name) == ["EASY", "MEDIUM", "HARD", "EXTREME"])
        let journey = try Journey(LockedInCatalog.product)
        try await journey.launch()
        try await journey.act("next")
        try await journey.act("chooseApps", ["apps": "X"])
        try await journey.act("next")
        #expect(try await journey.card()?.body == "Selected: medium")
        #expect(try await journey.card()?.details.count == 4)
        #expect(
            try await journey.refuses("selectDifficulty", ["difficulty": "insane"])?.reason
                == "difficulty must be one of easy, medium, hard, extreme")
        try await journey.act("selectDifficulty", ["difficulty": "HARD"])
        #expect(try await journey.card()?.body == "Selected: hard")
    }

    @Test func screenTimeDenialBlocksWithTheAlert() async throws {
        let journey = try await atPermissions(StubPermissionProvider(answers: [.screenTime: .denied]))
        try await journey.act("grantScreenTime")
        #expect(try await journey.card()?.notices == [LockedInCatalog.screenTimeDeniedMessage])
        #expect(try await journey.refuses("next")?.reason == LockedInCatalog.screenTimeDeniedMessage)
    }

    @Test func healthDenialWarnsAndAllowsContinue() async throws {
        let journey = try await atPermissions(StubPermissionProvider(answers: [.health: .denied]))
        try await journey.act("grantScreenTime")
        try await journey.act("grantHealth")
        #expect(
            try await journey.card()?.notices == [
                "Screen Time access granted.", LockedInCatalog.healthDeniedMessage,
            ])
        try await journey.act("next")
        try await journey.expect(flow, "activation")
    }

    @Test func alreadyAuthorizedPermissionsShowSuccessAtOnce() async throws {
        let journey = try await atPermissions(
            StubPermissionProvider(statuses: [.screenTime: .granted, .health: .granted]))
        #expect(
            try await journey.card()?.notices == [
                "Screen Time access granted.", "Apple Health access granted.",
            ])
        #expect(journey.permissions.requests.isEmpty)
        try await journey.act("next")
        try await journey.expect(flow, "activation")
    }

    @Test func backWorksOnScreensTwoToFourOnly() async throws {
        let journey = try await atPermissions(StubPermissionProvider(statuses: [.screenTime: .granted]))
        try await journey.act("back")
        try await journey.expect(flow, "difficulty")
        try await journey.act("back")
        try await journey.expect(flow, "appSelection")
        #expect(try await journey.card()?.details == ["4 apps selected"])
        try await journey.act("back")
        try await journey.expect(flow, "welcome")
        try await journey.refuses("back")
        for _ in 0..<3 { try await journey.act("next") }
        try await journey.act("next")
        try await journey.expect(flow, "activation")
        #expect(try await journey.refuses("back")?.reason == "going back is not allowed on this step")
    }

    @Test func aKillMidFlowRestartsAtWelcomeWithNothingPartialKept() async throws {
        let journey = try Journey(LockedInCatalog.product)
        try await journey.launch()
        try await journey.act("next")
        try await journey.act("chooseApps", ["apps": "A,B"])
        try await journey.act("next")
        try await journey.act("selectDifficulty", ["difficulty": "hard"])
        try await journey.launch()
        try await journey.expect(flow, "welcome")
        try await journey.act("next")
        #expect(try await journey.card()?.details == [])
        try await journey.act("chooseApps", ["apps": "A"])
        try await journey.act("next")
        #expect(try await journey.card()?.body == "Selected: medium")
        #expect(try await journey.state().isEmpty)
    }

    @Test func onboardingShowsOnlyOnce() async throws {
        let journey = try await atPermissions(StubPermissionProvider(statuses: [.screenTime: .granted]))
        try await journey.act("next")
        try await journey.act("letsGo")
        try await journey.launch()
        try await journey.expect(nil, nil)
        #expect(try await journey.state()["balanceMinutes"] == 60)
    }

    @Test func noScreenOffersSkip() async throws {
        let journey = try Journey(LockedInCatalog.product)
        try await journey.launch()
        // No step of LockedIn has a Skip, so `skip` is an unknown action there, on every step.
        for step in ["welcome", "appSelection"] {
            let refusal = try await journey.refuses("skip")
            #expect(refusal?.code == .unknownAction, "\(step)")
            #expect(refusal?.reason == "unknown action", "\(step)")
            if step == "welcome" { try await journey.act("next") }
        }
    }
}

extension LockedInTests {
    @Test func theDebugResetShowsOnboardingAgainAndClearsTheCompletedFlag() async throws {
        let journey = try await atPermissions(StubPermissionProvider(statuses: [.screenTime: .granted]))
        try await journey.act("next")
        try await journey.act("letsGo")
        try await journey.send(.resetRequested(nil))
        #expect(try await journey.state()["hasCompletedOnboarding"] == nil)
        #expect(try await journey.state()["startingBankMinutes"] == 60)
        try await journey.launch()
        try await journey.expect(flow, "welcome")
    }
}
