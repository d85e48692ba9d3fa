import Foundation
import Testing
import TourCodec
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

/// The per-flow policies, exhaustively: each test states every change of state and every effect of
/// every event (``TourStore`` fails on anything unasserted).
@Suite("Per-flow policies")
struct FlowPolicyTests {
    static let t0 = Fixtures.t0
    static let walkPlan: [StepID] = ["intro", "tapTarget", "modal", "staged", "finale"]

    @Test func skipRecordedAsSkippedNeverShowsAgain() throws {
        var store = TourStore(Fixtures.engine(Fixtures.walk))
        try store.send(.signal("revealed")) { $0[flow: "walk"] = .notStarted(pendingStart: Self.t0 + 1.5) }
        try store.advance(by: 1.5, effects: [.presented("walk"), .haptic(.impactLight)]) {
            $0[flow: "walk"] = .active(FlowRun(plan: Self.walkPlan, activation: 1, catalogVersion: 1))
        }
        try store.act(
            "skip", effects: [.haptic(.impactMedium), .dismissed("walk")],
            facts: [.flowEnded(flow: "walk", ending: .skipped, recorded: .skipped, version: nil)]
        ) { $0[flow: "walk"] = .record(status: .skipped, version: nil) }
        try store.send(.appLaunched(version: nil))
        try store.send(.signal("revealed"))
        try store.advance(by: 10)
        #expect(store.card == nil)
    }

    @Test func skipThatCountsAsCompleteRecordsCompleted() throws {
        var store = TourStore(Fixtures.engine(Fixtures.intro))
        try store.send(.appLaunched(version: "2.5"), effects: [.presented("intro")]) {
            $0.appVersion = "2.5"
            $0[flow: "intro"] = .active(
                FlowRun(plan: ["hello", "connect", "bye"], activation: 1, catalogVersion: 1))
        }
        try store.act(
            "skip", effects: [.dismissed("intro")],
            facts: [.flowEnded(flow: "intro", ending: .skipped, recorded: .completed, version: "2.5")]
        ) { $0[flow: "intro"] = .record(status: .completed, version: "2.5") }
        try store.send(.appLaunched(version: "2.5"))
        #expect(store.card == nil)
    }

    @Test func skipThatRecordsNothingShowsAgainNextLaunch() throws {
        var store = TourStore(Fixtures.engine(Fixtures.tutorial))
        let plan = Self.tutorialPlan
        try Self.launchTutorial(&store)
        try store.act(
            "skip",
            effects: [
                .analytics(Self.event("tutorial_skipped", step: "swipe", index: 1)), .dismissed("tutorial"),
            ]
        ) {
            $0[flow: "tutorial"] = FlowState()
        }
        try store.send(.appLaunched(version: nil)) {
            $0[flow: "tutorial"] = .notStarted(pendingStart: Self.t0 + 1)
        }
        try store.advance(
            by: 0.5,
            effects: [
                .presented("tutorial"), .analytics(Self.event("tutorial_started", step: "swipe", index: 1)),
            ]
        ) {
            $0[flow: "tutorial"] = .active(FlowRun(plan: plan, activation: 1, catalogVersion: 1))
        }
        #expect(store.card?.step == "swipe")
    }

    @Test func onlyCompletionRecordsSeen() throws {
        var store = TourStore(Fixtures.engine(Fixtures.tutorial))
        try Self.launchTutorial(&store)
        try Self.next(&store, past: "swipe")
        try Self.next(&store, past: "history")
        try store.act(
            "backdrop",
            effects: [
                .analytics(Self.event("tutorial_step_completed", step: "set", index: 3)),
                .analytics(Self.event("tutorial_completed", step: "set", index: 3)),
                .dismissed("tutorial"),
            ],
            facts: [
                .stepCompleted(flow: "tutorial", step: "set"),
                .flowEnded(flow: "tutorial", ending: .completed, recorded: .completed, version: nil),
            ]
        ) { $0[flow: "tutorial"] = .record(status: .completed, version: nil) }
        try store.send(.appLaunched(version: nil))
        try store.advance(by: 5)
        #expect(store.card == nil)
    }

