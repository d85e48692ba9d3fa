import CarrierWaveOnboarding
import Foundation
import Persistence
import Testing
import TourCore
import TourRuntime

@Suite("Carrier Wave tours (seed 002)")
struct CarrierWaveTests {
    let intro = CarrierWaveCatalog.intro

    func journey(
        online: Bool = true, rejected: Set<String> = [],
        credentials: StubCredentialStore = StubCredentialStore(),
        database: OnboardingDatabase? = nil
    ) throws -> Journey {
        try Journey(
            CarrierWaveCatalog.product(
                credentials: credentials,
                connector: StubServiceConnector(online: online, rejectedPasswords: rejected)),
            database: database)
    }

    @Test func theIntroShowsItsFiveScreensOnFirstLaunch() async throws {
        let journey = try journey()
        try await journey.launch()
        let titles = [
            "Welcome to Carrier Wave", "One Log, Many Destinations", "Let's Connect Your First Service",
            "More Services Available", "We'd Love Your Feedback",
        ]
        #expect(try await journey.card()?.title == titles[0])
        #expect(try await journey.card()?.progress?.description == "Step 1 of 5")
        try await journey.act("next")
        #expect(try await journey.card()?.title == titles[1])
        try await journey.act("next")
        #expect(try await journey.card()?.title == titles[2])
        try await journey.act("connect", ["username": "W1AW", "password": "pw"])
        #expect(try await journey.card()?.title == titles[3])
        #expect(try await journey.card()?.details.first == "POTA - Upload activations to Parks on the Air")
        try await journey.act("next")
        #expect(try await journey.card()?.title == titles[4])
        #expect(try await journey.card()?.actions.first?.label == "Done")
        try await journey.act("next")
        #expect(try await journey.status(intro) == .completed)
    }

    @Test func skippingTheIntroMarksItCompleteAndItDoesNotNag() async throws {
        let journey = try journey()
        try await journey.launch()
        try await journey.act("next")
        try await journey.act("skip")
        #expect(try await journey.status(intro) == .completed)
        try await journey.launch()
        try await journey.expect(nil, nil)
    }

