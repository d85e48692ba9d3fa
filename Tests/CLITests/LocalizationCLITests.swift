import Foundation
import TestThreads
import Testing
import TourFixtures

/// Localised cards through the products' executables (Docs/Localisation.md): Mood Tracker ships
/// Brazilian Portuguese; the locale comes from `--locale` or the POSIX environment.
@Suite("Localised cards through the CLI", .ownThread)
struct LocalizationCLITests {
    /// Mood Tracker's pt-BR table as shipped, text by id.
    static func portuguese() throws -> [String: String] {
        let path = GrammarTests.packageRoot + "/Apps/MoodTracker/Onboarding/strings/pt-BR.json"
        let file = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
                as? [String: Any])
        let strings = try #require(file["strings"] as? [String: [String: String]])
        return strings.compactMapValues { $0["text"] }
    }

    @Test func moodTrackersWholeTutorialReadsInBrazilianPortuguese() throws {
        let pt = try Self.portuguese()
        let cli = try CLI("moodtracker")
        let played = try cli.run("--locale", "pt-BR", "play", stdin: "launch\nwait 1\nnext\nnext\nnext\n")
        #expect(played.status == 0, "\(played.stderr)")
        let out = played.stdout
        for id in [
            "tutorial.swipeToSelect.title", "tutorial.swipeToSelect.body", "tutorial.swipeToSelect.detail1",
            "tutorial.swipeToSelect.detail3", "tutorial.viewHistory.title", "tutorial.viewHistory.body",
            "tutorial.allSet.title", "tutorial.allSet.body",
        ] {
            #expect(out.contains(try #require(pt[id])), "\(id) missing from:\n\(out)")
        }
        #expect(out.contains("Passo 1 de 3") && out.contains("Passo 3 de 3"))
        #expect(
            out.contains("next [Próximo]") && out.contains("skip [Pular tutorial]")
                && out.contains("next [Começar]"))
        for english in ["Swipe to Select", "View Your History", "You're All Set!", "Step 1 of 3", "[Next]"] {
            #expect(!out.contains(english), "\(english) in a pt-BR run")
        }
        // The run is the same run in any language: the journal is the English one's, row for row.
        let english = try CLI("moodtracker")
        #expect(try english.run("play", stdin: "launch\nwait 1\nnext\nnext\nnext\n").status == 0)
        let rows =
            """
            SELECT time, flow, step, event, outcome, effects_json, facts_json, catalog_fingerprint FROM \
            journal ORDER BY id;
            """
        let journal = try CLI.sqlite(cli.database, rows)
        #expect(journal == (try CLI.sqlite(english.database, rows)))
        #expect(journal.split(separator: "\n").count >= 5, "\(journal)")
        let status = try cli.json("status")
        #expect((status.flow("tutorial")?["status"] as? String) == "completed")
    }

    @Test func theEnvironmentPicksTheLocaleInPOSIXOrderAndTheOptionWins() throws {
        let pt = try Self.portuguese()
        let title = try #require(pt["tutorial.swipeToSelect.title"])
        var cli = try CLI("moodtracker")
        try cli.run("launch")
        try cli.run("wait", "1")
        func shown(_ variables: [String: String], _ arguments: String...) throws -> String {
            var run = cli
            for (name, value) in variables { run.environment[name] = value }
            let result = try run.run(["show"] + arguments)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout
        }
        #expect(try shown(["LANG": "pt_BR.UTF-8"]).contains(title))
        #expect(
            try shown(["LANG": "pt_BR.UTF-8", "LC_ALL": "C.UTF-8"]).contains("Swipe to Select"),
            "LC_ALL=C asks for the source")
        #expect(try shown(["LANG": "en_US.UTF-8", "LC_MESSAGES": "pt_BR.UTF-8"]).contains(title))
        #expect(
            try shown(["LANG": "klingon"]).contains("Swipe to Select"),
            "a LANG that is not a tag asks for none")
        cli.environment["LANG"] = "pt_BR.UTF-8"
        let json = try cli.json("show")
        #expect(json.card?["title"] as? String == title)
        // The count as the user reads it, for a UI that shows the JSON's card.
        #expect(json.card?["progressText"] as? String == "Passo 1 de 3")
        cli.environment["LANG"] = "en_US.UTF-8"
        #expect(try cli.json("show").card?["progressText"] as? String == "Step 1 of 3")
        cli.environment["LANG"] = "pt_BR.UTF-8"
        #expect(
            (json.card?["labels"] as? [String: String])?["next"]
                == pt["tutorial.swipeToSelect.action.next.label"])
        // The option wins, and the file keeps it as a phone keeps its language: later commands
        // without it show it, whatever the environment says, until another is asked for.
        #expect(try shown(["LANG": "pt_BR.UTF-8"], "--locale", "en").contains("Swipe to Select"))
        #expect(try shown(["LANG": "pt_BR.UTF-8"]).contains("Swipe to Select"), "--locale en was not kept")
        #expect(try shown(["LANG": "en_US.UTF-8"], "--locale", "pt-BR").contains(title))
        #expect(try shown(["LANG": "en_US.UTF-8"]).contains(title), "--locale pt-BR was not kept")
    }

    @Test func aLocaleWithoutTextsFallsBackAndSaysSoOnceAndABadTagIsRefused() throws {
        let cli = try CLI("moodtracker")
        let japanese = try cli.run("--locale", "ja", "launch")
        #expect(japanese.status == 0)
        #expect(japanese.stderr.contains("no ja texts; showing en (texts: en, pt-BR)"), "\(japanese.stderr)")
        let shown = try cli.run("wait", "1", "--locale", "pt-PT")
        #expect(shown.stdout.contains("Swipe to Select"), "pt-PT falls back to pt, then en: no pt table")
        #expect(shown.stderr.contains("no pt-PT texts"), "\(shown.stderr)")

        let fresh = try CLI("moodtracker")
        for bad in ["pt_", "english", "pt-BR-extra", ""] {
            let refused = try fresh.run("--locale", bad, "launch")
            #expect(refused.status == 2, "\(bad)")
            #expect(
                refused.stderr.contains("--locale takes a language tag such as en, pt or pt-BR"),
                "\(refused.stderr)")
            #expect(refused.stderr.contains("Mood Tracker's texts: en (source), pt-BR."), "\(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: fresh.database), "a refused option writes nothing")

        for product in ["finite", "lockedin", "carrierwave", "growth"] {
            let other = try CLI(product)
            let result = try other.run("--locale", "pt-BR", "launch")
            #expect(result.status == 0, "\(product): \(result.stderr)")
            #expect(
                result.stderr.contains("no pt-BR texts; showing en (texts: en)"),
                "\(product): \(result.stderr)")
        }
    }

    @Test func catalogStringsWritesTheShippedTableAndASkeletonForANewLocale() throws {
        let cli = try CLI("moodtracker")
        let shipped = try String(
            contentsOfFile: GrammarTests.packageRoot + "/Apps/MoodTracker/Onboarding/strings/pt-BR.json",
            encoding: .utf8)
        #expect(
            try cli.run("catalog", "strings", "pt-BR").stdout == shipped,
            "the shipped table is complete and canonical")
        let french = try cli.run("catalog", "strings", "fr")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(french.stdout.utf8)) as? [String: Any])
        let entries = try #require(object["strings"] as? [String: [String: String]])
        let list = try cli.run("catalog", "strings")
        #expect(entries.count == list.stdout.split(separator: "\n").count)
        #expect(entries.values.allSatisfy { $0["text"] == "" && $0["source"] != nil })
        #expect(try cli.run("catalog", "strings", "français").status == 2)
    }

    /// A published document adds or changes translations without a release: `check --catalog`
    /// holds one to the same rules as the build's own.
    @Test func theCheckListsMissingExtraStaleAndBadTranslationsOfADocument() throws {
        let cli = try CLI("moodtracker")
        #expect(try cli.run("check").status == 0, "the shipped catalog's translations are complete")
        var document = try #require(
            try JSONSerialization.jsonObject(with: Data(cli.run("catalog", "show", "--json").stdout.utf8))
                as? [String: Any])
        var strings = try #require(document["strings"] as? [String: Any])
        var tables = try #require(strings["tables"] as? [String: [String: [String: String]]])
        var table = try #require(tables["pt-BR"])
        table["tutorial.allSet.title"] = nil
        table["tutorial.viewHistory.title"]?["source"] = "View History"
        table["tutorial.allSet.bodyy"] = ["source": "x", "text": "y"]
        table["progress.step"]?["text"] = "Passo {step}"
        tables["pt-BR"] = table
        tables["ru"] = [
            "progress.finale": [
                "source": "All {#total|step|steps} done", "text": "Готово: {#total|шаг|шага}",
            ]
        ]
        strings["tables"] = tables
        document["strings"] = strings
        document["version"] = 3
        let path = cli.folder.appendingPathComponent("published.json")
        try JSONSerialization.data(withJSONObject: document).write(to: path)

        let checked = try cli.run("check", "--catalog", path.path)
        #expect(checked.status == 1)
        let out = checked.stdout
        #expect(out.contains("missing_translation") && out.contains("tutorial.allSet.title"), "\(out)")
        #expect(out.contains("stale_translation") && out.contains("translates \"View History\""), "\(out)")
        #expect(
            out.contains("extra_translation") && out.contains("did you mean tutorial.allSet.body?"), "\(out)")
        #expect(out.contains("bad_translation") && out.contains("leaves out {total}"), "\(out)")
        #expect(out.contains("ru counts with 3 (one|few|many)"), "\(out)")

        let json = try cli.run("check", "--catalog", path.path, "--json")
        let problems = try #require(
            (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["problems"]
                as? [[String: Any]])
        let kinds = Set(problems.compactMap { $0["kind"] as? String })
        #expect(
            kinds.isSuperset(of: [
                "missing_translation", "stale_translation", "extra_translation", "bad_translation",
            ]))
    }
}