    @Test func resumePolicyKeepsTheStepAcrossALaunch() throws {
        var store = TourStore(Fixtures.engine(Fixtures.walk))
        try store.send(.signal("revealed")) { $0[flow: "walk"] = .notStarted(pendingStart: Self.t0 + 1.5) }
        try store.advance(by: 1.5, effects: [.presented("walk"), .haptic(.impactLight)]) {
            $0[flow: "walk"] = .active(FlowRun(plan: Self.walkPlan, activation: 1, catalogVersion: 1))
        }
        try store.act("next", effects: [.haptic(.impactLight)]) { $0[run: "walk"]?.position = 1 }
        try store.send(.appLaunched(version: nil), effects: [.presented("walk")], facts: [])
        #expect(store.card?.step == "tapTarget")
    }

    @Test func replayThatResetsPresentsTheFlowFromTheStart() throws {
        var store = TourStore(Fixtures.engine(Fixtures.intro))
        let plan: [StepID] = ["hello", "connect", "bye"]
        try store.send(.appLaunched(version: "2.5"), effects: [.presented("intro")]) {
            $0.appVersion = "2.5"
            $0[flow: "intro"] = .active(FlowRun(plan: plan, activation: 1, catalogVersion: 1))
        }
        try store.act("skip", effects: [.dismissed("intro")]) {
            $0[flow: "intro"] = .record(status: .completed, version: "2.5")
        }
        try store.send(.replayRequested(nil), effects: [.presented("intro")]) {
            $0[flow: "intro"] = .active(FlowRun(plan: plan, activation: 1, catalogVersion: 1))
        }
        #expect(store.card?.isReplay == false)
    }

    @Test func restartPolicyStartsOverWithNothingPartialKept() throws {
        var store = TourStore(Fixtures.engine(Fixtures.form))
        let plan: [StepID] = ["welcome", "pick", "level", "perms", "done"]
        let fresh = FlowRun(plan: plan, fields: ["level": "medium"], activation: 1, catalogVersion: 1)
        try store.send(.appLaunched(version: nil), effects: [.presented("form")]) {
            $0[flow: "form"] = .active(fresh)
        }
        try store.act("next") { $0[run: "form"]?.position = 1 }
        try store.act("choose", ["apps": "A"]) {
            $0[run: "form"]?.fields["apps"] = ["A"]
            $0[run: "form"]?.performed = ["choose"]
        }
        try store.act("next") {
            $0[run: "form"]?.position = 2
            $0[run: "form"]?.performed = []
        }
        try store.act("select", ["level": "hard"]) {
            $0[run: "form"]?.fields["level"] = "hard"
            $0[run: "form"]?.performed = ["select"]
        }
        try store.send(
            .appLaunched(version: nil), effects: [.presented("form")],
            facts: [
                .flowEnded(flow: "form", ending: .dropped, recorded: .notStarted, version: nil),
                .flowStarted(flow: "form", plan: plan, catalogVersion: 1, replay: false),
                .stepEntered(flow: "form", step: "welcome", index: 1),
            ]
        ) {
            var restarted = fresh
            restarted.activation = 2
            $0[flow: "form"] = .active(restarted)
        }
        #expect(store.card?.step == "welcome")
    }

    @Test func discardPolicyDropsTheRunAndLetsTheTriggerDecide() throws {
        var store = TourStore(Fixtures.engine(Fixtures.tutorial))
        let plan = Self.tutorialPlan
        try Self.launchTutorial(&store)
        try Self.next(&store, past: "swipe")
        try store.send(.appLaunched(version: nil)) {
            $0[flow: "tutorial"] = .notStarted(pendingStart: Self.t0 + 1)
        }
        #expect(store.card == nil)
        try store.advance(
            by: 0.5,
            effects: [
                .presented("tutorial"), .analytics(Self.event("tutorial_started", step: "swipe", index: 1)),
            ]
        ) {
            $0[flow: "tutorial"] = .active(FlowRun(plan: plan, activation: 1, catalogVersion: 1))
        }
    }

