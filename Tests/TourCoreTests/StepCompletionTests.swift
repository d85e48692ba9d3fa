import Foundation
import Testing
import TourFixtures

@testable import TourCore

@Suite("How steps complete")
struct StepCompletionTests {
    func startedWalk(context: TourContext = ["weeks": 1500, "filledCount": 1500]) throws -> Driver {
        var driver = Driver(Fixtures.engine(Fixtures.walk), context: context)
        try driver.send(.signal("revealed"))
        try driver.wait(1.5)
        return driver
    }

    @Test func nextAdvancesATapAnywhereStep() throws {
        var driver = try startedWalk()
        #expect(driver.step == "intro")
        try driver.act("next")
        #expect(driver.step == "tapTarget")
    }

    @Test func aSpecificActionStepAcceptsOnlyItsAction() throws {
        var driver = try startedWalk()
        try driver.act("next")
        let refusal = try #require(driver.refuses(.actionPerformed("next", parameters: [:])))
        #expect(refusal.step == "tapTarget")
        #expect(refusal.allowed == ["tapTarget", "skip"])
        try driver.act("tapTarget")
        #expect(driver.step == "modal")
    }

    @Test func aModalAdvancesWhetherSubmittedOrDismissed() throws {
        var saved = try startedWalk()
        try saved.act("next")
        try saved.act("tapTarget")
        try saved.act("save", ["name": "School"])
        #expect(saved.step == "staged")
        #expect(saved.products == [ProductEffect(name: "stored", payload: ["name": "School"])])

        var dismissed = try startedWalk()
        try dismissed.act("next")
        try dismissed.act("tapTarget")
        try dismissed.act("dismiss")
        #expect(dismissed.step == "staged")
        #expect(dismissed.products.isEmpty)
    }

    @Test func aStagedStepNeedsItsStagesInOrder() throws {
        var driver = try startedWalk()
        for action in ["next", "tapTarget", "dismiss"] { try driver.act(action) }
        let early = try #require(driver.refuses(.actionPerformed("saveMark", parameters: [:])))
        #expect(early.reason == "press a week first")
        try driver.act("press", ["week": "12"])
        #expect(driver.haptics == [.impactMedium])
        #expect(driver.step == "staged")
        try driver.act("saveMark")
        #expect(driver.products == [ProductEffect(name: "marked", payload: ["week": 12])])
        #expect(driver.step == "finale")
    }

    @Test func aParameterOutsideItsRangeIsRefusedWithTheRange() throws {
        var driver = try startedWalk(context: ["weeks": 20, "filledCount": 20])
        for action in ["next", "tapTarget", "dismiss"] { try driver.act(action) }
        let refusal = try #require(driver.refuses(.actionPerformed("press", parameters: ["week": "21"])))
        #expect(refusal.reason == "week must be a whole number 1...20")
        let unknown = try #require(
            driver.refuses(.actionPerformed("press", parameters: ["week": "3", "mood": "x"])))
        #expect(unknown.reason.contains("'mood' is not a parameter of press"))
    }

    @Test func aFormStepAllowsContinueOnlyWhenValid() throws {
        var driver = Driver(Fixtures.engine(Fixtures.form))
        try driver.send(.appLaunched(version: nil))
        try driver.act("next")
        #expect(driver.card?.actions.map(\.name) == ["choose", "back"])
        let refusal = try #require(driver.refuses(.actionPerformed("next", parameters: [:])))
        #expect(refusal.reason == "Select at least one app.")
        try driver.act("choose", ["apps": "Instagram, TikTok,YouTube,Reddit"])
        #expect(driver.card?.body == "4 apps selected")
        #expect(driver.card?.actions.map(\.name) == ["choose", "next", "back"])
        try driver.act("choose", ["apps": "Instagram"])
        #expect(driver.card?.body == "1 app selected")
        try driver.act("next")
        #expect(driver.step == "level")
        #expect(driver.card?.body == "medium")
        #expect(
            driver.refuses(.actionPerformed("select", parameters: ["level": "extreme"]))?.reason
                == "level must be one of easy, medium, hard")
    }

    @Test func aTimedStepCompletesByItselfWhenTimePasses() throws {
        var driver = try startedWalk()
        for action in ["next", "tapTarget", "dismiss"] { try driver.act(action) }
        try driver.act("press", ["week": "3"])
        try driver.act("saveMark")
        #expect(driver.card?.autoAdvanceAt == driver.now.addingTimeInterval(2.5).timeIntervalSince1970)
        try driver.wait(2.4)
        #expect(driver.step == "finale")
        try driver.wait(0.1)
        #expect(driver.card == nil)
        #expect(driver.status("walk") == .completed)
        #expect(driver.haptics == [.notificationSuccess])
    }
}

