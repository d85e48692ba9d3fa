import TourCore

/// Finite's interactive walkthrough, word for word from its spec (seed 000).
public enum FiniteCatalog {
    public static let app = "finite"
    public static let walkthrough: FlowID = "walkthrough"

    public static let catalog = TourCatalog(
        app: app, name: "Finite", flowNoun: "walkthrough", flows: [walkthroughFlow],
        freeActions: [
            StepAction(
                "setBirthDate", fills: ["date"], requiredParameters: ["date"], outcome: .stay,
                effects: [.product("setBirthDate", payload: ["date": .parameter("date")])]),
            StepAction(
                "addPhase", fills: ["name", "startYear"], requiredParameters: ["name"], outcome: .stay,
                effects: [
                    .product(
                        "storePhase",
                        payload: ["name": .parameter("name"), "startYear": .parameter("startYear")])
                ]),
        ],
        freeFields: [FieldSpec("date", .date(latestKey: "today")), phaseName, startYear])

    static let phaseName = FieldSpec("name", .text, rule: .required, ruleMessage: "A chapter needs a name.")
    static let startYear = FieldSpec("startYear", .integer(minimum: 1900, maximumKey: "currentYear"))

    static let walkthroughFlow = FlowDefinition(
        walkthrough, name: "Walkthrough",
        steps: [
            StepDefinition(
                "gridIntro",
                StepContent(
                    title: "Your Life in Weeks",
                    body: "Each dot is one week of your life.\nThe filled ones are behind you.",
                    hint: "Tap anywhere to continue", anchor: Anchor("grid", popover: .center)),
                actions: [.next()], canSkip: true, skipLabel: "Skip"),
            StepDefinition(
                "currentWeek",
                StepContent(
                    title: "You Are Here", body: "This glowing dot is today.\nTap it.",
                    hint: "Tap the glowing week",
                    anchor: Anchor("currentWeek")),
                actions: [StepAction("tapCurrentWeek", outcome: .advance, celebrates: true)],
                canSkip: true, skipLabel: "Skip"),
            StepDefinition(
                "viewModesIntro",
                StepContent(
                    title: "Three Perspectives",
                    body: "See your life through different lenses.\nSwipe left to try.",
                    hint: "Swipe left on the grid", anchor: Anchor("dotIndicator", popover: .above)),
                actions: [StepAction("swipeToChapters", outcome: .advance, celebrates: true)],
                canSkip: true, skipLabel: "Skip"),
            StepDefinition(
                "chaptersExplanation",
                StepContent(
                    title: "Life Chapters",
                    body: "Color your past by adding life chapters—school, career, adventures.",
                    hint: "Tap to continue", anchor: Anchor("grid", popover: .center)),
                actions: [.next()], canSkip: true, skipLabel: "Skip"),
            StepDefinition(
                "addPhase",
                StepContent(title: "Add Your First Chapter", body: "Let's add your first chapter."),
                actions: [
                    StepAction(
                        "savePhase", label: "Save", fills: ["name", "startYear"],
                        requiredParameters: ["name"],
                        outcome: .advance,
                        effects: [
                            .product(
                                "storePhase",
                                payload: ["name": .parameter("name"), "startYear": .parameter("startYear")])
                        ],
                        celebrates: true, haptic: .impactMedium),
                    StepAction("dismissPhase", label: "Skip for now", outcome: .advance, celebrates: true),
                ],
                canSkip: true, includedWhen: .not(.flag("hasPhases")), skipLabel: "Skip"),
            StepDefinition(
                "markWeek",
                StepContent(
                    title: "Reflect on a Week", body: "Long-press any past week to record how it felt.",
                    hint: "Long-press any filled week",
                    anchor: Anchor(
                        "filledWeeks", fallback: "firstWeeks", availableWhen: .atLeast("weeksLived", 1))),
                actions: [
                    StepAction(
                        "longPressWeek", fills: ["week"], requiredParameters: ["week"], outcome: .stage,
                        haptic: .impactMedium),
                    StepAction(
                        "saveMark", label: "Save", fills: ["note"], outcome: .advance,
                        preconditions: [
                            .performed(
                                "longPressWeek",
                                message: "long-press a filled week first (longPressWeek week=N)")
                        ],
                        effects: [
                            .product(
                                "markWeek", payload: ["week": .field("week"), "note": .parameter("note")])
                        ],
                        celebrates: true),
                ],
                canSkip: true, skipLabel: "Skip"),
            StepDefinition(
                "complete",
                StepContent(
                    title: "You're Ready",
                    body: "Take your time. Reflect weekly.\nYour life is finite—make it count."),
                autoAdvanceAfter: 2.5),
        ],
        fields: [
            phaseName, startYear,
            FieldSpec("week", .integer(minimum: 1, maximumKey: "markableWeeks")),
            FieldSpec("note", .text),
        ],
        triggers: [Trigger(.signal("revealCompleted"), delay: 1.5)],
        skip: .recordSkipped, interruption: .resume, replay: .notReplayable, scope: .install,
        countsTerminalStep: false,
        haptics: HapticMap(
            stepEntered: .impactLight, actionCompleted: .notificationSuccess, skipped: .impactMedium,
            completed: .notificationSuccess))
}
