import FiniteOnboarding
import Foundation
import Testing
import TourCore
import TourRuntime

@Suite("Finite walkthrough (seed 000)")
struct FiniteTests {
    let flow = FiniteCatalog.walkthrough

    func started(birthDate: String? = "1990-05-01", phases: Bool = false) async throws -> Journey {
        let journey = try Journey(FiniteCatalog.product)
        if let birthDate { try await journey.act("setBirthDate", ["date": birthDate]) }
        if phases { try await journey.act("addPhase", ["name": "School"]) }
        try await journey.launch()
        try await journey.wait(1.5)
        return journey
    }

    @Test func startsOneAndAHalfSecondsAfterTheRevealCompletes() async throws {
        let journey = try Journey(FiniteCatalog.product)
        try await journey.launch()
        try await journey.expect(nil, nil)
        try await journey.wait(1.4)
        try await journey.expect(nil, nil)
        try await journey.wait(0.1)
        try await journey.expect(flow, "gridIntro")
        #expect(journey.haptics.played == [.impactLight])
    }

    @Test func eachStepShowsTheSeedsContent() async throws {
        let expected: [(StepID, String, String, String?)] = [
            (
                "gridIntro", "Your Life in Weeks",
                "Each dot is one week of your life.\nThe filled ones are behind you.",
                "Tap anywhere to continue"
            ),
            ("currentWeek", "You Are Here", "This glowing dot is today.\nTap it.", "Tap the glowing week"),
            (
                "viewModesIntro", "Three Perspectives",
                "See your life through different lenses.\nSwipe left to try.", "Swipe left on the grid"
            ),
            (
                "chaptersExplanation", "Life Chapters",
                "Color your past by adding life chapters—school, career, adventures.", "Tap to continue"
            ),
            ("addPhase", "Add Your First Chapter", "Let's add your first chapter.", nil),
            (
                "markWeek", "Reflect on a Week", "Long-press any past week to record how it felt.",
                "Long-press any filled week"
            ),
            (
                "complete", "You're Ready",
                "Take your time. Reflect weekly.\nYour life is finite—make it count.", nil
            ),
        ]
        let journey = try await started()
        let moves: [(String, [String: String])] = [
            ("next", [:]), ("tapCurrentWeek", [:]), ("swipeToChapters", [:]), ("next", [:]),
            ("dismissPhase", [:]),
            ("longPressWeek", ["week": "10"]), ("saveMark", [:]),
        ]
        var index = 0
        for (step, title, body, hint) in expected {
            let card = try #require(try await journey.card(), "finite walkthrough step \(step): no card")
            #expect(card.step == step, "finite walkthrough step \(step)")
            #expect(card.title == title, "finite walkthrough step \(step) title")
            #expect(card.body == body, "finite walkthrough step \(step) body")
            #expect(card.hint == hint, "finite walkthrough step \(step) hint")
            if index < moves.count {
                try await journey.act(moves[index].0, moves[index].1)
                if moves[index].0 == "longPressWeek" {
                    index += 1
                    try await journey.act(moves[index].0, moves[index].1)
                }
            }
            index += 1
        }
    }

    @Test func tapToContinueWorksOnlyOnNonActionSteps() async throws {
        let journey = try await started()
        try await journey.act("next")
        try await journey.expect(flow, "currentWeek")
        let refusal = try #require(try await journey.refuses("next"))
        #expect(refusal.step == "currentWeek")
        #expect(refusal.allowed == ["tapCurrentWeek", "skip"])
        try await journey.act("tapCurrentWeek")
        _ = try #require(try await journey.refuses("next"))
        try await journey.act("swipeToChapters")
        try await journey.act("next")
        try await journey.expect(flow, "addPhase")
    }

