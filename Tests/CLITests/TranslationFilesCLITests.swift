import Foundation
import TestThreads
import Testing
import TourFixtures

/// `catalog strings --format xliff|xcstrings` and `--import` through the products' executables:
/// a file goes out, is translated here as a tool would, and comes back as the table file the
/// product compiles in.
@Suite("Translation files through the CLI", .ownThread)
struct TranslationFilesCLITests {
    @Test(arguments: ["finite", "lockedin", "carrierwave", "growth", "moodtracker"])
    func anXLIFFFileGoesOutIsTranslatedAndComesBackAsTheTableFile(product: String) throws {
        let cli = try CLI(product)
        let exported = try cli.run("catalog", "strings", "fr", "--format", "xliff")
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout.contains(#"srcLang="en" trgLang="fr""#))
        let texts = try #require(
            try JSONSerialization.jsonObject(with: Data(cli.run("--json", "catalog", "strings").stdout.utf8))
                as? [String: String])
        let ids = Array(texts.keys)
        #expect(exported.stdout.components(separatedBy: "<unit id=").count - 1 == ids.count)

        let translated: String = cli.folder.path + "/fr.xliff"
        try TranslationTool.fill(exported.stdout, prefix: "FR ").write(
            toFile: translated, atomically: true, encoding: .utf8)
        let out: String = cli.folder.path + "/strings"
        let imported = try cli.run("catalog", "strings", "--import", translated, "--out", out)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(
            imported.stdout.contains("fr: \(ids.count) added, 0 changed, 0 unchanged; wrote \(out)/fr.json"),
            "\(imported.stdout)")
        let table = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/fr.json")))
                as? [String: Any])
        #expect(table["locale"] as? String == "fr")
        let strings = try #require(table["strings"] as? [String: [String: String]])
        #expect(Set(strings.keys) == Set(ids))
        for (id, entry) in strings {
            #expect(entry["text"] == "FR " + (entry["source"] ?? ""), "\(id)")
        }
        // The table written is canonical: imported again, it comes out byte for byte.
        let again = try cli.run("catalog", "strings", "--import", out + "/fr.json")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == (try String(contentsOfFile: out + "/fr.json", encoding: .utf8)))
    }

    @Test func aStringCatalogComesInOnStandardInputAndSeveralLocalesNeedAFolder() throws {
        let cli = try CLI("moodtracker")
        let exported = try cli.run("catalog", "strings", "--format", "xcstrings")
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(
            exported.stdout.contains(#""sourceLanguage" : "en""#) && exported.stdout.contains(#""pt-BR" : {"#)
        )
        // Unchanged, Mood Tracker's own Portuguese comes back as the shipped table.
        let shipped = try String(
            contentsOfFile: GrammarTests.packageRoot + "/Apps/MoodTracker/Onboarding/strings/pt-BR.json",
            encoding: .utf8)
        let back = try cli.run("catalog", "strings", "--import", "-", stdin: exported.stdout)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stdout == shipped)
        #expect(back.stderr.contains("pt-BR: 0 added, 0 changed, 17 unchanged"), "\(back.stderr)")

        // A second locale in the same file: one table each, so a folder is needed.
        var root = try #require(
            try JSONSerialization.jsonObject(with: Data(exported.stdout.utf8)) as? [String: Any])
        var texts = try #require(root["strings"] as? [String: [String: Any]])
        var skip = try #require(texts["tutorial.viewHistory.action.skip.label"])
        var localizations = try #require(skip["localizations"] as? [String: Any])
        localizations["de"] = ["stringUnit": ["state": "translated", "value": "Überspringen"]]
        skip["localizations"] = localizations
        texts["tutorial.viewHistory.action.skip.label"] = skip
        root["strings"] = texts
        let two = String(decoding: try JSONSerialization.data(withJSONObject: root), as: UTF8.self)
        let refused = try cli.run("catalog", "strings", "--import", "-", stdin: two)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("translates into de, pt-BR: give --out DIR"), "\(refused.stderr)")
    }

    @Test func aWrongTranslationRefusesTheFileInOneLineAndWritesNothing() throws {
        let cli = try CLI("moodtracker")
        let file: String = cli.folder.path + "/fr.xliff"
        let filled = TranslationTool.fill(
            try cli.run("catalog", "strings", "fr", "--format", "xliff").stdout, prefix: "FR "
        )
        .replacingOccurrences(
            of: "<target>FR Step {step} of {total}</target>", with: "<target>Étape {étape}</target>")
        try filled.write(toFile: file, atomically: true, encoding: .utf8)
        let out: String = cli.folder.path + "/strings"
        let refused = try cli.run("catalog", "strings", "--import", file, "--out", out)
        #expect(refused.status == 1)
        let lines = refused.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(refused.stderr)")
        #expect(
            refused.stderr.contains(
                "the fr text of progress.step leaves out {step}, {total} and has {étape}")
        )
        #expect(refused.stderr.contains("nothing was written") && !refused.stderr.contains("USAGE"))
        #expect(!FileManager.default.fileExists(atPath: out), "nothing was written")
        let json = try cli.run("--json", "catalog", "strings", "--import", file, "--out", out)
        #expect(json.stdout.contains(#""code":"translations""#))
        // Usage mistakes are usage errors (exit 2) with what is allowed.
        #expect(try cli.run("catalog", "strings", "--format", "xliff").status == 2)
        #expect(
            try cli.run("catalog", "strings", "en", "--format", "xliff").stderr.contains(
                "the catalog's own language"))
        #expect(try cli.run("catalog", "strings", "fr", "--format", "po").status == 2)
    }
}