    @Test func replayWithoutRecordingLeavesTheRecordAsItWas() throws {
        var store = TourStore(Fixtures.engine(Fixtures.tutorial))
        let plan = Self.tutorialPlan
        try Self.launchTutorial(&store)
        try Self.next(&store, past: "swipe")
        try Self.next(&store, past: "history")
        try store.act(
            "next",
            effects: [
                .analytics(Self.event("tutorial_step_completed", step: "set", index: 3)),
                .analytics(Self.event("tutorial_completed", step: "set", index: 3)),
                .dismissed("tutorial"),
            ]
        ) { $0[flow: "tutorial"] = .record(status: .completed, version: nil) }
        let seen = FlowRecord.Before.finished(FlowRecord(.completed, version: nil))
        try store.send(
            .replayRequested("tutorial"),
            effects: [
                .presented("tutorial"),
                .analytics(Self.event("tutorial_started", step: "swipe", index: 1, replay: true)),
                .analytics(Self.event("tutorial_replayed", step: "swipe", index: 1, replay: true)),
            ]
        ) {
            $0[flow: "tutorial"] = .active(
                FlowRun(plan: plan, activation: 1, catalogVersion: 1, replayOf: seen))
        }
        #expect(store.card?.isReplay == true)
        try store.act(
            "skip",
            effects: [
                .analytics(Self.event("tutorial_skipped", step: "swipe", index: 1, replay: true)),
                .dismissed("tutorial"),
            ]
        ) {
            $0[flow: "tutorial"] = .record(status: .completed, version: nil)
        }
    }

    @Test func aDismissalMidFlowCountsAsSeen() throws {
        var store = TourStore(Fixtures.engine(Fixtures.tip))
        try store.send(.featureVisited("feature"), effects: [.presented("tip")]) {
            $0[flow: "tip"] = .active(FlowRun(plan: ["a", "b"], activation: 1, catalogVersion: 1))
        }
        try store.act(
            "close", effects: [.dismissed("tip")],
            facts: [.flowEnded(flow: "tip", ending: .dismissed, recorded: .completed, version: nil)]
        ) { $0[flow: "tip"] = .record(status: .completed, version: nil) }
        try store.send(.featureVisited("feature"))
        #expect(store.card == nil)
    }

    @Test func resetReturnsEveryFlowToNotStarted() throws {
        var store = TourStore(Fixtures.engine(Fixtures.walk, Fixtures.tip))
        try store.send(.signal("revealed")) { $0[flow: "walk"] = .notStarted(pendingStart: Self.t0 + 1.5) }
        try store.advance(by: 1.5, effects: [.presented("walk"), .haptic(.impactLight)]) {
            $0[flow: "walk"] = .active(FlowRun(plan: Self.walkPlan, activation: 1, catalogVersion: 1))
        }
        try store.act("skip", effects: [.haptic(.impactMedium), .dismissed("walk")]) {
            $0[flow: "walk"] = .record(status: .skipped, version: nil)
        }
        try store.send(.featureVisited("feature"), effects: [.presented("tip")]) {
            // Activations count among flows showing: the walkthrough has finished, so this is 1.
            $0[flow: "tip"] = .active(FlowRun(plan: ["a", "b"], activation: 1, catalogVersion: 1))
        }
        try store.send(
            .resetRequested(nil), effects: [.dismissed("tip")],
            facts: [
                .flowReset(flow: "walk"),
                .flowEnded(flow: "tip", ending: .dropped, recorded: .notStarted, version: nil),
                .flowReset(flow: "tip"),
            ]
        ) { $0.flows = [:] }
        try store.send(.signal("revealed")) { $0[flow: "walk"] = .notStarted(pendingStart: Self.t0 + 3) }
        try store.advance(by: 1.5, effects: [.presented("walk"), .haptic(.impactLight)]) {
            $0[flow: "walk"] = .active(FlowRun(plan: Self.walkPlan, activation: 1, catalogVersion: 1))
        }
    }

