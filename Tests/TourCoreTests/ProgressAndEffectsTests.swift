import Foundation
import Testing
import TourFixtures

@testable import TourCore

@Suite("Progress, effects and refusals")
struct ProgressAndEffectsTests {
    @Test func progressCountsIncludedStepsAndCanLeaveOutTheTerminalStep() throws {
        var driver = Driver(Fixtures.engine(Fixtures.walk), context: ["weeks": 5, "filledCount": 5])
        try driver.send(.signal("revealed"))
        try driver.wait(1.5)
        #expect(driver.card?.progress == StepProgress(step: 1, total: 4))
        for action in ["next", "tapTarget", "dismiss"] { try driver.act(action) }
        try driver.act("press", ["week": "1"])
        try driver.act("saveMark")
        #expect(driver.step == "finale")
        #expect(driver.card?.progress == StepProgress(step: 4, total: 4, finale: true))
        // The status line counts the same way as the card.
        #expect(driver.engine.summaries(of: driver.state).first?.progress == driver.card?.progress)

        var counted = Driver(Fixtures.engine(Fixtures.tutorial))
        try counted.send(.replayRequested(nil))
        try counted.act("next")
        #expect(counted.card?.progress?.description == "Step 2 of 3")
    }

    @Test func hapticsFollowTheFlowsMap() throws {
        var driver = Driver(Fixtures.engine(Fixtures.walk), context: ["weeks": 5, "filledCount": 5])
        try driver.send(.signal("revealed"))
        try driver.wait(1.5)
        #expect(driver.haptics == [.impactLight])
        try driver.act("next")
        #expect(driver.haptics == [.impactLight])
        try driver.act("tapTarget")
        #expect(driver.haptics == [.notificationSuccess, .impactLight])
        #expect(driver.effects.contains(.celebration(flow: "walk", step: "tapTarget")))
        try driver.act("save", ["name": "Career"])
        #expect(driver.haptics == [.impactMedium, .notificationSuccess, .impactLight])
    }

