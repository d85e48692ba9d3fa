import CatalogDocuments
import Foundation
import Testing
import TourFixtures

@testable import TourCore

/// The engine adapts to the person holding the phone (Docs/Accessibility.md): VoiceOver, haptics
/// off, reduced motion, each as a device fact in the context.
@Suite("Accessibility as an input")
struct AccessibilityTests {
    /// A flow with a timed step that has an action (a tip that closes by itself) and a timed
    /// closing step without one.
    static func timed(_ rules: AccessibilityRules = .standard) -> FlowDefinition {
        FlowDefinition(
            "tips", name: "Tips",
            steps: [
                StepDefinition(
                    "tip", StepContent(title: "Tip", body: "Swipe to go back"), actions: [.next()],
                    autoAdvanceAfter: 4),
                StepDefinition("done", StepContent(title: "Done", body: "That's all"), autoAdvanceAfter: 2),
            ],
            triggers: [Trigger(.signal("go"))],
            haptics: HapticMap(stepEntered: .selection, completed: .notificationSuccess),
            accessibility: rules)
    }

    static let voiceOver: TourContext = [AccessibilitySettings.voiceOverKey: true]

    @Test func withVoiceOverATimedStepWithAnActionWaitsForItAndOneWithoutTakesTenTimesLonger() throws {
        var sighted = Driver(Fixtures.engine(Self.timed()))
        try sighted.send(.signal("go"))
        #expect(sighted.card?.autoAdvanceAt == Fixtures.t0.addingTimeInterval(4).timeIntervalSince1970)
        try sighted.wait(4)
        #expect(sighted.step == "done")

        var listener = Driver(Fixtures.engine(Self.timed()), context: Self.voiceOver)
        try listener.send(.signal("go"))
        #expect(listener.card?.autoAdvanceAt == nil)
        try listener.wait(3600)
        #expect(listener.step == "tip", "a VoiceOver user's tip waits for their action")
        try listener.act("next")
        #expect(listener.step == "done")
        try listener.wait(19)
        #expect(listener.step == "done", "the closing card lasts 2 s × 10 for a VoiceOver user")
        try listener.wait(1)
        #expect(listener.status("tips") == .completed)
    }

    @Test func aFlowOverridesTheVoiceOverRule() throws {
        var scaled = Driver(
            Fixtures.engine(
                Self.timed(AccessibilityRules(voiceOverTimedSteps: .scaleDuration, voiceOverTimeScale: 3))),
            context: Self.voiceOver)
        try scaled.send(.signal("go"))
        try scaled.wait(11)
        #expect(scaled.step == "tip")
        try scaled.wait(1)
        #expect(scaled.step == "done")

        var unchanged = Driver(
            Fixtures.engine(Self.timed(AccessibilityRules(voiceOverTimedSteps: .unchanged))),
            context: Self.voiceOver)
        try unchanged.send(.signal("go"))
        try unchanged.wait(4)
        #expect(unchanged.step == "done")
    }

    @Test func voiceOverTurnedOnMidStepStopsItsTimer() throws {
        var driver = Driver(Fixtures.engine(Self.timed()))
        try driver.send(.signal("go"))
        driver.context = Self.voiceOver
        try driver.wait(5)
        #expect(driver.step == "tip")
        #expect(driver.records.last?.outcome.contains("waits for an action (VoiceOver)") == true)
    }

