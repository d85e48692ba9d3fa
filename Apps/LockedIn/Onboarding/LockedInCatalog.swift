import TourCore

/// LockedIn's 5-screen onboarding, word for word from its spec (seed 001).
public enum LockedInCatalog {
    public static let app = "lockedin"
    public static let onboarding: FlowID = "onboarding"
    public static let startingBankMinutes = 60

    /// The denied-alert text: the seed says "show alert, cannot proceed" without wording; ours.
    public static let screenTimeDeniedMessage =
        "Screen Time access is required to block apps. Allow it in Settings > Screen Time to continue."
    public static let healthDeniedMessage =
        """
        Without Apple Health access, workouts won't be tracked. You can continue and allow it later in \
        Settings.
        """

    public static let catalog = TourCatalog(
        app: app, name: "LockedIn", flowNoun: "onboarding", flows: [onboardingFlow])

    static let onboardingFlow = FlowDefinition(
        onboarding, name: "Onboarding",
        steps: [
            StepDefinition(
                "welcome",
                StepContent(title: "LOCKEDIN", body: "Earn your screen time.\nOne workout at a time."),
                actions: [.next(label: "GET STARTED")]),
            StepDefinition(
                "appSelection",
                StepContent(
                    title: "SELECT YOUR POISON", body: "These apps get blocked when your bank hits zero.",
                    details: ["{#apps|app|apps} selected"]),
                actions: [
                    StepAction(
                        "chooseApps", label: "CHOOSE APPS", fills: ["apps"], requiredParameters: ["apps"],
                        outcome: .stay),
                    .next(label: "CONTINUE", preconditions: [.fieldsValid]),
                ],
                validates: ["apps"], canGoBack: true),
            StepDefinition(
                "difficulty",
                StepContent(
                    title: "HOW LOCKED IN ARE YOU?", body: "Selected: {difficulty}",
                    details: Difficulty.all.map(\.cardLine)),
                actions: [
                    StepAction(
                        "selectDifficulty", fills: ["difficulty"], requiredParameters: ["difficulty"],
                        outcome: .stay, haptic: .selection),
                    .next(label: "CONTINUE"),
                ],
                canGoBack: true),
            StepDefinition(
                "permissions",
                StepContent(
                    title: "SCREEN TIME ACCESS", body: "Required to block apps.",
                    details: ["APPLE HEALTH ACCESS", "Required to track workouts."]),
                actions: [
                    StepAction(
                        "grantScreenTime", label: "GRANT ACCESS", outcome: .request(gate: "screenTime")),
                    StepAction("grantHealth", label: "GRANT ACCESS", outcome: .request(gate: "health")),
                    .next(label: "CONTINUE", preconditions: [.requiredGatesGranted]),
                ],
                gates: [
                    .permission(
                        "screenTime", .screenTime, required: true, deniedMessage: screenTimeDeniedMessage,
                        grantedMessage: "Screen Time access granted."),
                    .permission(
                        "health", .health, required: false, deniedMessage: healthDeniedMessage,
                        grantedMessage: "Apple Health access granted."),
                ],
                canGoBack: true),
            StepDefinition(
                "activation",
                StepContent(
                    title: "YOU'RE LOCKED IN", body: "Your bank is ticking. Go earn more.",
                    details: [
                        "Starting Bank: \(startingBankMinutes) min", "Difficulty: {difficulty}",
                        "{#apps|app|apps} blocked",
                    ]),
                actions: [StepAction("letsGo", label: "LET'S GO", outcome: .advance)]),
        ],
        fields: [
            FieldSpec(
                "apps", .list, rule: .minimumCount(1), ruleMessage: "Select at least one app to continue."),
            FieldSpec(
                "difficulty", .choice(Difficulty.all.map(\.id)), initial: .string(Difficulty.preselected)),
        ],
        triggers: [Trigger(.launch)], skip: .recordSkipped, interruption: .restart, scope: .install,
        onComplete: [
            .product(
                "activate",
                payload: [
                    "difficulty": .field("difficulty"), "blockedApps": .field("apps"),
                    "startingBankMinutes": .literal(.int(startingBankMinutes)),
                ])
        ],
        onReset: [.product("onboardingReset", payload: [:])])
}
