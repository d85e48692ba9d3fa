import ArgumentParser
import CatalogDocuments
import TourCodec
import TourCore

/// `catalog strings [LOCALE]`: the catalog's user-visible texts by id, or a locale's table file to
/// translate.
struct CatalogStringsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strings",
        abstract: "The catalog's user-visible texts by id; with a locale, its translation table file to fill in.",
        discussion: """
            Without LOCALE: one line per text, ID and the source text (with --json, an object of texts by id). \
            With LOCALE: the table file Apps/<Product>/Onboarding/strings/LOCALE.json as it should be now: \
            every translation kept (a stale one with the source it was made from, so `check` still names it), \
            every missing text with its source and an empty text to fill in, extra ids left out. \
            `check` lists what is missing, extra, stale or bad.
            """)
    @ParentCommand var parent: CatalogCommand
    @Argument(help: "A language tag such as pt-BR.")
    var locale: String?

    func run() async throws {
        let catalog = CatalogSources(CLIEnvironment.current).product.catalog
        let texts = catalog.sourceTexts
        guard let locale else {
            if parent.root.options.json {
                let object = TourValue.object(Dictionary(texts.map { ($0.id, TourValue.string($0.text)) }) { first, _ in first })
                Output.document(try object.jsonText())
            } else {
                for (id, text) in texts { Output.line("\(id)\t\(text)") }
            }
            return
        }
        guard let tag = LocaleTag(locale) else {
            throw CLIFailure.usage("catalog strings takes a language tag such as pt or pt-BR; got '\(locale.quotable)'")
        }
        let existing = catalog.strings.tables[tag] ?? [:]
        var table: CatalogStrings.Table = [:]
        for (id, text) in texts {
            table[id] = existing[id] ?? CatalogStrings.Translation("", source: text)
        }
        Output.write(try StringTableFile(locale: tag, table: table).text())
    }
}
