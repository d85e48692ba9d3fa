import Foundation
import Testing

/// The accessibility settings through the products' CLIs, as a device reports them
/// (`--context KEY=VALUE`, Docs/Accessibility.md).
@Suite("Accessibility settings through the CLI")
struct AccessibilityCLITests {
    /// Finite's walkthrough up to its closing card ("You're Ready", 2.5 s by itself), each command
    /// with `settings`.
    static func finiteToTheClosingCard(_ settings: [String]) throws -> CLI {
        let cli = try CLI("finite")
        let context = settings.flatMap { ["--context", $0] }
        for command in [
            ["do", "setBirthDate", "date=1990-05-01"], ["launch"], ["wait", "1.5"], ["do", "next"], ["do", "tapCurrentWeek"],
            ["do", "swipeToChapters"], ["do", "next"], ["do", "savePhase", "name=High school", "startYear=2004"],
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
        let saved = try cli.run("--context", "hapticsEnabled=false", "--context", "reducedMotion=true", "do", "saveMark", "note=first job")
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
        #expect(!FileManager.default.fileExists(atPath: cli.database))
    }

    /// The report counts each run under the settings it started with.
    @Test func theReportSplitsEachFunnelByTheSettingsItsRunsStartedWith() throws {
        let cli = try CLI("moodtracker")
        for (user, settings) in [("ann", ["voiceOver=true"]), ("bob", []), ("cy", []), ("di", ["voiceOver=true", "hapticsEnabled=false"])] {
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
        let document = try #require(try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
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
        let refused = try cli.run("report", "--by", "accessibility", "--html", cli.folder.appendingPathComponent("r.html").path)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--by accessibility is text or --json"))
        let unknown = try cli.run("report", "--by", "voiceover")
        #expect(unknown.stderr.contains("flow, variant or accessibility"))
    }
}
