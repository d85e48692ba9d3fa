import Foundation
import TestThreads
import Testing
import TourFixtures

/// The accessibility settings through the products' CLIs, as a device reports them
/// (`--context KEY=VALUE`, Docs/Accessibility.md).
@Suite("Accessibility settings through the CLI", .ownThread)
struct AccessibilityCLITests {
    /// Finite's walkthrough up to its closing card ("You're Ready", 2.5 s by itself), each command
    /// with `settings`.
    static func finiteToTheClosingCard(_ settings: [String]) throws -> CLI {
        let cli = try CLI("finite")
        let context = settings.flatMap { ["--context", $0] }
        for command in [
            ["do", "setBirthDate", "date=1990-05-01"], ["launch"], ["wait", "1.5"], ["do", "next"],
            ["do", "tapCurrentWeek"],
            ["do", "swipeToChapters"], ["do", "next"],
            ["do", "savePhase", "name=High school", "startYear=2004"],
            ["do", "longPressWeek", "week=1200"],
        ] {
            let result = try cli.run(context + command)
            #expect(result.status == 0, "\(command): \(result.stderr)")
        }
        return cli
    }

    @Test func aVoiceOverUserHasTenTimesAsLongOnFinitesClosingCard() throws {
        let sighted = try Self.finiteToTheClosingCard([])
        #expect(try sighted.run("do", "saveMark", "note=first job").stdout.contains("closes by itself"))
        try sighted.run("wait", "2.5")
        #expect(try sighted.run("status").stdout.contains("completed"))

        let listener = try Self.finiteToTheClosingCard(["voiceOver=true"])
        let closing = try listener.run("--context", "voiceOver=true", "do", "saveMark", "note=first job")
        #expect(closing.stdout.contains("closes by itself in 25"), "\(closing.stdout)")
        try listener.run("--context", "voiceOver=true", "wait", "2.5")
        #expect(!(try listener.run("--context", "voiceOver=true", "status").stdout.contains("completed")))
        try listener.run("--context", "voiceOver=true", "wait", "22.5")
        #expect(try listener.run("--context", "voiceOver=true", "status").stdout.contains("completed"))
    }

    @Test func withHapticsOffAndReducedMotionNoHapticPlaysAndTheCelebrationSaysSo() throws {
        let cli = try Self.finiteToTheClosingCard(["hapticsEnabled=false", "reducedMotion=true"])
        let saved = try cli.run(
            "--context", "hapticsEnabled=false", "--context", "reducedMotion=true", "do", "saveMark",
            "note=first job")
        #expect(!saved.stdout.contains("haptic:"), "\(saved.stdout)")
        #expect(saved.stdout.contains("(reduced motion)"), "\(saved.stdout)")

        let plain = try Self.finiteToTheClosingCard([])
        let played = try plain.run("do", "saveMark", "note=first job")
        #expect(played.stdout.contains("haptic:"))
        #expect(!played.stdout.contains("(reduced motion)"))
    }

