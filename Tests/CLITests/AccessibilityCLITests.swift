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
}