@Suite("Permission and request gates")
struct GateTests {
    func atPermissions() throws -> Driver {
        var driver = Driver(Fixtures.engine(Fixtures.form))
        try driver.send(.appLaunched(version: nil))
        try driver.act("next")
        try driver.act("choose", ["apps": "A"])
        try driver.act("next")
        try driver.act("next")
        return driver
    }

    @Test func enteringAPermissionStepChecksItsStatus() throws {
        var driver = Driver(Fixtures.engine(Fixtures.form))
        try driver.send(.appLaunched(version: nil))
        try driver.act("next")
        try driver.act("choose", ["apps": "A"])
        try driver.act("next")
        let effects = try driver.act("next")
        #expect(effects.contains(.checkPermission(gate: "screenTime", .screenTime)))
        #expect(effects.contains(.checkPermission(gate: "health", .health)))
    }

    @Test func anAlreadyGrantedPermissionShowsSuccessAtOnce() throws {
        var driver = try atPermissions()
        try driver.send(.gateAnswered("screenTime", .granted))
        #expect(driver.card?.notices == ["Screen Time granted"])
        #expect(driver.card?.actions.map(\.name).contains("next") == true)
    }

    @Test func aRequiredPermissionDeniedBlocksWithItsMessage() throws {
        var driver = try atPermissions()
        let effects = try driver.act("grantScreenTime")
        #expect(effects.contains(.requestPermission(gate: "screenTime", .screenTime)))
        try driver.send(.gateAnswered("screenTime", .denied))
        #expect(driver.card?.notices == ["Screen Time is required."])
        let refusal = try #require(driver.refuses(.actionPerformed("next", parameters: [:])))
        #expect(refusal.reason == "Screen Time is required.")
        #expect(refusal.step == "perms")
    }

    @Test func anOptionalPermissionDeniedWarnsAndAllowsContinue() throws {
        var driver = try atPermissions()
        try driver.act("grantScreenTime")
        try driver.send(.gateAnswered("screenTime", .granted))
        try driver.act("grantHealth")
        try driver.send(.gateAnswered("health", .denied))
        #expect(driver.card?.notices == ["Screen Time granted", "Workouts will not be tracked."])
        try driver.act("next")
        #expect(driver.step == "done")
    }

    @Test func aGrantedRequestCanAdvanceAndAnUnavailableOneOpensItsWayOut() throws {
        var driver = Driver(Fixtures.engine(Fixtures.intro))
        try driver.send(.appLaunched(version: "2.5"))
        try driver.act("next")
        #expect(driver.refuses(.actionPerformed("later", parameters: [:]))?.reason == "only without network")
        let effects = try driver.act("connect", ["username": "W1AW", "password": "hunter2"])
        guard
            case .request(_, _, let payload, let secrets)? = effects.first(where: {
                if case .request = $0 { true } else { false }
            })
        else {
            Issue.record("no request effect")
            return
        }
        #expect(payload["username"] == "W1AW")
        #expect(payload["password"] == nil)
        #expect(secrets["password"]?.reveal() == "hunter2")
        try driver.send(.gateAnswered("connection", .unavailable))
        #expect(driver.card?.notices == ["No network"])
        try driver.act("later")
        #expect(driver.step == "bye")

        var online = Driver(Fixtures.engine(Fixtures.intro))
        try online.send(.appLaunched(version: "2.5"))
        try online.act("next")
        try online.act("connect", ["username": "W1AW", "password": "hunter2"])
        try online.send(.gateAnswered("connection", .granted))
        #expect(online.step == "bye")
    }

    @Test func anAnswerNobodyWaitsForIsRefused() throws {
        var driver = Driver(Fixtures.engine(Fixtures.form))
        try driver.send(.appLaunched(version: nil))
        #expect(
            driver.refuses(.gateAnswered("screenTime", .granted))?.reason
                == "no step showing now waits for screenTime")
    }
}
