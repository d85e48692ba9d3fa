import Foundation
import Testing
import TourFixtures

@testable import TourCore

@Suite("Per-step policies")
struct StepPolicyTests {
    @Test func skipIsAllowedOnlyWhereTheStepAllowsIt() throws {
        var driver = Driver(Fixtures.engine(Fixtures.walk), context: ["weeks": 10, "filledCount": 10])
        try driver.send(.signal("revealed"))
        try driver.wait(1.5)
        for action in ["next", "tapTarget", "dismiss"] { try driver.act(action) }
        try driver.act("press", ["week": "3"])
        try driver.act("saveMark")
        #expect(driver.step == "finale")
        let refusal = try #require(driver.refuses(.actionPerformed("skip", parameters: [:])))
        #expect(refusal.reason == "skipping is not allowed on this step")
        #expect(refusal.flow == "walk")
        #expect(refusal.step == "finale")
    }

    @Test func backIsAllowedOnlyWhereTheStepAllowsIt() throws {
        var driver = Driver(Fixtures.engine(Fixtures.form))
        try driver.send(.appLaunched(version: nil))
        #expect(
            driver.refuses(.actionPerformed("back", parameters: [:]))?.reason
                == "going back is not allowed on this step")
        try driver.act("next")
        try driver.act("choose", ["apps": "A,B"])
        try driver.act("next")
        try driver.act("back")
        #expect(driver.step == "pick")
        #expect(driver.card?.body == "2 apps selected")
        try driver.act("next")
        try driver.act("next")
        try driver.act("grantScreenTime")
        try driver.send(.gateAnswered("screenTime", .granted))
        try driver.act("next")
        #expect(driver.step == "done")
        #expect(driver.refuses(.actionPerformed("back", parameters: [:])) != nil)
    }

    @Test func aStepIsLeftOutWhenItsConditionDoesNotHold() throws {
        var driver = Driver(
            Fixtures.engine(Fixtures.walk), context: ["hasItems": true, "weeks": 5, "filledCount": 5])
        try driver.send(.signal("revealed"))
        try driver.wait(1.5)
        #expect(driver.state[flow: "walk"].plan == ["intro", "tapTarget", "staged", "finale"])
        try driver.act("next")
        try driver.act("tapTarget")
        #expect(driver.step == "staged")
        #expect(driver.card?.progress == StepProgress(step: 3, total: 3))
    }

    @Test func anAnchorFallsBackWhenItsTargetIsUnavailable() throws {
        for (filled, expected) in [(0, "first"), (3, "filled")] {
            var driver = Driver(
                Fixtures.engine(Fixtures.walk), context: ["weeks": 5, "filledCount": .int(filled)])
            try driver.send(.signal("revealed"))
            try driver.wait(1.5)
            for action in ["next", "tapTarget", "dismiss"] { try driver.act(action) }
            #expect(driver.card?.anchor == expected)
        }
    }
}

@Suite("Per-flow policies")
struct FlowPolicyTests {
    @Test func skipRecordedAsSkippedNeverShowsAgain() throws {
        var driver = Driver(Fixtures.engine(Fixtures.walk))
        try driver.send(.signal("revealed"))
        try driver.wait(1.5)
        try driver.act("skip")
        #expect(driver.haptics == [.impactMedium])
        #expect(driver.status("walk") == .skipped)
        try driver.send(.appLaunched(version: nil))
        try driver.send(.signal("revealed"))
        try driver.wait(10)
        #expect(driver.card == nil)
    }

    @Test func skipThatCountsAsCompleteRecordsCompleted() throws {
        var driver = Driver(Fixtures.engine(Fixtures.intro))
        try driver.send(.appLaunched(version: "2.5"))
        try driver.act("skip")
        #expect(driver.status("intro") == .completed)
        try driver.send(.appLaunched(version: "2.5"))
        #expect(driver.card == nil)
    }

    @Test func skipThatRecordsNothingShowsAgainNextLaunch() throws {
        var driver = Driver(Fixtures.engine(Fixtures.tutorial))
        try driver.send(.appLaunched(version: nil))
        try driver.wait(0.5)
        try driver.act("skip")
        #expect(driver.analytics == ["tutorial_skipped"])
        #expect(driver.status("tutorial") == .notStarted)
        #expect(driver.state[flow: "tutorial"] == FlowState())
        try driver.send(.appLaunched(version: nil))
        try driver.wait(0.5)
        #expect(driver.step == "swipe")
    }

