import TourCore

/// Growth's app tour (seed 003, story 20.1). Stories 20.2 to 20.6, which would define the steps, are
/// not in the seed: the five steps here are our decision, documented in Docs/Growth.md.
public enum GrowthCatalog {
    public static let app = "growth"
    public static let appTour: FlowID = "app_tour"

    /// One tour step as the seed's `AppTourStep` configures it.
    public struct TourStep: Sendable {
        public var id: StepID
        public var targetViewId: String
        public var title: String
        public var description: String
        public var highlightPadding: Double
        public var position: PopoverPosition
    }

    public static let steps = [
        TourStep(
            id: "dashboard", targetViewId: "dashboardSummary", title: "Your Dashboard",
            description: "Your progress at a glance: today's sessions, your streak and your next goal.",
            highlightPadding: 8, position: .below),
        TourStep(
            id: "logSession", targetViewId: "quickLogButton", title: "Log a Session",
            description: "Tap + to record a session in seconds. Every entry keeps your streak alive.",
            highlightPadding: 12, position: .above),
        TourStep(
            id: "progress", targetViewId: "progressTab", title: "Track Your Progress",
            description: "Charts show how your sessions add up, week over week.",
            highlightPadding: 6, position: .above),
        TourStep(
            id: "routines", targetViewId: "routinesTab", title: "Follow a Routine",
            description: "Pick a guided routine and get a reminder when it's time.",
            highlightPadding: 6, position: .above),
        TourStep(
            id: "profile", targetViewId: "profileButton", title: "Your Profile",
            description: "Set goals, reminders and privacy options here.",
            highlightPadding: 8, position: .below),
    ]

    public static let catalog = TourCatalog(
        app: app, name: "Growth", flowNoun: "tour", flows: [tourFlow],
        freeActions: [
            StepAction(
                "completeOnboarding", outcome: .stay, effects: [.product("onboardingCompleted", payload: [:])]
            )
        ])

    static let tourFlow = FlowDefinition(
        appTour, name: "App Tour",
        steps: steps.enumerated().map { index, step in
            StepDefinition(
                step.id,
                StepContent(
                    title: step.title, body: step.description,
                    anchor: Anchor(
                        step.targetViewId, highlightPadding: step.highlightPadding, popover: step.position)),
                actions: [.next(label: index == steps.count - 1 ? "Done" : "Next")],
                canSkip: true, canGoBack: true, backLabel: "Previous", backAliases: ["previous"],
                skipLabel: "Skip Tour")
        },
        triggers: [
            // "Once per user account": the flow is user-scoped, so a tour finished on any device of
            // the account is finished here once the account server's record is pulled.
            Trigger(.visit("dashboard"), when: .flag("onboardingComplete"))
        ],
        skip: .recordSkipped, interruption: .resume, scope: .user,
        onComplete: [.product("recordTour", payload: ["status": "completed"])],
        onSkip: [.product("recordTour", payload: ["status": "skipped"])],
        onReset: [.product("recordTour", payload: ["status": "notStarted"])])
}