    @Test func actionStepsCelebrateWithSuccessAndStepEntryIsLight() async throws {
        let journey = try await started()
        try await journey.act("next")
        #expect(journey.effects.celebrations == 0)
        #expect(journey.haptics.played == [.impactLight])
        try await journey.act("tapCurrentWeek")
        #expect(journey.effects.celebrations == 1)
        #expect(journey.haptics.played == [.notificationSuccess, .impactLight])
        try await journey.act("swipeToChapters")
        #expect(journey.effects.celebrations == 1)
        try await journey.act("next")
        // Medium impact on phase save (step 5), then success: the step's action is completed.
        try await journey.act("savePhase", ["name": "Career"])
        #expect(journey.effects.celebrations == 1)
        #expect(journey.haptics.played == [.impactMedium, .notificationSuccess, .impactLight])
        try await journey.act("longPressWeek", ["week": "2"])
        #expect(journey.haptics.played == [.impactMedium])
        try await journey.act("saveMark")
        #expect(journey.effects.celebrations == 1)
        #expect(journey.haptics.played == [.notificationSuccess, .impactLight])
    }

    @Test func thePhaseModalAdvancesOnSaveOrDismissAndSaveStoresThePhase() async throws {
        for save in [true, false] {
            let journey = try await started()
            for action in ["next", "tapCurrentWeek", "swipeToChapters", "next"] {
                try await journey.act(action)
            }
            if save {
                try await journey.act("savePhase", ["name": "High school", "startYear": "2004"])
            } else {
                try await journey.act("dismissPhase")
            }
            // Both complete the step's action: a celebration and success (seed's haptic table);
            // saving a phase adds its medium impact first (step 5).
            #expect(journey.effects.celebrations == 1)
            #expect(
                journey.haptics.played
                    == (save ? [.impactMedium] : []) + [.notificationSuccess, .impactLight])
            try await journey.expect(flow, "markWeek")
            let phases = try await journey.state()["phases"]
            #expect(phases == (save ? [["name": "High school", "startYear": 2004]] : nil))
        }
    }

    @Test func aUserWithPhasesSkipsTheAddPhaseStep() async throws {
        let journey = try await started(phases: true)
        for action in ["next", "tapCurrentWeek", "swipeToChapters", "next"] { try await journey.act(action) }
        try await journey.expect(flow, "markWeek")
        #expect(try await journey.card()?.progress == StepProgress(step: 5, total: 5))
    }

    @Test func markingAWeekNeedsTheLongPressThenStoresTheWeek() async throws {
        let journey = try await started()
        for action in ["next", "tapCurrentWeek", "swipeToChapters", "next", "dismissPhase"] {
            try await journey.act(action)
        }
        #expect(try await journey.card()?.anchor == "filledWeeks")
        _ = try #require(try await journey.refuses("saveMark"))
        // 1990-05-01 to 2026-01-05 is 1861 whole weeks; week 1862 is not lived yet.
        #expect(
            try await journey.refuses("longPressWeek", ["week": "1862"])?.reason
                == "week must be a whole number 1...1861")
        try await journey.act("longPressWeek", ["week": "1861"])
        try await journey.act("saveMark", ["note": "a calm week"])
        #expect(try await journey.state()["markedWeeks"] == [["week": 1861, "note": "a calm week"]])
        try await journey.expect(flow, "complete")
    }

    @Test func withNoFilledWeeksTheFirstWeeksAreSpotlighted() async throws {
        let journey = try await started(birthDate: nil)
        for action in ["next", "tapCurrentWeek", "swipeToChapters", "next", "dismissPhase"] {
            try await journey.act(action)
        }
        #expect(try await journey.card()?.anchor == "firstWeeks")
        try await journey.refuses("longPressWeek", ["week": "5"])
        try await journey.act("longPressWeek", ["week": "4"])
        try await journey.act("saveMark")
        try await journey.expect(flow, "complete")
    }

    @Test func theLastStepCannotBeSkippedAndDismissesItselfAfterTwoAndAHalfSeconds() async throws {
        let journey = try await started()
        for action in ["next", "tapCurrentWeek", "swipeToChapters", "next", "dismissPhase"] {
            try await journey.act(action)
        }
        try await journey.act("longPressWeek", ["week": "3"])
        try await journey.act("saveMark")
        #expect(try await journey.card()?.progress == StepProgress(step: 6, total: 6, finale: true))
        #expect(try await journey.card()?.progress?.description == "All 6 steps done")
        #expect(try await journey.refuses("skip")?.reason == "skipping is not allowed on this step")
        try await journey.wait(2.4)
        try await journey.expect(flow, "complete")
        try await journey.wait(0.1)
        try await journey.expect(nil, nil)
        #expect(journey.haptics.played == [.notificationSuccess])
        #expect(try await journey.status(flow) == .completed)
    }

    @Test(
        arguments: [
            "gridIntro", "currentWeek", "viewModesIntro", "chaptersExplanation", "addPhase", "markWeek",
        ] as [StepID])
    func skipDismissesFromEveryStepButTheLastAndNeverShowsAgain(at step: StepID) async throws {
        let journey = try await started()
        let path: [String] = ["next", "tapCurrentWeek", "swipeToChapters", "next", "dismissPhase"]
        for action in path {
            if try await journey.card()?.step == step { break }
            try await journey.act(action)
        }
        try await journey.expect(flow, step)
        try await journey.act("skip")
        #expect(journey.haptics.played == [.impactMedium])
        #expect(try await journey.status(flow) == .skipped)
        try await journey.launch()
        try await journey.wait(5)
        try await journey.expect(nil, nil)
    }

    @Test func neverShowsAgainAfterCompletion() async throws {
        let journey = try await started()
        for action in ["next", "tapCurrentWeek", "swipeToChapters", "next", "dismissPhase"] {
            try await journey.act(action)
        }
        try await journey.act("longPressWeek", ["week": "3"])
        try await journey.act("saveMark")
        try await journey.wait(2.5)
        try await journey.launch()
        try await journey.wait(5)
        try await journey.expect(nil, nil)
    }

    @Test func aKillMidWalkthroughResumesAtTheSameStep() async throws {
        let journey = try await started()
        try await journey.act("next")
        try await journey.act("tapCurrentWeek")
        try await journey.launch()
        try await journey.expect(flow, "viewModesIntro")
        try await journey.wait(5)
        try await journey.expect(flow, "viewModesIntro")
    }

    /// The week sheet opened by the long-press does not survive a kill: on relaunch the step shows
    /// again and saving needs a new long-press.
    @Test func aKillWithTheWeekSheetOpenClosesIt() async throws {
        let journey = try await started()
        for action in ["next", "tapCurrentWeek", "swipeToChapters", "next", "dismissPhase"] {
            try await journey.act(action)
        }
        try await journey.act("longPressWeek", ["week": "3"])
        #expect(try await journey.card()?.actions.map(\.name).contains("saveMark") == true)
        try await journey.launch()
        try await journey.expect(flow, "markWeek")
        #expect(try await journey.card()?.actions.map(\.name).contains("saveMark") == false)
        #expect(
            try await journey.refuses("saveMark")?.reason
                == "long-press a filled week first (longPressWeek week=N)")
        try await journey.act("longPressWeek", ["week": "3"])
        try await journey.act("saveMark")
        try await journey.expect(flow, "complete")
    }

    @Test(arguments: [
        ("1990-02-30", "date 1990-02-30 does not exist: month 2 of 1990 has 28 days"),
        ("2023-02-29", "date 2023-02-29 does not exist: month 2 of 2023 has 28 days"),
        ("1990-04-31", "date 1990-04-31 does not exist: month 4 of 1990 has 30 days"),
        ("2026-01-06", "date 2026-01-06 is in the future; it must be 2026-01-05 or earlier"),
        ("1990-5-01", "date must be a date written YYYY-MM-DD"),
        ("1990-13-01", "date must be a date written YYYY-MM-DD"),
    ])
    func anImpossibleOrFutureBirthDateIsRefused(date: String, reason: String) async throws {
        let journey = try Journey(FiniteCatalog.product)
        #expect(try await journey.refuses("setBirthDate", ["date": date])?.reason == reason)
        try await journey.act("setBirthDate", ["date": "2024-02-29"])
        try await journey.act("setBirthDate", ["date": "2026-01-05"])
        #expect(try await journey.state()["birthDate"] == "2026-01-05")
    }

    @Test func theDebugResetShowsTheWalkthroughAgain() async throws {
        let journey = try await started()
        try await journey.act("skip")
        try await journey.send(.resetRequested(nil))
        try await journey.launch()
        try await journey.wait(1.5)
        try await journey.expect(flow, "gridIntro")
    }

    @Test func progressDotsLeaveOutTheFinalStep() async throws {
        let journey = try await started()
        #expect(try await journey.card()?.progress == StepProgress(step: 1, total: 6))
    }
}