    @Test func aSettingWithAValueOfTheWrongKindIsRefusedAndChangesNothing() throws {
        let cli = try CLI("moodtracker")
        let refused = try cli.run("--context", "voiceOver=sometimes", "launch")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("voiceOver"))
        #expect(refused.stderr.contains("true or false"))
        // The text size is one of the categories the system has.
        let size = try cli.run("--context", "textSize=huge", "launch")
        #expect(size.status == 2)
        #expect(size.stderr.contains("'textSize' takes one of extraSmall, small"), "\(size.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.database))
        #expect(try cli.run("--context", "textSize=accessibilityLarge", "status").status == 0)
    }

    /// The report counts each run under the settings it started with. Four people take turns on one
    /// install; the install remembers the settings it was last told (Ann's VoiceOver holds for Bob
    /// until he turns it off), so each says what the device is set to.
    @Test func theReportSplitsEachFunnelByTheSettingsItsRunsStartedWith() throws {
        let cli = try CLI("moodtracker")
        for (user, settings) in [
            ("ann", ["voiceOver=true"]), ("bob", ["voiceOver=false"]), ("cy", []),
            ("di", ["voiceOver=true", "hapticsEnabled=false"]),
        ] {
            let context = settings.flatMap { ["--context", $0] }
            for command in [["launch"], ["wait", "1"], ["do", "next"]] {
                let result = try cli.run(["--user", user] + context + command)
                #expect(result.status == 0, "\(user) \(command): \(result.stderr)")
            }
        }
        // Bob turns VoiceOver on midway: his run still counts as started without it.
        try cli.run("--user", "bob", "--context", "voiceOver=true", "do", "next")

        let report = try cli.run("--json", "report", "--by", "accessibility")
        #expect(report.status == 0, "\(report.stderr)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
        let groups = try #require(document["groups"] as? [[String: Any]])
        var started: [String: Int] = [:]
        for group in groups {
            let flows = try #require(group["flows"] as? [[String: Any]])
            started[try #require(group["settings"] as? String)] =
                flows.first { $0["flow"] as? String == "tutorial" }?["started"] as? Int
        }
        #expect(started == ["VoiceOver": 1, "standard": 2, "VoiceOver, haptics off": 1])

        let text = try cli.run("report", "--by", "accessibility")
        #expect(text.stdout.contains("── VoiceOver ──"))
        #expect(text.stdout.contains("── standard ──"))
        let refused = try cli.run(
            "report", "--by", "accessibility", "--html", cli.folder.appendingPathComponent("r.html").path)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--by accessibility is text or --json"))
        let unknown = try cli.run("report", "--by", "voiceover")
        #expect(unknown.stderr.contains("flow, variant or accessibility"))
    }
    /// A device fact given once holds until the app reports otherwise: VoiceOver given at `launch`
    /// still holds when Finite's delayed walkthrough starts in a later command and when its closing
    /// card would close by itself; the network (`online`, declared momentary) is not remembered.
    @Test func aDeviceFactGivenAtLaunchHoldsInLaterCommandsUntilChanged() throws {
        let listener = try CLI("finite")
        try listener.run("do", "setBirthDate", "date=1990-05-01")
        #expect(try listener.run("--context", "voiceOver=true", "launch").status == 0)
        for line in [
            ["wait", "1.5"], ["do", "next"], ["do", "tapCurrentWeek"], ["do", "swipeToChapters"],
            ["do", "next"], ["do", "dismissPhase"], ["do", "longPressWeek", "week=1200"],
        ] {
            let result = try listener.run(line)
            #expect(result.status == 0, "\(line): \(result.stderr)")
        }
        let closing = try listener.run("do", "saveMark", "note=first job")
        #expect(closing.stdout.contains("closes by itself in 25"), "VoiceOver remembered: \(closing.stdout)")
        // Without --context, later commands still see it: 2.5 s is not enough.
        try listener.run("wait", "2.5")
        #expect(!(try listener.run("status").stdout.contains("completed")))
        // Reported otherwise, the install remembers the new answer (the card's deadline, set when
        // it was entered, stands).
        try listener.run("--context", "voiceOver=false", "wait", "22.5")
        #expect(try listener.run("status").stdout.contains("completed"))
        #expect(
            try CLI.sqlite(
                listener.database, "SELECT value_json FROM device_state WHERE key = 'fact.voiceOver';")
                == "false\n")

        let carrierWave = try CLI("carrierwave")
        try carrierWave.run("--context", "online=false", "launch")
        let facts = try CLI.sqlite(carrierWave.database, "SELECT key FROM device_state;")
        #expect(!facts.contains("online"), "the network now is not remembered: \(facts)")
        let voice = try CLI("moodtracker")
        try voice.run("--context", "voiceOver=true", "launch")
        #expect(
            try CLI.sqlite(voice.database, "SELECT key, value_json FROM device_state;").contains(
                "fact.voiceOver|true"))
    }
}
