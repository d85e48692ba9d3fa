import Foundation
import TestThreads
import Testing
import TourFixtures

/// The seeds' behaviours through the built executables, as a product team runs them.
@Suite("Seed fidelity through the CLIs", .ownThread)
struct SeedFidelityTests {
    /// Finite's card, status line and JSON count the same way at every step (the seed's dots).
    @Test func finitesCardStatusAndJSONAgreeOnProgress() throws {
        let cli = try CLI("finite")
        try cli.run("play", stdin: "do setBirthDate date=1990-05-01\nlaunch\nwait 1.5\n")
        let moves = [
            "next", "tapCurrentWeek", "swipeToChapters", "next", "dismissPhase", "longPressWeek week=3",
            "saveMark",
        ]
        var seen: [String] = []
        for move in [""] + moves {
            if !move.isEmpty { try cli.run(["do"] + move.split(separator: " ").map(String.init)) }
            let card = try cli.run("show").stdout
            let header = try #require(card.split(separator: "\n").first.map(String.init))
            let status = try cli.run("status").stdout
            let json = try cli.json("status")
            let flow = try #require(json.flow("walkthrough"))
            let progress = try #require(flow["progress"] as? [String: Any])
            let step = try #require(flow["stepIndex"] as? Int)
            let total = try #require(flow["stepCount"] as? Int)
            #expect(progress["step"] as? Int == step && progress["total"] as? Int == total)
            #expect((json.card?["progress"] as? [String: Any])?["step"] as? Int == step)
            #expect(total == 6)
            if progress["finale"] as? Bool == true {
                #expect(header.hasSuffix("All 6 steps done ──"))
                #expect(status.contains("step complete (all 6 done)"))
            } else {
                #expect(header.hasSuffix("Step \(step) of 6 ──"), "\(header)")
                #expect(status.contains("(\(step) of 6)"), "\(status)")
            }
            seen.append(header)
        }
        #expect(Set(seen).count == 7)
    }

    /// `--answer connection=denied`: the stubbed service rejects the credentials; the card says
    /// so, nothing is stored, and a retry without it connects.
    @Test func carrierWaveRefusedCredentialsThroughTheCLI() throws {
        let cli = try CLI("carrierwave")
        try cli.run("play", stdin: "launch\nnext\nnext\n")
        let refused = try cli.run(
            ["do", "connect", "username=W1AW", "password=-", "--answer", "connection=denied"], stdin: "pw\n")
        #expect(refused.status == 0)
        #expect(refused.stdout.contains("! qrz did not accept those credentials. Check them and try again."))
        #expect(try cli.json("status").state["accounts"] == nil)
        #expect(try cli.json("show").card?["step"] as? String == "connectQRZ")
        let retried = try cli.run(["do", "connect", "username=W1AW", "password=-"], stdin: "pw2\n")
        #expect(retried.stdout.contains("More Services Available"))
        #expect(try cli.json("status").state["accounts"] as? [String: String] == ["qrz": "W1AW"])
        let badAnswer = try cli.run("launch", "--answer", "connection=maybe")
        #expect(badAnswer.status != 0 && badAnswer.stderr.contains("granted, denied, unavailable"))
    }

    @Test func growthsPreviousButtonIsBack() throws {
        let cli = try CLI("growth")
        try cli.run("play", stdin: "do completeOnboarding\nvisit dashboard\nnext\nnext\n")
        let back = try cli.run("do", "previous")
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try cli.json("show").card?["step"] as? String == "logSession")
        #expect(try cli.run("journal").stdout.contains("app_tour/progress back:"))
    }

    @Test func lockedInAppsAreCountedOnceAndAnEmptySelectionIsRefused() throws {
        let cli = try CLI("lockedin")
        try cli.run("play", stdin: "launch\nnext\n")
        let empty = try cli.run("do", "chooseApps", "apps=,,")
        #expect(empty.status == 1)
        #expect(
            empty.stderr
                == """
                lockedin: refused 'chooseApps' (onboarding step appSelection): apps needs at least one \
                name, comma-separated (A,B,...). Allowed now: chooseApps, back.\n
                """
        )
        let twice = try cli.json("do", "chooseApps", "apps=Instagram,Instagram, instagram,TikTok")
        #expect(twice.card?["details"] as? [String] == ["2 apps selected"])
    }

    /// A refused command on a database path that does not exist leaves nothing behind, at an
    /// explicit path and at the default location alike.
    @Test func aRefusalOnANewDatabaseLeavesNothingBehind() throws {
        var cli = try CLI("lockedin")
        let refused = try cli.run("do", "fly")
        #expect(refused.status == 1)
        #expect(!FileManager.default.fileExists(atPath: cli.database))
        cli.environment["ONBOARDING_DB"] = nil
        cli.environment["XDG_DATA_HOME"] = cli.folder.appendingPathComponent("xdg").path
        #expect(try cli.run("do", "next").status == 1)
        #expect(try cli.run("status").status == 0)
        #expect(!FileManager.default.fileExists(atPath: cli.folder.appendingPathComponent("xdg").path))
        #expect(try cli.run("launch").status == 0)
        #expect(
            FileManager.default.fileExists(
                atPath: cli.folder.appendingPathComponent("xdg/onboarding/lockedin.sqlite").path))
    }
}
