import TourCore

/// Carrier Wave's intro tour, contextual mini-tours and update prompts, word for word from its spec
/// (seed 002). The update prompts' feature screens are ours (the seed leaves them to each release).
public enum CarrierWaveCatalog {
    public static let app = "carrierwave"
    public static let intro: FlowID = "intro"
    /// Versions that warrant a "What's New" prompt.
    public static let majorVersions = ["2.0", "2.5"]
    public static let currentVersion = "2.5"

    public static let services = ["qrz", "pota", "lofi", "hamrs", "lotw"]

    /// Version 2 gives the update prompts the display budget's `low` priority (Docs/DisplayBudget.md):
    /// a what's-new sheet yields the day's last start to a flow that matters more. Version 1's flows
    /// are otherwise the same.
    public static let catalog = TourCatalog(
        app: app, name: "Carrier Wave", flowNoun: "tour", version: 2,
        flows: [introFlow] + miniTours + updatePrompts)

    static let tourFlows: [FlowID] = [intro] + majorVersions.map(promptID)

    static func promptID(_ version: String) -> FlowID {
        FlowID("whats_new_" + version.replacing(".", with: "_"))
    }

    static func screen(
        _ id: StepID, _ title: String, _ body: String, details: [String] = [], last: Bool = false
    ) -> StepDefinition {
        StepDefinition(
            id, StepContent(title: title, body: body, details: details),
            actions: [.next(label: last ? "Done" : "Next")], canSkip: true, skipLabel: "Skip")
    }

    static let introFlow = FlowDefinition(
        intro, name: "Intro Tour",
        steps: [
            screen(
                "welcome", "Welcome to Carrier Wave",
                """
                Your amateur radio log aggregator. Download QSOs from logging apps and services, \
                then upload them everywhere else - automatically. Carrier Wave doesn't create logs; \
                it syncs them.
                """
            ),
            screen(
                "howSyncWorks", "One Log, Many Destinations",
                """
                Import QSOs from any source. Carrier Wave deduplicates them (same callsign + band + mode \
                within 5 minutes = one contact) and tracks what's been uploaded where.
                """
            ),
            StepDefinition(
                "connectQRZ",
                StepContent(
                    title: "Let's Connect Your First Service",
                    body: "QRZ.com is the most popular logbook. Enter your credentials to start syncing.",
                    details: ["Service: {service}"]),
                actions: [
                    StepAction(
                        "connect", label: "Connect", fills: ["username", "password"],
                        requiredParameters: ["username", "password"], outcome: .request(gate: "connection")),
                    StepAction(
                        "useService", label: "Connect a different service instead", fills: ["service"],
                        requiredParameters: ["service"], outcome: .stay),
                    // The screen's Next: go on without connecting (configure it later in Settings).
                    .next(label: "Later"),
                ],
                gates: [
                    Gate(
                        "connection", .request("connect"), required: false,
                        deniedMessage:
                            "{service} did not accept those credentials. Check them and try again.",
                        grantedMessage: "Connected to {service}.",
                        unavailableMessage:
                            "No network connection. Go on with Later and configure {service} in Settings.",
                        advancesWhenGranted: true,
                        onGranted: [
                            .product(
                                "serviceConnected",
                                payload: ["service": .field("service"), "username": .field("username")])
                        ])
                ],
                canSkip: true,
                // "Show App Tour" with a service already connected does not ask for credentials again.
                includedWhen: .not(.flag("hasConnectedService")), skipLabel: "Skip"),
            screen(
                "moreServices", "More Services Available", "Configure these anytime in Settings",
                details: [
                    "POTA - Upload activations to Parks on the Air",
                    "Ham2K LoFi - Import logs from PoLo app",
                    "HAMRS - Sync with HAMRS logbook",
                    "LoTW - Download QSL confirmations (upload requires TQSL)",
                ]),
            screen(
                "feedback", "We'd Love Your Feedback",
                """
                Found a bug or have a feature idea? Tap Settings → Report a Bug to send us details. \
                Join our Discord to connect with other users.
                """,
                last: true),
        ],
        fields: [
            FieldSpec("service", .choice(services), initial: "qrz"),
            FieldSpec("username", .text), FieldSpec("password", .secret),
        ],
        triggers: [Trigger(.launch)], skip: .countsAsCompleted, interruption: .resume,
        replay: .resetAndPresent,
        scope: .install)

    /// A mini-tour: shown on its feature's first visit once the intro has run ("during normal use").
    /// A visit while another sheet shows is ignored (``Trigger/WhileAnotherFlowShows/ignore``), so
    /// the next real visit shows it, on its own feature.
    static func miniTour(
        _ id: FlowID, _ name: String, moments: [Trigger.Moment], _ screens: [(String, String)]
    )
        -> FlowDefinition
    {
        FlowDefinition(
            id, name: name,
            steps: screens.enumerated().map { index, screen in
                Self.screen(
                    StepID("screen\(["A", "B", "C"][index])"), screen.0, screen.1,
                    last: index == screens.count - 1)
            },
            triggers: moments.map { Trigger($0, when: .flowFinished(intro), whileAnotherFlowShows: .ignore) },
            skip: .countsAsCompleted, interruption: .resume, scope: .install)
    }

