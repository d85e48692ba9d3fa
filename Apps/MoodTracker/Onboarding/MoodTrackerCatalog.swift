import CatalogDocuments
import TourCore

/// Mood Tracker's 3-step tutorial, from its spec (seed 004). The seed gives titles, hints and button
/// labels but describes two bodies instead of quoting them; those two sentences are ours.
public enum MoodTrackerCatalog {
    public static let app = "moodtracker"
    public static let tutorial: FlowID = "tutorial"

    static let swipes: [(action: String, mood: String)] = [
        ("swipeLeft", "bad"), ("swipeUp", "mid"), ("swipeRight", "good"),
    ]

    /// Version 2 (app 1.1) adds Brazilian Portuguese (`strings/pt-BR.json`); the flow is version 1's.
    public static let catalog: TourCatalog = {
        var catalog = flows
        catalog.strings = CatalogStrings(files: CatalogReleases.stringTables)
        return catalog
    }()

    static let flows = TourCatalog(
        app: app, name: "Mood Tracker", flowNoun: "tutorial", version: 2, flows: [tutorialFlow],
        freeActions: swipes.map { swipe in
            StepAction(
                swipe.action, outcome: .stay,
                effects: [.product("recordMood", payload: ["mood": .literal(.string(swipe.mood))])],
                haptic: .selection)
        },
        // Mood entries are the account's; the tutorial flag is the install's, as its record is.
        stateScopes: StateScopes(.user, except: ["hasSeenTutorial": .install]))

    static let tutorialFlow = FlowDefinition(
        tutorial, name: "Tutorial",
        steps: [
            StepDefinition(
                "swipeToSelect",
                StepContent(
                    title: "Swipe to Select", body: "Swipe in different directions to record how you feel.",
                    details: ["← Left = Bad", "↑ Up = Mid", "→ Right = Good"]),
                actions: [.next(label: "Next")], canSkip: true, passThrough: swipes.map(\.action),
                skipLabel: "Skip Tutorial"),
            StepDefinition(
                "viewHistory",
                StepContent(
                    title: "View Your History",
                    body: "The History tab shows every day you've recorded. Tap any day to jump back and edit"
                ),
                actions: [.next(label: "Next")], canSkip: true, skipLabel: "Skip Tutorial"),
            StepDefinition(
                "allSet",
                StepContent(
                    title: "You're All Set!",
                    body: "Record your mood each day and patterns will start to appear."),
                actions: [.next(label: "Get Started"), StepAction("tapBackdrop", outcome: .advance)]),
        ],
        triggers: [Trigger(.launch, delay: 0.5)],
        skip: .recordsNothing, interruption: .discard, replay: .presentWithoutRecording, scope: .install,
        haptics: HapticMap(stepEntered: .impactLight, skipped: .impactLight, completed: .notificationSuccess),
        analytics: AnalyticsNames(
            started: "tutorial_started", stepCompleted: "tutorial_step_completed",
            skipped: "tutorial_skipped",
            completed: "tutorial_completed", replayed: "tutorial_replayed"),
        onComplete: [.product("markTutorialSeen", payload: [:])],
        onReset: [.product("clearTutorialSeen", payload: [:])])
}
