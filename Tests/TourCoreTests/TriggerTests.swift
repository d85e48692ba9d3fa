import Foundation
import Testing
import TourFixtures

@testable import TourCore

@Suite("What starts a flow")
struct TriggerTests {
    @Test func aLaunchTriggerWaitsForItsDelay() throws {
        var driver = Driver(Fixtures.engine(Fixtures.tutorial))
        try driver.send(.appLaunched(version: nil))
        #expect(driver.card == nil)
        #expect(driver.engine.nextDeadline(in: driver.state) == driver.now.addingTimeInterval(0.5))
        try driver.wait(0.49)
        #expect(driver.card == nil)
        try driver.wait(0.01)
        #expect(driver.step == "swipe")
        #expect(driver.analytics == ["tutorial_started"])
    }

    @Test func aSignalTriggerStartsAfterItsDelay() throws {
        var driver = Driver(Fixtures.engine(Fixtures.walk))
        try driver.send(.appLaunched(version: nil))
        #expect(driver.card == nil)
        try driver.send(.signal("revealed"))
        try driver.wait(1.4)
        #expect(driver.card == nil)
        try driver.wait(0.1)
        #expect(driver.step == "intro")
        #expect(driver.haptics == [.impactLight])
    }

    @Test func anotherFlowsCompletionPlusAPlace() throws {
        var driver = Driver(Fixtures.engine(Fixtures.form, Fixtures.tour))
        try driver.send(.featureVisited("dashboard"))
        #expect(driver.status("tour") == .notStarted)
        try driver.send(.appLaunched(version: nil))
        try driver.act("next")
        try driver.act("choose", ["apps": "A"])
        try driver.act("next")
        try driver.act("next")
        try driver.act("grantScreenTime")
        try driver.send(.gateAnswered("screenTime", .granted))
        try driver.act("next")
        try driver.act("go")
        #expect(
            driver.products == [ProductEffect(name: "activate", payload: ["level": "medium", "bank": 60])])
        try driver.send(.featureVisited("dashboard"))
        #expect(driver.step == "s1")
        #expect(driver.card?.progress?.description == "Step 1 of 3")
        #expect(
            driver.card?.actions == [
                CardAction(name: "next", label: "Next"), CardAction(name: "skip", label: "Skip Tour"),
            ])
        try driver.act("next")
        #expect(driver.card?.actions.map(\.label) == ["Next", "Previous", "Skip Tour"])
        #expect(driver.card?.anchor == "view2")
        #expect(driver.card?.highlightPadding == 8)
        #expect(driver.card?.popover == .below)
    }

    @Test func aFirstVisitTriggersOnceAndUnknownPlacesAreRefused() throws {
        var driver = Driver(Fixtures.engine(Fixtures.tip))
        try driver.send(.featureVisited("feature"))
        #expect(driver.step == "a")
        try driver.act("next")
        try driver.act("next")
        try driver.send(.featureVisited("feature"))
        #expect(driver.card == nil)
        let refusal = driver.refuses(.featureVisited("nowhere"))
        #expect(refusal?.code == .unknownFeature)
        #expect(refusal?.allowed == ["feature"])
        #expect(refusal?.description.hasSuffix("unknown feature. Features: feature.") == true)
        #expect(driver.refuses(.featureVisited("featur"))?.suggestion == "feature")
    }

    @Test func anUpgradeIntoAListedVersionTriggersOnlyAfterAnEarlierTour() throws {
        // A fresh install sees the intro, never the prompt.
        var fresh = Driver(Fixtures.engine(Fixtures.intro, Fixtures.prompt))
        try fresh.send(.appLaunched(version: "2.0"))
        #expect(fresh.step == "hello")
        try fresh.act("skip")
        #expect(fresh.card == nil)
        try fresh.send(.appLaunched(version: "2.0"))
        #expect(fresh.card == nil)

        // Someone who finished the tour in 1.5 gets the prompt in 2.0.1, once.
        var upgraded = Driver(Fixtures.engine(Fixtures.intro, Fixtures.prompt))
        try upgraded.send(.appLaunched(version: "1.5"))
        try upgraded.act("skip")
        try upgraded.send(.appLaunched(version: "1.9"))
        #expect(upgraded.card == nil)
        try upgraded.send(.appLaunched(version: "2.0.1"))
        #expect(upgraded.step == "new")
        try upgraded.act("next")
        try upgraded.send(.appLaunched(version: "2.1"))
        #expect(upgraded.card == nil)
    }

    @Test func aVisitWhileAnotherFlowShowsIsIgnoredSoTheNextVisitTriggers() throws {
        var driver = Driver(Fixtures.engine(Fixtures.intro, Fixtures.tip))
        try driver.send(.appLaunched(version: "1.0"))
        try driver.send(.featureVisited("feature"))
        #expect(driver.card?.flow == "intro")
        #expect(driver.state[flow: "tip"].pendingStart == nil)
        try driver.act("skip")
        // The tip belongs to its feature: it does not appear later somewhere else.
        #expect(driver.card == nil)
        try driver.send(.featureVisited("feature"))
        #expect(driver.card?.flow == "tip")
    }

    @Test func aSignalWhileAnotherFlowShowsQueuesBehindIt() throws {
        var alert = Fixtures.tip
        alert.id = "alert"
        alert.triggers = [Trigger(.signal("authFailed"))]
        #expect(alert.triggers[0].whileAnotherFlowShows == .queue)
        var driver = Driver(Fixtures.engine(Fixtures.intro, alert))
        try driver.send(.appLaunched(version: "1.0"))
        try driver.send(.signal("authFailed"))
        #expect(driver.card?.flow == "intro")
        try driver.act("skip")
        #expect(driver.card?.flow == "alert")
    }

    @Test func anInvalidVersionIsRefused() throws {
        let driver = Driver(Fixtures.engine(Fixtures.intro))
        #expect(
            driver.refuses(.appLaunched(version: "two"))?.reason
                == "app version 'two' is not a dotted version number such as 2.5, at most 64 characters")
        // Longer than the account server stores: refused where it is written.
        let long = String(repeating: "1.", count: 32) + "1"
        #expect(long.count == 65)
        #expect(driver.refuses(.appLaunched(version: long)) != nil)
        #expect(driver.refuses(.appLaunched(version: "١.٢")) != nil, "digits are ASCII digits")
    }

    @Test func versionsCompareNumerically() {
        #expect(AppVersion.isOlder("2.5", than: "2.10"))
        #expect(!AppVersion.isOlder("2.0", than: "2"))
        #expect(AppVersion.isOlder("1.9.9", than: "2.0"))
        #expect(!AppVersion.isValid("2..0"))
    }
}