    static let miniTours = [
        miniTour(
            "pota_activations", "POTA Activations", moments: [.visit("potaActivations")],
            [
                (
                    "Your POTA Activations",
                    """
                    QSOs with a park reference are grouped here by park and date. Each group is an \
                    activation you can upload to POTA.
                    """
                ),
                (
                    "Uploading to POTA",
                    """
                    Tap an activation to review its QSOs, then upload. You need 10+ QSOs for activation \
                    credit, but you can upload smaller logs to credit your hunters.
                    """
                ),
            ]),
        miniTour(
            "pota_account", "POTA Account Setup",
            moments: [.visit("potaSettings"), .signal("potaAuthFailed")],
            [
                ("POTA Accounts Explained", "POTA has two account systems that can be confusing."),
                (
                    "Service Login (AWS Cognito)",
                    """
                    If you registered years ago, you may have an AWS Cognito login. \
                    This is separate from your pota.app account.
                    """
                ),
                (
                    "Creating a pota.app Account",
                    """
                    Go to pota.app, create an account with email/password, then link your existing service \
                    login in your profile settings. Carrier Wave uses your pota.app credentials.
                    """
                ),
            ]),
        miniTour(
            "challenges", "Challenges", moments: [.visit("challenges")],
            [
                (
                    "Challenges Coming Soon",
                    """
                    We're building something exciting here - track your progress toward awards, \
                    compete on leaderboards, and join community events. Stay tuned!
                    """
                )
            ]),
        miniTour(
            "stats_drilldown", "Stats Drilldown", moments: [.visit("statBox")], statsScreens),
        miniTour(
            "lofi_setup", "Ham2K LoFi Setup", moments: [.visit("lofiSettings")], lofiScreens),
    ]

    static let statsScreens = [
        (
            "Explore Your Stats",
            """
            Tap any statistic to see the breakdown. Expand individual items to view the QSOs that count \
            toward that total.
            """
        )
    ]

    static let lofiScreens = [
        (
            "Ham2K LoFi",
            """
            LoFi syncs your logs from the Ham2K Portable Logger (PoLo) app. It's download-only - Carrier \
            Wave imports your PoLo operations.
            """
        ),
        (
            "Device Linking",
            """
            Enter the email address associated with your PoLo account. You'll receive a verification code to \
            link this device.
            """
        ),
    ]

    /// What each major release's "What's New" says, and the mini-tour whose screens show its new
    /// feature (our content: the seed leaves it to each release). Taking the tour shows those screens
    /// and records the mini-tour as seen, so the feature's first visit does not show them again.
    static let whatsNew: [String: (summary: [String], feature: FlowID, screens: [(String, String)])] = [
        "2.0": (
            ["• Contextual tips the first time you open a feature", "• Stats drilldown on the Dashboard"],
            "stats_drilldown", statsScreens
        ),
        "2.5": (
            ["• Ham2K LoFi: import your PoLo operations", "• Clearer POTA account setup in Settings"],
            "lofi_setup", lofiScreens
        ),
    ]

    /// One prompt per major version (seed 002: shown when the running version is in the list, 2.5.1
    /// counting as 2.5, and the last tour version is older). "Take a Tour" shows the new features'
    /// screens not seen yet, those of a major the user skipped first; Dismiss (or Skip) ends it.
    /// Killed mid-prompt, it is dropped and decided again at the next launch, so an upgrade never
    /// chains two prompts.
    static let updatePrompts: [FlowDefinition] = majorVersions.map { version in
        let content = whatsNew[version] ?? ([], intro, [])
        let prompt = StepDefinition(
            "prompt",
            StepContent(
                title: "What's New in Carrier Wave", body: "Version \(version)", details: content.summary),
            actions: [
                StepAction("takeTour", label: "Take a Tour", outcome: .advance),
                StepAction("dismiss", label: "Dismiss", aliases: ["skip"], outcome: .dismissFlow),
            ])
        let releases = majorVersions.filter { !AppVersion.isOlder(version, than: $0) }
        var screens: [StepDefinition] = []
        for release in releases {
            guard let news = whatsNew[release] else { continue }
            for (title, body) in news.screens {
                var step = Self.screen(StepID("feature\(screens.count + 1)"), title, body)
                step.covers = [news.feature]
                // Never a screen the user has seen (its mini-tour is finished); a skipped major's
                // screens only for a user whose last tour is older than that major.
                let unseen = Condition.not(.flowFinished(news.feature))
                step.includedWhen =
                    release == version
                    ? unseen : .all([.lastTourOlder(than: release, tourFlows: tourFlows), unseen])
                screens.append(step)
            }
        }
        if var last = screens.popLast() {
            last.actions[0].label = "Done"
            screens.append(last)
        }
        return FlowDefinition(
            promptID(version), name: "What's New \(version)", steps: [prompt] + screens,
            triggers: [Trigger(.launch, when: .upgradedInto(version, tourFlows: tourFlows))],
            skip: .countsAsCompleted, interruption: .discard, scope: .install, budget: .low)
    }
}