    @Test func withHapticsOffNoHapticIsEmittedAndTheJournalSaysSo() throws {
        var driver = Driver(
            Fixtures.engine(Fixtures.walk),
            context: ["weeks": 5, "filledCount": 5, AccessibilitySettings.hapticsEnabledKey: false])
        try driver.send(.signal("revealed"))
        try driver.wait(1.5)
        #expect(driver.haptics.isEmpty)
        try driver.act("next")
        try driver.act("tapTarget")
        #expect(driver.haptics.isEmpty)
        #expect(
            driver.effects.contains(.celebration(flow: "walk", step: "tapTarget")), "the celebration stays")
        #expect(driver.records.last?.outcome.contains("haptics off: 2 not played") == true)
    }

    @Test func withReducedMotionCelebrationsAreMarkedAndReadBackAsWritten() throws {
        var driver = Driver(
            Fixtures.engine(Fixtures.walk),
            context: ["weeks": 5, "filledCount": 5, AccessibilitySettings.reducedMotionKey: true])
        try driver.send(.signal("revealed"))
        try driver.wait(1.5)
        try driver.act("next")
        try driver.act("tapTarget")
        let celebration = TourEffect.celebration(flow: "walk", step: "tapTarget", reducedMotion: true)
        #expect(driver.effects.contains(celebration))
        #expect(!driver.haptics.isEmpty, "haptics are another setting")
        #expect(try TourEffect(tourValue: celebration.tourValue) == celebration)
        // The form a celebration always had is unchanged when motion is not reduced.
        #expect(
            TourEffect.celebration(flow: "walk", step: "s").tourValue.objectValue?["reducedMotion"] == nil)
    }

    @Test func everySettingAtOnce() throws {
        var driver = Driver(
            Fixtures.engine(Self.timed()),
            context: AccessibilitySettings(
                voiceOver: true, reducedMotion: true, hapticsEnabled: false,
                textSize: "accessibilityExtraExtraExtraLarge"
            ).context)
        try driver.send(.signal("go"))
        #expect(driver.haptics.isEmpty)
        try driver.wait(60)
        #expect(driver.step == "tip")
        try driver.act("next")
        try driver.wait(20)
        #expect(driver.status("tips") == .completed)
        #expect(driver.haptics.isEmpty)
    }

    @Test func theRulesRoundTripThroughTheDocumentAndTheStandardOnesLeaveItAsItWas() throws {
        let declarations = CatalogDeclarations()
        let plain = CatalogDocument(
            TourCatalog(app: "tips", flows: [Self.timed()]), declarations: declarations)
        #expect(try !plain.text().contains("accessibility"))
        let rules = AccessibilityRules(voiceOverTimedSteps: .scaleDuration, voiceOverTimeScale: 2.5)
        let catalog = TourCatalog(app: "tips", flows: [Self.timed(rules)])
        let document = CatalogDocument(catalog, declarations: declarations)
        let read = try CatalogDocument(text: try document.text())
        #expect(read.catalog.flows.first?.accessibility == rules)
        #expect(try read.fingerprint() == (try document.fingerprint()))
        #expect(try plain.fingerprint() != (try document.fingerprint()))

        for (bad, message) in [
            (#""voiceOverTimedSteps":"never""#, "voiceOverTimedSteps"),
            (#""voiceOverTimeScale":0"#, "from 1 to 100"),
            (#""voiceOverTimeScale":2,"colour":"red""#, "colour"),
        ] {
            let text = try document.text().replacingOccurrences(
                of: #""voiceOverTimeScale":2.5,"voiceOverTimedSteps":"scaleDuration""#, with: bad)
            #expect(text != (try document.text()))
            #expect {
                _ = try CatalogDocument(text: text)
            } throws: { error in
                "\(error)".contains(message) && "\(error)".contains("accessibility")
            }
        }
    }

    @Test func theCheckRefusesATimeScaleOutsideOneToAHundred() {
        for scale in [0.5, 0, -1, 101] {
            let catalog = TourCatalog(
                app: "tips", flows: [Self.timed(AccessibilityRules(voiceOverTimeScale: scale))])
            let problems = catalog.problems(declaring: CatalogDeclarations())
            #expect(problems.map(\.path) == ["flows[tips].accessibility.voiceOverTimeScale"], "\(scale)")
        }
        #expect(
            TourCatalog(app: "tips", flows: [Self.timed()]).problems(declaring: CatalogDeclarations()).isEmpty
        )
    }

    @Test func everyProductDeclaresTheSettingsAsDeviceFacts() throws {
        let names = ContextKey.accessibility.map(\.name)
        #expect(names == ["voiceOver", "reducedMotion", "hapticsEnabled", "textSize"])
        #expect(ContextKey.accessibility.allSatisfy { $0.source == .device })
        let facts = try CatalogDeclarations(context: ContextKey.accessibility).deviceFacts([
            (key: "voiceOver", value: "on"), (key: "textSize", value: "accessibilityLarge"),
        ])
        #expect(
            AccessibilitySettings(facts)
                == AccessibilitySettings(voiceOver: true, textSize: "accessibilityLarge"))
    }
}
