import CatalogDocuments
import Foundation
import Testing
import TourFixtures

@testable import TourCore

/// Catalog texts in other locales (Docs/Localisation.md): tags and their fallback chain, plural
/// rules, the localised card, and the check of translations.
@Suite("Localised catalogs")
struct LocalizationTests {
    @Test func localeTagsAreReadFromWhatPeopleAndSystemsWrite() {
        #expect(LocaleTag("pt_BR.UTF-8")?.rawValue == "pt-BR")
        #expect(LocaleTag("PT-br")?.rawValue == "pt-BR")
        #expect(LocaleTag("zh_hant_tw")?.rawValue == "zh-Hant-TW")
        #expect(LocaleTag("es-419")?.rawValue == "es-419")
        #expect(LocaleTag("de_DE@euro")?.rawValue == "de-DE")
        for bad in ["", "p", "english", "pt-BR-x", "pt--BR", "1a", "pt-B"] {
            #expect(LocaleTag(bad) == nil, "\(bad)")
        }
        #expect(LocaleTag("zh-Hant-TW")?.fallbacks.map(\.rawValue) == ["zh-Hant-TW", "zh-Hant", "zh"])
        #expect(LocaleTag("pt-BR")?.chain(endingWith: .english).map(\.rawValue) == ["pt-BR", "pt", "en"])
        #expect(LocaleTag("en-GB")?.chain(endingWith: .english).map(\.rawValue) == ["en-GB", "en"])
    }

    @Test func theEnvironmentsLocaleIsTheFirstVariableSetAndCOrPOSIXAskForNone() {
        #expect(LocaleTag.fromEnvironment(["pt_BR.UTF-8", nil, "en_US.UTF-8"])?.rawValue == "pt-BR")
        #expect(LocaleTag.fromEnvironment([nil, "", "de_DE.UTF-8"])?.rawValue == "de-DE")
        #expect(LocaleTag.fromEnvironment(["C.UTF-8", nil, "pt_BR"]) == nil)
        #expect(LocaleTag.fromEnvironment(["POSIX"]) == nil)
        #expect(LocaleTag.fromEnvironment([nil, nil, nil]) == nil)
    }