    @Test func onlyCompletionRecordsSeen() throws {
        var driver = Driver(Fixtures.engine(Fixtures.tutorial))
        try driver.send(.appLaunched(version: nil))
        try driver.wait(0.5)
        try driver.act("next")
        try driver.act("next")
        try driver.act("backdrop")
        #expect(driver.status("tutorial") == .completed)
        try driver.send(.appLaunched(version: nil))
        try driver.wait(5)
        #expect(driver.card == nil)
    }

    @Test func resumePolicyKeepsTheStepAcrossALaunch() throws {
        var driver = Driver(Fixtures.engine(Fixtures.walk))
        try driver.send(.signal("revealed"))
        try driver.wait(1.5)
        try driver.act("next")
        try driver.send(.appLaunched(version: nil))
        #expect(driver.step == "tapTarget")
    }

    @Test func restartPolicyStartsOverWithNothingPartialKept() throws {
        var driver = Driver(Fixtures.engine(Fixtures.form))
        try driver.send(.appLaunched(version: nil))
        try driver.act("next")
        try driver.act("choose", ["apps": "A"])
        try driver.act("next")
        try driver.act("select", ["level": "hard"])
        try driver.send(.appLaunched(version: nil))
        #expect(driver.step == "welcome")
        #expect(driver.state[flow: "form"].fields == ["level": "medium"])
    }

    @Test func discardPolicyDropsTheRunAndLetsTheTriggerDecide() throws {
        var driver = Driver(Fixtures.engine(Fixtures.tutorial))
        try driver.send(.appLaunched(version: nil))
        try driver.wait(0.5)
        try driver.act("next")
        try driver.send(.appLaunched(version: nil))
        #expect(driver.card == nil)
        try driver.wait(0.5)
        #expect(driver.step == "swipe")
    }

    @Test func replayThatResetsPresentsTheFlowFromTheStart() throws {
        var driver = Driver(Fixtures.engine(Fixtures.intro))
        try driver.send(.appLaunched(version: "2.5"))
        try driver.act("skip")
        try driver.send(.replayRequested(nil))
        #expect(driver.step == "hello")
        #expect(driver.status("intro") == .active)
        #expect(driver.card?.isReplay == false)
    }

    @Test func replayWithoutRecordingLeavesTheRecordAsItWas() throws {
        var driver = Driver(Fixtures.engine(Fixtures.tutorial))
        try driver.send(.appLaunched(version: nil))
        try driver.wait(0.5)
        for _ in 0..<3 { try driver.act("next") }
        let before = driver.state[flow: "tutorial"]
        try driver.send(.replayRequested("tutorial"))
        #expect(driver.analytics == ["tutorial_started", "tutorial_replayed"])
        #expect(driver.card?.isReplay == true)
        try driver.act("skip")
        #expect(driver.state[flow: "tutorial"] == before)

        var fresh = Driver(Fixtures.engine(Fixtures.tutorial))
        try fresh.send(.replayRequested(nil))
        for _ in 0..<3 { try fresh.act("next") }
        #expect(fresh.state[flow: "tutorial"] == FlowState())
    }

    @Test func aDismissalMidFlowCountsAsSeen() throws {
        var driver = Driver(Fixtures.engine(Fixtures.tip))
        try driver.send(.featureVisited("feature"))
        try driver.act("close")
        #expect(driver.status("tip") == .completed)
        try driver.send(.featureVisited("feature"))
        #expect(driver.card == nil)
    }

    @Test func resetReturnsEveryFlowToNotStarted() throws {
        var driver = Driver(Fixtures.engine(Fixtures.walk, Fixtures.tip))
        try driver.send(.signal("revealed"))
        try driver.wait(1.5)
        try driver.act("skip")
        try driver.send(.featureVisited("feature"))
        try driver.send(.resetRequested(nil))
        #expect(driver.state.flows.isEmpty)
        try driver.send(.signal("revealed"))
        try driver.wait(1.5)
        #expect(driver.step == "intro")
    }
}
