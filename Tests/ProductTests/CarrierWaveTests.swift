import CarrierWaveOnboarding
import Foundation
import Testing
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
        try await offline.refuses("configureLater")
        try await offline.act("connect", ["username": "W1AW", "password": "pw"])
        try await offline.expect(intro, "connectQRZ")
        #expect(
            try await offline.card()?.notices == [
                "No network connection. Skip this step and configure qrz later in Settings."
            ])
        try await offline.act("configureLater")
        try await offline.expect(intro, "moreServices")
        #expect(try await offline.state()["accounts"] == nil)
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
        let journey = try journey()
        try await journey.launch("2.5")
        try await journey.expect(intro, "welcome")
        try await journey.act("skip")
        try await journey.expect(nil, nil)
        try await journey.launch("2.5")
        try await journey.expect(nil, nil)
    }

    @Test func anUpgradeIntoAMajorVersionShowsOnlyTheNewFeatures() async throws {
        let journey = try journey()
        try await journey.launch("1.8")
        try await journey.act("skip")
        try await journey.launch("2.0")
        try await journey.expect("whats_new_2_0", "prompt")
        #expect(try await journey.card()?.title == "What's New in Carrier Wave")
        #expect(try await journey.card()?.actions.map(\.label) == ["Take a Tour", "Dismiss"])
        try await journey.act("takeTour")
        try await journey.expect("whats_new_2_0", "feature1")
        try await journey.act("next")
        try await journey.expect(nil, nil)
        try await journey.launch("2.0.1")
        try await journey.expect(nil, nil)
        try await journey.launch("2.5")
        try await journey.expect("whats_new_2_5", "prompt")
        try await journey.act("dismiss")
        try await journey.expect(nil, nil)
        #expect(try await journey.status(intro) == .completed)
        try await journey.launch("2.6")
        try await journey.expect(nil, nil)
    }

    @Test func skippingSeveralMajorVersionsShowsEachPromptInTurn() async throws {
        let journey = try journey()
        try await journey.launch("1.0")
        try await journey.act("skip")
        try await journey.launch("2.5")
        try await journey.expect("whats_new_2_0", "prompt")
        try await journey.act("dismiss")
        try await journey.expect("whats_new_2_5", "prompt")
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