    @Test(arguments: [
        ("en", [0: "other", 1: "one", 2: "other", 21: "other"]),
        ("pt-BR", [0: "one", 1: "one", 2: "other"]),
        ("pt-PT", [0: "other", 1: "one", 2: "other"]),
        ("fr", [0: "one", 1: "one", 2: "other"]),
        (
            "ru",
            [
                1: "one", 2: "few", 5: "many", 11: "many", 21: "one", 22: "few", 25: "many", 111: "many",
                112: "many",
            ]
        ),
        ("pl", [1: "one", 2: "few", 5: "many", 12: "many", 21: "many", 22: "few"]),
        ("cs", [1: "one", 3: "few", 5: "other"]),
        ("ja", [0: "other", 1: "other", 7: "other"]),
        ("ar", [0: "zero", 1: "one", 2: "two", 3: "few", 11: "many", 100: "other", 103: "few"]),
    ])
    func pluralCategoriesFollowCLDR(locale: String, expected: [Int: String]) throws {
        let rules = PluralRules(try #require(LocaleTag(locale)))
        for (count, category) in expected {
            #expect(rules.category(count).rawValue == category, "\(locale) \(count)")
            #expect(rules.categories.contains(rules.category(count)))
        }
    }

    // MARK: - A localised catalog

    static let flow = FlowDefinition(
        "intro", name: "Intro",
        steps: [
            StepDefinition(
                "pick",
                StepContent(title: "Pick apps", body: "{#apps|app|apps} chosen", hint: "Tap to choose"),
                actions: [
                    StepAction("choose", fills: ["apps"], requiredParameters: ["apps"], outcome: .stay),
                    StepAction(
                        "confirm", outcome: .advance,
                        preconditions: [.condition(.not(.always), message: "Not yet")]),
                    .next(label: "Next"),
                ]),
            StepDefinition(
                "done", StepContent(title: "Done", body: "All set"), actions: [.next(label: "Finish")]),
        ],
        fields: [FieldSpec("apps", .list)], triggers: [Trigger(.launch)])

    static func table(_ texts: [String: String], of catalog: TourCatalog) -> CatalogStrings.Table {
        let sources = Dictionary(catalog.sourceTexts.map { ($0.id, $0.text) }) { first, _ in first }
        return texts.reduce(into: [:]) { table, entry in
            table[entry.key] = CatalogStrings.Translation(entry.value, source: sources[entry.key] ?? "?")
        }
    }

    static var catalog: TourCatalog {
        var catalog = TourCatalog(app: "test", flows: [flow])
        catalog.strings.tables[LocaleTag(known: "pt")] = table(
            [
                "intro.name": "Introdução", "intro.pick.title": "Escolha os apps",
                "intro.pick.body": "{#apps|app escolhido|apps escolhidos}",
                "intro.pick.action.next.label": "Próximo",
                "intro.pick.action.confirm.refusal1": "Ainda não",
                "progress.step": "Passo {step} de {total}",
            ], of: catalog)
        catalog.strings.tables[LocaleTag(known: "ru")] = table(
            [
                "intro.pick.body":
                    "Выбрано: {#apps|приложение|приложения|приложений}"
            ], of: catalog)
        return catalog
    }

    @Test func aLocalisedCardShowsTheTablesTextsFallsBackByTheChainAndCountsByTheLocalesRules() throws {
        let catalog = Self.catalog
        var driver = Driver(TourEngine(catalog: catalog.localized(to: LocaleTag("pt-BR")!)))
        try driver.send(.appLaunched(version: "1.0"))
        var card = try #require(driver.card)
        #expect(card.title == "Escolha os apps")
        #expect(card.hint == "Tap to choose", "no pt text: the source's")
        #expect(card.actions.first { $0.name == "next" }?.label == "Próximo")
        #expect(card.progressText == "Passo 1 de 2")
        #expect(card.body == "0 app escolhido", "Portuguese counts 0 as one")
        do {
            try driver.act("confirm")
            Issue.record("the precondition holds")
        } catch {
            #expect(error.reason == "Ainda não", "a refusal the user reads is translated too")
        }
        try driver.act("choose", ["apps": "a,b,c,d,e"])
        #expect(driver.card?.body == "5 apps escolhidos")

        var russian = Driver(TourEngine(catalog: catalog.localized(to: LocaleTag("ru-RU")!)))
        try russian.send(.appLaunched(version: "1.0"))
        for (apps, text) in [
            (
                "a",
                "1 приложение"
            ), ("a,b", "2 приложения"), ("a,b,c,d,e", "5 приложений"),
        ] {
            try russian.act("choose", ["apps": apps])
            card = try #require(russian.card)
            #expect(card.body == "Выбрано: \(text)")
        }
        #expect(card.title == "Pick apps" && card.progressText == "Step 1 of 2")

        let english = catalog.localized(to: LocaleTag("ja")!)
        #expect(english.locale == .english && english.flows == catalog.flows)
    }

    @Test func aLocalisedCatalogRunsTheSameRunsUnderTheSameFingerprint() throws {
        let catalog = Self.catalog
        let stamp = CatalogFingerprint(known: "f")
        var english = Driver(TourEngine(catalog: catalog, fingerprint: stamp))
        try english.send(.appLaunched(version: "1.0"))
        try english.act("choose", ["apps": "a"])
        let localized = TourEngine(catalog: catalog.localized(to: LocaleTag("pt")!), fingerprint: stamp)
        #expect(
            !localized.needsMigration(english.state), "a user who changes language continues where they were")
        let next = try localized.reduce(
            english.state, .actionPerformed("choose", parameters: ["apps": "a,b"]), at: english.now)
        #expect(next.record.facts.allSatisfy { if case .runMigrated = $0 { false } else { true } })
        #expect(next.state[flow: "intro"].currentStep == "pick")
    }

