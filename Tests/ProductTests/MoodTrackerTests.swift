import Foundation
import MoodTrackerOnboarding
import Persistence
import Testing
import TourRuntime

@Suite("Mood Tracker tutorial (seed 004)")
struct MoodTrackerTests {
    let tutorial = MoodTrackerCatalog.tutorial

    func shown() async throws -> Journey {
        let journey = try Journey(MoodTrackerCatalog.product)
        try await journey.launch()
        try await journey.wait(0.5)
        return journey
    }

    @Test func appearsHalfASecondAfterLaunch() async throws {
        let journey = try Journey(MoodTrackerCatalog.product)
        try await journey.launch()
        try await journey.expect(nil, nil)
        try await journey.wait(0.4)
        try await journey.expect(nil, nil)
        try await journey.wait(0.1)
        try await journey.expect(tutorial, "swipeToSelect")
        #expect(journey.effects.analytics == ["tutorial_started"])
    }

    @Test func theThreeStepsInOrderWithTheirButtons() async throws {
        let journey = try await shown()
        #expect(try await journey.card()?.title == "Swipe to Select")
        #expect(try await journey.card()?.details == ["← Left = Bad", "↑ Up = Mid", "→ Right = Good"])
        #expect(try await journey.card()?.progress?.description == "Step 1 of 3")
        try await journey.act("next")
        #expect(try await journey.card()?.title == "View Your History")
        try await journey.act("next")
        #expect(try await journey.card()?.title == "You're All Set!")
        #expect(try await journey.card()?.actions.first?.label == "Get Started")
        try await journey.act("next")
        #expect(try await journey.status(tutorial) == .completed)
        #expect(try await journey.state()["hasSeenTutorial"] == true)
    }

    @Test func swipesRecordMoodsAlsoWhileStepOneShows() async throws {
        let journey = try await shown()
        try await journey.act("swipeLeft")
        try await journey.act("swipeUp")
        try await journey.act("swipeRight")
        try await journey.expect(tutorial, "swipeToSelect")
        let moods = try await journey.state()["moodEntries"]?.listValue?.compactMap {
            $0.objectValue?["mood"]
        }
        #expect(moods == ["bad", "mid", "good"])
        try await journey.act("next")
        try await journey.refuses("swipeLeft")
        try await journey.act("next")
        try await journey.act("next")
        try await journey.act("swipeRight")
        #expect(try await journey.state()["moodEntries"]?.count == 4)
    }

    @Test(arguments: [0, 1])
    func skipOnStepsOneAndTwoRecordsNothingSoItShowsAgain(steps: Int) async throws {
        let journey = try await shown()
        for _ in 0..<steps { try await journey.act("next") }
        try await journey.act("skip")
        #expect(journey.effects.analytics == ["tutorial_skipped"])
        #expect(try await journey.status(tutorial) == .notStarted)
        #expect(try await journey.state()["hasSeenTutorial"] == nil)
        try await journey.launch()
        try await journey.wait(0.5)
        try await journey.expect(tutorial, "swipeToSelect")
    }

    @Test func theLastStepHasNoSkipAndTheBackdropClosesIt() async throws {
        let journey = try await shown()
        try await journey.act("next")
        try await journey.act("next")
        try await journey.refuses("skip")
        try await journey.act("tapBackdrop")
        try await journey.expect(nil, nil)
        #expect(try await journey.status(tutorial) == .completed)
        try await journey.launch()
        try await journey.wait(2)
        try await journey.expect(nil, nil)
    }

    @Test func replayFromAccountLeavesStoredStateUnchanged() async throws {
        for finishFirst in [true, false] {
            let journey = try await shown()
            if finishFirst {
                for _ in 0..<3 { try await journey.act("next") }
            } else {
                try await journey.act("skip")
            }
            let key = SessionKey(app: "moodtracker", user: "user")
            let before = try journey.database.session(key, scopes: journey.product.scopes)
            try await journey.send(.replayRequested(nil))
            #expect(journey.effects.analytics == ["tutorial_started", "tutorial_replayed"])
            try await journey.expect(tutorial, "swipeToSelect")
            #expect(try await journey.card()?.isReplay == true)
            for _ in 0..<3 { try await journey.act("next") }
            let after = try journey.database.session(key, scopes: journey.product.scopes)
            #expect(after.tour == before.tour)
            #expect(after.domain == before.domain)
        }
    }

    @Test func theAnalyticsEventsLandInTheJournal() async throws {
        let journey = try await shown()
        try await journey.act("next")
        try await journey.act("skip")
        try await journey.launch()
        try await journey.wait(0.5)
        for _ in 0..<3 { try await journey.act("next") }
        try await journey.send(.replayRequested(nil))
        let effects = try journey.database.journal().map(\.effectsJSON).joined()
        for name in [
            "tutorial_started", "tutorial_step_completed", "tutorial_skipped", "tutorial_completed",
            "tutorial_replayed",
        ] {
            #expect(effects.contains("\"\(name)\""), "moodtracker tutorial: \(name) not in the journal")
        }
    }
}

@Suite("Debug reset keeps product mirrors in step")
struct ResetTests {
    @Test func moodTrackerResetClearsHasSeen() async throws {
        let journey = try Journey(MoodTrackerCatalog.product)
        try await journey.launch()
        try await journey.wait(0.5)
        for _ in 0..<3 { try await journey.act("next") }
        #expect(try await journey.state()["hasSeenTutorial"] == true)
        try await journey.send(.resetRequested(nil))
        #expect(try await journey.state()["hasSeenTutorial"] == nil)
        try await journey.launch()
        try await journey.wait(0.5)
        try await journey.expect("tutorial", "swipeToSelect")
    }
}
