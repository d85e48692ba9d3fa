import CatalogDocuments
import Foundation
import Testing
import TourCodec
import TourCore
import TourFixtures
import TourRuntime

/// Translations out and back in through the formats translators' tools read (XLIFF 2.0, Xcode's
/// String Catalog, the table file), for every product's catalog: exported, translated here as a
/// tool would, imported, and exported again unchanged.
@Suite("Translation files")
struct TranslationFileTests {
    static let catalogs: [TourCatalog] = registeredProducts.map {
        $0.make(RunEnvironment(databasePath: "/dev/null", offline: true)).catalog
    }

    static let german = LocaleTag(known: "de")

    /// What the test's "translator" writes: the source marked, placeholders and plural forms kept
    /// (German counts as English does: one and other).
    static func translated(_ source: String) -> String { "[de] " + source }

    @Test(arguments: catalogs.map(\.app))
    func anXLIFFFileTranslatedByAToolComesBackIntoEveryProductsCatalog(app: String) throws {
        let catalog = try #require(Self.catalogs.first { $0.app == app })
        let exported = try catalog.translationFile(.xliff, locales: [Self.german])
        let read = try TranslationFile(text: exported)
        #expect(read.format == .xliff && read.sourceLocale == catalog.strings.source)
        let entries = try #require(read.locales[Self.german])
        #expect(entries.count == catalog.sourceTexts.count)
        for (id, text) in catalog.sourceTexts {
            #expect(entries[id] == .init(source: text, text: "", isDone: false), "\(app) \(id)")
        }
        // Nothing translated yet: nothing changes.
        let untouched = try TranslationImport(read, into: catalog)
        #expect(!untouched.changesAnything)
        #expect(untouched.reports.first?.untranslated.count == catalog.sourceTexts.count)

        let filled = TranslationTool.fill(exported, prefix: "[de] ")
        let imported = try TranslationImport(try TranslationFile(text: filled), into: catalog)
        let report = try #require(imported.reports.first)
        #expect(report.added.count == catalog.sourceTexts.count, "\(report.summary)")
        #expect(report.changed.isEmpty && report.madeFromAnotherSource.isEmpty && report.notInCatalog.isEmpty)
        var after = catalog
        after.strings = imported.strings
        for (id, text) in catalog.sourceTexts {
            #expect(after.strings.tables[Self.german]?[id] == .init(Self.translated(text), source: text))
        }
        #expect(
            after.translationProblems.filter { $0.path.contains(".de.") }.isEmpty,
            "\(after.translationProblems)")
        // Exported again, every unit is translated and the same file imports as no change.
        let again = try after.translationFile(.xliff, locales: [Self.german])
        #expect(!again.contains(#"state="initial""#))
        #expect(try !TranslationImport(try TranslationFile(text: again), into: after).changesAnything)
        #expect(try TranslationImport(try TranslationFile(text: again), into: after).strings == after.strings)
    }

    @Test(arguments: catalogs.map(\.app))
    func aStringCatalogTranslatedByAToolComesBackAsTheXLIFFDoes(app: String) throws {
        let catalog = try #require(Self.catalogs.first { $0.app == app })
        let exported = try catalog.translationFile(.xcstrings, locales: [Self.german])
        guard case .object(var root) = try TourValue(jsonText: exported),
            case .object(var texts)? = root["strings"]
        else {
            Issue.record("not a String Catalog")
            return
        }
        #expect(root["sourceLanguage"] == .string(catalog.strings.source.rawValue))
        #expect(Set(texts.keys) == Set(catalog.sourceTexts.map(\.id)))
        for (id, text) in catalog.sourceTexts {
            guard case .object(var entry)? = texts[id],
                case .object(var localizations)? = entry["localizations"]
            else {
                Issue.record("\(id) has no localizations")
                continue
            }
            #expect(localizations["de"] == ["stringUnit": ["state": "new", "value": ""]])
            localizations["de"] = [
                "stringUnit": ["state": "translated", "value": .string(Self.translated(text))]
            ]
            entry["localizations"] = .object(localizations)
            texts[id] = .object(entry)
        }
        root["strings"] = .object(texts)
        let imported = try TranslationImport(
            try TranslationFile(text: try TourValue.object(root).jsonText()), into: catalog)
        let viaXLIFF = try TranslationImport(
            try TranslationFile(
                text: TranslationTool.fill(
                    try catalog.translationFile(.xliff, locales: [Self.german]), prefix: "[de] ")),
            into: catalog)
        #expect(imported.strings == viaXLIFF.strings)
        #expect(imported.reports.first?.added.count == catalog.sourceTexts.count)
    }

    @Test func mood_trackersOwnPortugueseTableGoesOutAndComesBackUnchangedInEveryFormat() throws {
        let catalog = try #require(Self.catalogs.first { $0.app == "moodtracker" })
        let portuguese = LocaleTag("pt-BR")!
        let table = try #require(catalog.strings.tables[portuguese])
        #expect(!table.isEmpty)
        for format in TranslationFile.Format.allCases {
            let text = try catalog.translationFile(format, locales: [portuguese])
            let file = try TranslationFile(text: text)
            #expect(file.format == format)
            let imported = try TranslationImport(file, into: catalog)
            #expect(!imported.changesAnything, "\(format): \(imported.reports.map(\.summary))")
            #expect(imported.strings == catalog.strings, "\(format)")
        }
        // A String Catalog of every locale holds the table too.
        let all = try catalog.translationFile(.xcstrings, locales: catalog.strings.locales)
        #expect(try TranslationFile(text: all).locales[portuguese]?.count == catalog.sourceTexts.count)
    }

    /// Out of date stays out of date until a translator says otherwise: the file marks it for
    /// review with the text it was made from, and an import of the file untouched changes nothing.
    @Test func aTranslationOfAnEarlierSourceStaysOutOfDateUntilTheTranslatorConfirmsIt() throws {
        var catalog = try #require(Self.catalogs.first { $0.app == "moodtracker" })
        let portuguese = LocaleTag("pt-BR")!
        let id = "tutorial.allSet.title"
        let before = try #require(catalog.text(id))
        let replaced = catalog.setText(id, to: "All done!")
        #expect(replaced)
        let exported = try catalog.translationFile(.xliff, locales: [portuguese])
        #expect(exported.contains(#"<note category="translated-from">\#(before)</note>"#))
        let untouched = try TranslationImport(try TranslationFile(text: exported), into: catalog)
        #expect(!untouched.changesAnything)
        var after = catalog
        after.strings = untouched.strings
        #expect(after.translationProblems.contains { $0.kind == .staleTranslation && $0.path.hasSuffix(id) })

        // The translator confirms the unit (state translated): now it translates the new text.
        let unit = try #require(exported.range(of: #"<unit id="\#(id)">"#))
        var confirmed = exported
        let state = try #require(
            confirmed.range(of: #"state="initial""#, range: unit.upperBound..<confirmed.endIndex))
        confirmed.replaceSubrange(state, with: #"state="translated""#)
        let imported = try TranslationImport(try TranslationFile(text: confirmed), into: catalog)
        #expect(imported.reports.first?.changed == [id])
        #expect(imported.strings.tables[portuguese]?[id]?.source == "All done!")

        // A String Catalog marks it needs_review, and reads back the same way.
        let xcstrings = try catalog.translationFile(.xcstrings, locales: [portuguese])
        #expect(xcstrings.contains(#""state" : "needs_review""#))
        #expect(try !TranslationImport(try TranslationFile(text: xcstrings), into: catalog).changesAnything)
    }

    @Test func textsWithMarkupCharactersAndLineEndsComeBackAsTheyWere() throws {
        var catalog = try #require(Self.catalogs.first { $0.app == "growth" })
        let id = try #require(catalog.sourceTexts.first { !$0.id.hasPrefix("progress.") }?.id)
        let awkward = "Tom & Jerry's <b>\"best\"</b>\r\nline two\ttab ]]> 🎉"
        let replaced = catalog.setText(id, to: awkward)
        #expect(replaced)
        let exported = try catalog.translationFile(.xliff, locales: [Self.german])
        let filled = TranslationTool.fill(exported, prefix: "[de] ")
        let imported = try TranslationImport(try TranslationFile(text: filled), into: catalog)
        #expect(imported.strings.tables[Self.german]?[id] == .init(Self.translated(awkward), source: awkward))
    }

    // MARK: - Refused

    @Test func aTranslationThatWouldShowWronglyRefusesTheWholeFileAndSaysWhichAndWhy() throws {
        let catalog = try #require(Self.catalogs.first { $0.app == "moodtracker" })
        var filled = TranslationTool.fill(
            try catalog.translationFile(.xliff, locales: [Self.german]), prefix: "[de] ")
        filled = filled.replacingOccurrences(
            of: "<target>[de] Step {step} of {total}</target>", with: "<target>Schritt {step}</target>")
        filled = filled.replacingOccurrences(
            of: "<target>[de] All {#total|step|steps} done</target>",
            with: "<target>{#total|Schritt}</target>")
        #expect(throws: TranslationFileError.self) {
            try TranslationImport(try TranslationFile(text: filled), into: catalog)
        }
        do {
            _ = try TranslationImport(try TranslationFile(text: filled), into: catalog)
        } catch {
            #expect(error.problems.count == 2, "\(error.problems)")
            #expect(error.problems.contains { $0.contains("progress.step") && $0.contains("{total}") })
            #expect(
                error.problems.contains { $0.contains("progress.finale") && $0.contains("2 (one|other)") })
        }
    }

    @Test func filesThatAreNotTranslationsOfThisCatalogAreRefusedWithWhatIsAllowed() throws {
        let catalog = try #require(Self.catalogs.first { $0.app == "finite" })
        let exported = try catalog.translationFile(.xliff, locales: [Self.german])
        func refusal(_ text: String) -> String {
            do {
                _ = try TranslationImport(try TranslationFile(text: text), into: catalog)
                return "accepted"
            } catch {
                return error.description
            }
        }
        #expect(refusal("hello").contains("not a translation file"))
        #expect(refusal(#"{"a": 1}"#).contains("not a translation file"))
        #expect(
            refusal(exported.replacingOccurrences(of: #"version="2.0""#, with: #"version="1.2""#)).contains(
                "XLIFF 1.2 is not read"))
        #expect(
            refusal(exported.replacingOccurrences(of: #"srcLang="en""#, with: #"srcLang="fr""#)).contains(
                "translates from fr"))
        #expect(
            refusal(exported.replacingOccurrences(of: #"trgLang="de""#, with: #"trgLang="en""#)).contains(
                "own language"))
        #expect(refusal(exported.replacingOccurrences(of: "</xliff>", with: "")).contains("never closed"))
        let inline = exported.replacingOccurrences(
            of: "</source>\n", with: "</source>\n        <target>a <ph id=\"1\"/> b</target>\n")
        #expect(refusal(inline).contains("inline markup"))
        // Entities cannot be defined, so none expands (a "billion laughs") or reads a file.
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE xliff [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
            <xliff version="2.0" srcLang="en" trgLang="de"><file id="f"><unit \
            id="x"><segment><source>&b;</source></segment></unit></file></xliff>
            """
        #expect(refusal(laughs).contains("document type declaration is not read"))
        let external = exported.replacingOccurrences(
            of: "<source>", with: "<source>&xxe;", options: [], range: nil)
        #expect(refusal(external).contains("&xxe; is not read"))
        let deep =
            "<xliff version=\"2.0\" srcLang=\"en\" trgLang=\"de\">" + String(repeating: "<group>", count: 40)
        #expect(refusal(deep).contains("deeper than 32"))
        #expect(
            refusal(String(repeating: " ", count: TranslationFile.maximumBytes) + "{}").contains("at most"))
        let variations = """
            {"sourceLanguage": "en", "strings": {"progress.step": {"localizations": {"de": {"variations": \
            {"plural": {}}}}}}}
            """
        #expect(refusal(variations).contains("variations"))
        // An id the catalog does not have is left out and named, not refused.
        let extra = exported.replacingOccurrences(
            of: "  </file>",
            with:
                #"    <unit id="gone.step.title"><segment state="translated"><source>Old</source>"#
                + #"<target>Alt</target></segment></unit>\#n  </file>"#
        )
        let imported = try TranslationImport(try TranslationFile(text: extra), into: catalog)
        #expect(imported.reports.first?.notInCatalog == ["gone.step.title"])
        #expect(imported.strings.tables[Self.german]?["gone.step.title"] == nil)
    }
}