    // MARK: - The check

    @Test func theCheckNamesMissingExtraStaleAndBadTranslations() throws {
        var catalog = TourCatalog(app: "test", flows: [Self.flow])
        let pt = LocaleTag("pt")!
        var table = Self.table(
            [
                "intro.name": "Introdução", "intro.pick.body": "{#apps|app}",
                "intro.pick.title": "Escolha {name}",
                "intro.pick.titel": "typo",
            ], of: catalog)
        table["intro.done.title"] = .init("Pronto", source: "Finished")
        catalog.strings.tables[pt] = table
        catalog.strings.unreadable["de.json"] = "not a string table: not JSON"
        let problems = catalog.translationProblems
        func kinds(_ id: String) -> [CatalogProblem.Kind] {
            problems.filter { $0.path.hasSuffix(".\(id)") }.map(\.kind)
        }
        #expect(kinds("intro.name") == [])
        #expect(kinds("intro.pick.hint") == [.missingTranslation])
        #expect(kinds("intro.done.title") == [.staleTranslation])
        #expect(kinds("intro.pick.titel") == [.extraTranslation])
        #expect(
            problems.first { $0.path.hasSuffix("titel") }?.detail.contains("did you mean intro.pick.title?")
                == true)
        #expect(kinds("intro.pick.title") == [.badTranslation])
        #expect(kinds("intro.pick.body") == [.badTranslation], "one form where Portuguese has two")
        #expect(problems.contains { $0.kind == .badTranslation && $0.path == "strings/de.json" })
        // Only the bad ones stop a release; the others fall back.
        #expect(
            catalog.problems(declaring: CatalogDeclarations()).map(\.kind).sorted {
                $0.rawValue < $1.rawValue
            }
                == [.badTranslation, .badTranslation, .badTranslation])

        let missing = problems.filter { $0.kind == .missingTranslation }.count
        // Translated (well or not): intro.name, intro.pick.title, intro.pick.body, intro.done.title.
        #expect(missing == catalog.sourceTexts.count - 4, "every text without a pt one: \(missing)")
    }

    // MARK: - Documents

    @Test func theDocumentCarriesTheTablesInFormatThreeAndACatalogWithoutThemKeepsItsForm() throws {
        let plain = TourCatalog(app: "test", flows: [Self.flow])
        let plainDocument = CatalogDocument(plain, declarations: CatalogDeclarations())
        #expect(plainDocument.writtenFormat == 1)
        #expect(try !plainDocument.text().contains("strings"))

        let document = CatalogDocument(Self.catalog, declarations: CatalogDeclarations())
        #expect(document.writtenFormat == 3)
        let read = try CatalogDocument(text: document.text())
        #expect(read.catalog == Self.catalog)
        #expect(try read.text() == document.text())

        let asFormat1 = try document.text().replacingOccurrences(of: "\"format\":3", with: "\"format\":1")
        #expect(throws: CatalogDocumentError.self) { try CatalogDocument(text: asFormat1) }
        let badLocale = try document.text().replacingOccurrences(of: "\"ru\":", with: "\"russian\":")
        #expect {
            try CatalogDocument(text: badLocale)
        } throws: { error in
            (error as? CatalogDocumentError)?.path == "strings.tables.russian"
        }
    }

    @Test func aTableFileReadsBackAndItsNameMustBeItsLocale() throws {
        let file = StringTableFile(
            locale: LocaleTag("pt-BR")!, table: ["a.title": .init("Olá", source: "Hello")])
        let text = try file.text()
        #expect(try StringTableFile(text: text) == file)
        let strings = CatalogStrings(files: [
            RecordedCatalog(file: "pt-BR.json", text: text), RecordedCatalog(file: "pt.json", text: text),
            RecordedCatalog(file: "de.json", text: "{"),
        ])
        #expect(strings.tables.keys.map(\.rawValue) == ["pt-BR"])
        #expect(strings.unreadable.keys.sorted() == ["de.json", "pt.json"])
    }
}