    @Test func analyticsEventsCarryTheStep() throws {
        var driver = Driver(Fixtures.engine(Fixtures.tutorial))
        try driver.send(.appLaunched(version: nil))
        try driver.wait(0.5)
        try driver.act("next")
        let event = driver.effects.compactMap { if case .analytics(let a) = $0 { a } else { nil } }.first
        #expect(
            event
                == AnalyticsEvent(
                    name: "tutorial_step_completed",
                    properties: ["flow": "tutorial", "step": "swipe", "stepIndex": 1, "stepCount": 3]))
        try driver.act("next")
        try driver.act("next")
        #expect(driver.analytics == ["tutorial_step_completed", "tutorial_completed"])
    }

    @Test func freeActionsWorkWithNoCardAndWhereAStepLetsThemThrough() throws {
        let swipe = StepAction(
            "swipeLeft", outcome: .stay, effects: [.product("mood", payload: ["mood": .literal("bad")])])
        var driver = Driver(Fixtures.engine(Fixtures.tutorial, free: [swipe]))
        try driver.act("swipeLeft")
        #expect(driver.products == [ProductEffect(name: "mood", payload: ["mood": "bad"])])
        try driver.send(.appLaunched(version: nil))
        try driver.wait(0.5)
        #expect(driver.card?.actions.map(\.name) == ["next", "swipeLeft", "skip"])
        try driver.act("swipeLeft")
        #expect(driver.step == "swipe")
        #expect(driver.products.count == 1)
        try driver.act("next")
        #expect(
            driver.refuses(.actionPerformed("swipeLeft", parameters: [:]))?.reason
                == "this step does not accept 'swipeLeft'")
    }

    @Test func aRefusalNamesFlowStepAndAllowedActions() throws {
        var driver = Driver(Fixtures.engine(Fixtures.form))
        try driver.send(.appLaunched(version: nil))
        try driver.act("next")
        let refusal = try #require(driver.refuses(.actionPerformed("next", parameters: [:])))
        #expect(
            refusal
                == TourRefusal(
                    flow: "form", step: "pick", attempted: "next", reason: "Select at least one app.",
                    allowed: ["choose", "back"]))
        #expect(
            refusal.description
                == "refused 'next' (form step pick): Select at least one app. Allowed now: choose, back.")
    }

    /// (The driver's state is a value a refusal never reaches; that nothing is written is proved on
    /// real files by the product journeys and the CLI's bad-input corpus.) A timer that fell due
    /// before a refused action still fires, once, with the next accepted event.
    @Test func aRefusedActionLeavesADueTimerToTheNextEvent() throws {
        var driver = Driver(Fixtures.engine(Fixtures.tutorial))
        try driver.send(.appLaunched(version: nil))
        driver.now = driver.now.addingTimeInterval(1)
        #expect(driver.refuses(.actionPerformed("fly", parameters: [:]))?.code == .unknownAction)
        #expect(driver.card == nil)
        try driver.send(.clockAdvanced)
        #expect(driver.effects.first == .presented("tutorial"))
        try driver.send(.clockAdvanced)
        #expect(driver.effects.isEmpty)
    }

    @Test func secretsAreRedactedInTheJournalRecordAndInEncodedEffects() throws {
        var driver = Driver(Fixtures.engine(Fixtures.intro))
        try driver.send(.appLaunched(version: "2.5"))
        try driver.act("next")
        let effects = try driver.act("connect", ["username": "W1AW", "password": "hunter2"])
        let record = try #require(driver.records.last)
        #expect(
            record.event
                == .actionPerformed(
                    "connect",
                    parameters: [
                        "username": "W1AW",
                        "password": "‹redacted›",
                    ]))
        let encoded = String(decoding: try JSONEncoder().encode(effects), as: UTF8.self)
        #expect(encoded.contains("W1AW"))
        #expect(!encoded.contains("hunter2"))
        let state = String(decoding: try JSONEncoder().encode(driver.state), as: UTF8.self)
        #expect(!state.contains("hunter2"))
        #expect("\(effects)".contains("hunter2") == false)
    }

    @Test func aDefinitionIsEquatableDataNotCode() {
        #expect(Fixtures.walk == Fixtures.walk)
        var changed = Fixtures.walk
        changed.steps[0].actions.removeAll { $0.name == "skip" }
        #expect(changed != Fixtures.walk)
        #expect(!changed.steps[0].canSkip)
    }
}

@Suite("Journal JSON forms")
struct JournalFormTests {
    @Test func everyEventRoundTripsThroughItsTaggedJSON() throws {
        let events: [TourEvent] = [
            .appLaunched(version: "2.5"), .appLaunched(version: nil), .signal("revealCompleted"),
            .featureVisited("dashboard"),
            .actionPerformed("savePhase", parameters: ["name": "School"]), .gateAnswered("health", .denied),
            .clockAdvanced,
            .domainEvent("profileSynced", payload: ["status": "completed"]), .replayRequested("tutorial"),
            .resetRequested(nil),
        ]
        for event in events {
            let data = try JSONEncoder().encode(event)
            #expect(try JSONDecoder().decode(TourEvent.self, from: data) == event)
        }
        let text = String(
            decoding: try JSONEncoder().encode(TourEvent.actionPerformed("next", parameters: [:])),
            as: UTF8.self)
        #expect(text.contains(#""type":"actionPerformed""#))
    }

    @Test func everyEffectRoundTripsAndSecretsStayRedacted() throws {
        let effects: [TourEffect] = [
            .haptic(.impactLight), .celebration(flow: "walk", step: "s"),
            .analytics(AnalyticsEvent(name: "tutorial_started", properties: ["flow": "tutorial"])),
            .checkPermission(gate: "g", .health), .requestPermission(gate: "g", .screenTime),
            .product(ProductEffect(name: "activate", payload: ["bank": 60])), .presented("walk"),
            .dismissed("walk"),
        ]
        for effect in effects {
            #expect(try JSONDecoder().decode(TourEffect.self, from: JSONEncoder().encode(effect)) == effect)
        }
        let request = TourEffect.request(
            gate: "c", name: "connect", payload: ["username": "W1AW"], secrets: ["password": Secret("pw")])
        let text = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        #expect(!text.contains("\"pw\""))
        #expect(text.contains("‹redacted›"))
    }
}