    @Test func qrzCredentialsInlineConnectAndThePasswordGoesOnlyToTheCredentialStore() async throws {
        let credentials = StubCredentialStore()
        let journey = try journey(credentials: credentials)
        try await journey.launch()
        try await journey.act("next")
        try await journey.act("next")
        try await journey.act("connect", ["username": "W1AW", "password": "s3cret-pass"])
        try await journey.expect(intro, "moreServices")
        #expect(credentials.password(service: "qrz", account: "W1AW") == "s3cret-pass")
        #expect(try await journey.state()["accounts"] == ["qrz": "W1AW"])
        let journal = try journey.database.journal()
        #expect(
            !journal.contains {
                $0.eventJSON.contains("s3cret-pass") || $0.effectsJSON.contains("s3cret-pass")
            })
        #expect(journal.contains { $0.eventJSON.contains("‹redacted›") })
    }

    @Test func aDifferentServiceCanBeConnectedInstead() async throws {
        let journey = try journey()
        try await journey.launch()
        try await journey.act("next")
        try await journey.act("next")
        try await journey.refuses("useService", ["service": "eqsl"])
        try await journey.act("useService", ["service": "pota"])
        #expect(try await journey.card()?.details == ["Service: pota"])
        try await journey.act("connect", ["username": "W1AW", "password": "pw"])
        #expect(try await journey.state()["accounts"] == ["pota": "W1AW"])
    }

    @Test func withoutNetworkQRZSetupCanBeLeftForLater() async throws {
        let offline = try journey(online: false)
        try await offline.launch()
        try await offline.act("next")
        try await offline.act("next")
        try await offline.act("connect", ["username": "W1AW", "password": "pw"])
        try await offline.expect(intro, "connectQRZ")
        #expect(
            try await offline.card()?.notices == [
                "No network connection. Go on with Later and configure qrz in Settings."
            ])
        try await offline.act("next")
        try await offline.expect(intro, "moreServices")
        #expect(try await offline.state()["accounts"] == nil)
    }

    /// Online, a user who does not connect QRZ goes on with Later (the screen's Next) and reaches
    /// "More Services" and "Feedback"; nothing is connected.
    @Test func onlineWithoutCredentialsTheIntroGoesOnToItsLastScreens() async throws {
        let journey = try journey()
        try await journey.launch()
        try await journey.act("next")
        try await journey.act("next")
        #expect(try await journey.card()?.actions.map(\.name) == ["connect", "useService", "next", "skip"])
        #expect(try await journey.card()?.actions.first { $0.name == "next" }?.label == "Later")
        try await journey.act("next")
        try await journey.expect(intro, "moreServices")
        try await journey.act("next")
        try await journey.expect(intro, "feedback")
        try await journey.act("next")
        #expect(try await journey.status(intro) == .completed)
        #expect(try await journey.state()["accounts"] == nil)
    }

    /// "Show App Tour" with an account connected does not ask for credentials again: the QRZ screen
    /// is left out of that run, and screens 4 and 5 follow screen 2.
    @Test func showAppTourWithAConnectedAccountLeavesTheCredentialsScreenOut() async throws {
        let journey = try journey()
        try await journey.launch()
        try await journey.act("next")
        try await journey.act("next")
        try await journey.act("connect", ["username": "W1AW", "password": "pw"])
        try await journey.act("skip")
        try await journey.send(.replayRequested(nil))
        #expect(try await journey.card()?.progress?.description == "Step 1 of 4")
        try await journey.act("next")
        try await journey.act("next")
        try await journey.expect(intro, "moreServices")
        try await journey.act("next")
        try await journey.expect(intro, "feedback")
    }

    /// The service refuses the credentials: the card says so, nothing is stored (no account, no
    /// password in the credential store), the user stays on the screen and a retry connects.
    @Test func refusedCredentialsAreSaidStoreNothingAndCanBeRetried() async throws {
        let credentials = StubCredentialStore()
        let journey = try journey(rejected: ["wrong-pass"], credentials: credentials)
        try await journey.launch()
        try await journey.act("next")
        try await journey.act("next")
        try await journey.act("connect", ["username": "W1AW", "password": "wrong-pass"])
        try await journey.expect(intro, "connectQRZ")
        #expect(
            try await journey.card()?.notices == [
                "qrz did not accept those credentials. Check them and try again."
            ])
        #expect(try await journey.state()["accounts"] == nil)
        #expect(credentials.password(service: "qrz", account: "W1AW") == nil)
        try await journey.act("connect", ["username": "W1AW", "password": "right-pass"])
        try await journey.expect(intro, "moreServices")
        #expect(try await journey.state()["accounts"] == ["qrz": "W1AW"])
        #expect(credentials.password(service: "qrz", account: "W1AW") == "right-pass")
    }

    @Test func rejectedCredentialsStayOnTheStepWithAMessage() async throws {
        let journey = try journey(rejected: ["wrong"])
        try await journey.launch()
        try await journey.act("next")
        try await journey.act("next")
        try await journey.act("connect", ["username": "W1AW", "password": "wrong"])
        try await journey.expect(intro, "connectQRZ")
        #expect(
            try await journey.card()?.notices == [
                "qrz did not accept those credentials. Check them and try again."
            ])
        try await journey.refuses("configureLater")
    }

    static let miniTours: [(feature: String, flow: FlowID, screens: Int, title: String)] = [
        ("potaActivations", "pota_activations", 2, "Your POTA Activations"),
        ("potaSettings", "pota_account", 3, "POTA Accounts Explained"),
        ("challenges", "challenges", 1, "Challenges Coming Soon"),
        ("statBox", "stats_drilldown", 1, "Explore Your Stats"),
        ("lofiSettings", "lofi_setup", 2, "Ham2K LoFi"),
    ]

    @Test(arguments: 0..<5)
    func eachMiniTourTriggersOnceOnTheFirstVisit(index: Int) async throws {
        let tour = Self.miniTours[index]
        let journey = try journey()
        try await journey.launch()
        try await journey.act("skip")
        try await journey.send(.featureVisited(tour.feature))
        try await journey.expect(tour.flow, "screenA")
        #expect(try await journey.card()?.title == tour.title)
        #expect(try await journey.card()?.progress?.total == tour.screens)
        for _ in 0..<tour.screens { try await journey.act("next") }
        #expect(try await journey.status(tour.flow) == .completed)
        try await journey.send(.featureVisited(tour.feature))
        try await journey.expect(nil, nil)
    }

    @Test func dismissingAMiniTourMidFlowMarksItSeen() async throws {
        let journey = try journey()
        try await journey.launch()
        try await journey.act("skip")
        try await journey.send(.featureVisited("potaSettings"))
        try await journey.act("next")
        try await journey.act("skip")
        #expect(try await journey.status("pota_account") == .completed)
        try await journey.send(.featureVisited("potaSettings"))
        try await journey.expect(nil, nil)
    }

    @Test func thePOTAAccountTourAlsoStartsWhenAuthFails() async throws {
        let journey = try journey()
        try await journey.launch()
        try await journey.act("skip")
        try await journey.send(.signal("potaAuthFailed"))
        try await journey.expect("pota_account", "screenA")
    }

    @Test func aFreshInstallSeesTheIntroAndNoUpdatePrompt() async throws {
        for version in ["2.0", "2.5", "2.5.1", "2.6"] {
            let journey = try journey()
            try await journey.launch(version)
            try await journey.expect(intro, "welcome")
            try await journey.act("skip")
            try await journey.expect(nil, nil)
            try await journey.launch(version)
            try await journey.expect(nil, nil)
        }
    }

    /// Seed 002: "If current version is in that list and lastTourVersion is older, show prompt."
    /// Each launch of a sequence shows the prompt named (or none); never two in one launch.
    @Test(
        arguments: [
            // 1.9 → 2.0 → 2.5 → 2.6: each listed major once; 2.6 is not in the list.
            [
                ("1.9", "intro"), ("2.0", "whats_new_2_0"), ("2.0", nil), ("2.5", "whats_new_2_5"),
                ("2.6", nil),
            ],
            // A skipped major: 1.9 → 2.5 shows 2.5's prompt only.
            [("1.9", "intro"), ("2.5", "whats_new_2_5"), ("2.5", nil)],
            // A patch release of a listed version counts as it; its next patch shows nothing again.
            [("1.9", "intro"), ("2.0.3", "whats_new_2_0"), ("2.5.1", "whats_new_2_5"), ("2.5.2", nil)],
            // Downgrades never prompt.
            [("1.9", "intro"), ("2.5", "whats_new_2_5"), ("2.0", nil), ("2.5", nil)],
            // An install at a listed version sees the intro, which records that version.
            [("2.0", "intro"), ("2.0", nil), ("2.5", "whats_new_2_5"), ("2.6", nil)],
        ] as [[(String, FlowID?)]])
    func updatePromptsFollowTheSeedsVersionRule(launches: [(String, FlowID?)]) async throws {
        let journey = try journey()
        for (version, expected) in launches {
            try await journey.launch(version)
            let shown = try await journey.card()?.flow
            #expect(shown == expected, "launch \(version): expected \(expected?.rawValue ?? "nothing")")
            if let shown {
                try await journey.act("skip")
                // Dismissing the one prompt shows nothing else in the same launch.
                #expect(try await journey.card() == nil, "launch \(version): a second flow after \(shown)")
            }
        }
    }

    @Test func aSkippedMajorsScreensComeFirstInTheNextTour() async throws {
        let journey = try journey()
        try await journey.launch("1.9")
        try await journey.act("skip")
        try await journey.launch("2.5")
        try await journey.act("takeTour")
        var titles: [String] = []
        while let card = try await journey.card() {
            titles.append(card.title)
            try await journey.act("next")
        }
        #expect(titles == ["Explore Your Stats", "Ham2K LoFi", "Device Linking"])
        // Those screens were the mini-tours': their features' first visits show nothing again.
        for feature in ["statBox", "lofiSettings"] {
            try await journey.send(.featureVisited(feature))
            try await journey.expect(nil, nil)
        }
    }

    /// After the 2.0 What's New tour, the stats box's first visit does not show the screen the user
    /// just saw; another feature's mini-tour still shows.
    @Test func aWhatsNewScreenCountsAsItsMiniTourSeen() async throws {
        let journey = try journey()
        try await journey.launch("1.9")
        try await journey.act("skip")
        try await journey.launch("2.0")
        try await journey.act("takeTour")
        #expect(try await journey.card()?.title == "Explore Your Stats")
        try await journey.act("next")
        try await journey.send(.featureVisited("statBox"))
        try await journey.expect(nil, nil)
        #expect(try await journey.status("stats_drilldown") == .completed)
        try await journey.send(.featureVisited("challenges"))
        try await journey.expect("challenges", "screenA")
    }

    @Test func skipOnAWhatsNewPromptIsDismiss() async throws {
        let journey = try journey()
        try await journey.launch("1.9")
        try await journey.act("skip")
        try await journey.launch("2.0")
        #expect(try await journey.card()?.actions.map(\.name) == ["takeTour", "dismiss"])
        try await journey.act("skip")
        try await journey.expect(nil, nil)
        #expect(try await journey.status("whats_new_2_0") == .completed)
        let last = try #require(try journey.database.journal().last)
        #expect(last.event == "dismiss")
    }

    /// Killed while the 2.0 prompt shows and upgraded to 2.5 before relaunching: the old prompt is
    /// dropped, and only 2.5's shows.
    @Test func anInterruptedPromptDoesNotChainIntoTheNextOne() async throws {
        let journey = try journey()
        try await journey.launch("1.9")
        try await journey.act("skip")
        try await journey.launch("2.0")
        try await journey.expect("whats_new_2_0", "prompt")
        try await journey.launch("2.5")
        try await journey.expect("whats_new_2_5", "prompt")
        try await journey.act("dismiss")
        try await journey.expect(nil, nil)
    }

    /// A mini-tour shows on its own feature's visit only: a visit before the intro has run, or
    /// while another sheet shows, is ignored, and the next real visit triggers it.
    @Test func aMiniTourShowsOnlyOnItsOwnFeaturesVisit() async throws {
        let journey = try journey()
        try await journey.send(.featureVisited("challenges"))
        try await journey.expect(nil, nil)
        try await journey.launch()
        try await journey.expect(intro, "welcome")
        try await journey.send(.featureVisited("challenges"))
        try await journey.act("skip")
        try await journey.expect(nil, nil)
        try await journey.send(.featureVisited("potaActivations"))
        try await journey.expect("pota_activations", "screenA")
        try await journey.send(.featureVisited("challenges"))
        try await journey.expect("pota_activations", "screenA")
        try await journey.act("skip")
        try await journey.expect(nil, nil)
        #expect(try await journey.status("challenges") == .notStarted)
        try await journey.send(.featureVisited("challenges"))
        try await journey.expect("challenges", "screenA")
    }

    @Test func anUpgradeFromAVersionBeforeTheTourShowsTheIntro() async throws {
        // A pre-tour version left no tour record at all.
        let journey = try journey()
        try await journey.launch("2.5")
        try await journey.expect(intro, "welcome")
    }

    @Test func showAppTourResetsAndPresentsTheIntro() async throws {
        let journey = try journey()
        try await journey.launch()
        try await journey.act("skip")
        try await journey.send(.replayRequested(nil))
        try await journey.expect(intro, "welcome")
        #expect(try await journey.status(intro) == .active)
        try await journey.launch()
        try await journey.expect(intro, "welcome")
    }
}