    static let tutorialPlan: [StepID] = ["swipe", "history", "set"]

    /// A launch, and the tutorial presented half a second later on its first step.
    static func launchTutorial(_ store: inout TourStore, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let due = store.now + 0.5
        try store.send(.appLaunched(version: nil), sourceLocation: sourceLocation) {
            $0[flow: "tutorial"] = .notStarted(pendingStart: due)
        }
        try store.advance(
            by: 0.5,
            effects: [
                .presented("tutorial"), .analytics(event("tutorial_started", step: "swipe", index: 1)),
            ],
            sourceLocation: sourceLocation
        ) { $0[flow: "tutorial"] = .active(FlowRun(plan: tutorialPlan, activation: 1, catalogVersion: 1)) }
    }

    /// `next` on the tutorial's `step` (not its last): the step completes and the next one shows.
    static func next(
        _ store: inout TourStore, past step: StepID, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let index = try #require(tutorialPlan.firstIndex(of: step), sourceLocation: sourceLocation) + 1
        try store.act(
            "next", effects: [.analytics(event("tutorial_step_completed", step: step, index: index))],
            sourceLocation: sourceLocation
        ) { $0[run: "tutorial"]?.position = index }
    }

    /// The tutorial's analytics event as the engine sends it: the flow, the step and the one
    /// progress count, and `replay` during a replay.
    static func event(_ name: String, step: StepID, index: Int, replay: Bool = false) -> AnalyticsEvent {
        var properties: [String: TourValue] = [
            "flow": "tutorial", "step": .string(step.rawValue), "stepIndex": .int(index), "stepCount": 3,
        ]
        if replay { properties["replay"] = true }
        return AnalyticsEvent(name: name, properties: properties)
    }
}

/// What the exhaustive driver itself catches: a test that leaves out a change or an effect fails.
@Suite("The exhaustive driver")
struct TourStoreTests {
    final class Failures: @unchecked Sendable { var messages: [String] = [] }

    @Test func anUnassertedChangeOrEffectFails() throws {
        let failures = Failures()
        var store = TourStore(Fixtures.engine(Fixtures.tip))
        store.fail = { message, _ in failures.messages.append(message) }
        // Nothing asserted: the new run and the presented effect are both reported.
        try store.send(.featureVisited("feature"))
        #expect(failures.messages.count == 2)
        #expect(failures.messages.contains { $0.contains("tip is active(") })
        #expect(failures.messages.contains { $0.contains("not asserted: [TourCore.TourEffect.presented(") })
        // The state moves on regardless, so the next assertion starts from what happened.
        #expect(store.state[flow: "tip"].status == .active)
        // An effect expected but not produced, and wrong facts.
        failures.messages = []
        try store.act("next", effects: [.haptic(.impactLight)], facts: []) { $0[run: "tip"]?.position = 1 }
        #expect(failures.messages.count == 2)
        #expect(
            failures.messages.contains {
                $0.contains("expected but not produced: [TourCore.TourEffect.haptic(")
            })
        #expect(failures.messages.contains { $0.contains("facts [") })
        // An unexpected refusal, and an expected one that does not come.
        failures.messages = []
        #expect(throws: TourRefusal.self) { try store.act("fly") }
        store.refuses(.actionPerformed("next", parameters: [:]), reason: "anything")
        #expect(failures.messages.count == 2)
        #expect(failures.messages[0].contains("was refused"))
        #expect(failures.messages[1].contains("was accepted"))
    }

    @Test func differencesNameTheFlowThatDiffers() {
        let expected = TourState(flows: ["a": .record(status: .completed, version: nil)])
        let actual = TourState(flows: ["a": .record(status: .skipped, version: nil)], appVersion: "2.0")
        let problems = TourStore.differences(expected: expected, actual: actual)
        #expect(problems.count == 2)
        #expect(problems.contains { $0.hasPrefix("appVersion is 2.0") })
        #expect(problems.contains { $0.hasPrefix("a is ") })
    }
}
