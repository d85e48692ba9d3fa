import ArgumentParser
import CatalogDocuments
import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `catalog strings [LOCALE]`: the catalog's user-visible texts by id, a locale's texts to
/// translate (the table file, XLIFF 2.0 or a String Catalog), and `--import` of a translated file.
struct CatalogStringsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strings",
        abstract:
            """
            The catalog's texts by id; with a locale, its texts to translate (table file, \
            XLIFF or String Catalog); --import takes a translated file back.
            """,
        discussion: """
            Without LOCALE: one line per text, ID and the source text (with --json, \
            an object of texts by id). \
            With LOCALE: the table file Apps/<Product>/Onboarding/strings/LOCALE.json as it should be now \
            (every translation kept, every missing text with an empty text to fill in), or with \
            --format xliff an XLIFF 2.0 file, with --format xcstrings an Xcode String Catalog (without \
            LOCALE: every locale the catalog has). A translation made from an earlier source text is \
            marked for review (XLIFF `initial`, String Catalog `needs_review`). \
            --import FILE (- for standard input) reads any of the three formats back: it checks every \
            translation's placeholders and plural forms (one wrong refuses the file, exit 1, nothing \
            written), says per locale what was added, changed or is still to translate, and writes the \
            table files (--out DIR: DIR/LOCALE.json each; without it, the one locale's table on \
            standard output). `check` lists what is missing, extra, stale or bad.
            """)
    @ParentCommand var parent: CatalogCommand
    @Argument(help: "A language tag such as pt-BR.")
    var locale: String?
    @Option(
        help:
            """
            The file to write: table (the strings/LOCALE.json file), xliff (XLIFF 2.0) or xcstrings (String \
            Catalog).
            """
    )
    var format: TranslationFile.Format?
    @Option(
        name: .customLong("catalog"),
        help: ArgumentHelp(
            "The catalog whose texts to use: a recorded version, `current` (the default) or a document file.",
            valueName: "source"))
    var catalogSource: String?
    @Option(
        name: .customLong("import"),
        help: ArgumentHelp(
            "A translated file (table, XLIFF 2.0 or String Catalog) to take back; - reads standard input.",
            valueName: "file"))
    var importFile: String?
    @Option(
        help: ArgumentHelp(
            "With --import: the folder to write each locale's table file into.", valueName: "dir"))
    var out: String?

    func run() async throws {
        let (document, _) = try CatalogSources(CLIEnvironment.current).document(catalogSource)
        let catalog = document.catalog
        if let importFile {
            try takeBack(importFile, into: catalog)
            return
        }
        guard out == nil else {
            throw CLIFailure.usage("--out goes with --import (an export is written on standard output)")
        }
        guard let locale else {
            switch format {
            case nil: list(catalog)
            case .xcstrings: Output.write(try file(catalog, .xcstrings, catalog.strings.locales))
            case let format?:  // a table or XLIFF
                throw CLIFailure.usage(
                    """
                    --format \(format.rawValue) translates into one locale: name it (`catalog strings pt-BR \
                    --format \(format.rawValue)`)
                    """
                )
            }
            return
        }
        guard let tag = LocaleTag(locale) else {
            throw CLIFailure.usage(
                "catalog strings takes a language tag such as pt or pt-BR; got '\(locale.quotable)'")
        }
        guard tag != catalog.strings.source else {
            throw CLIFailure.usage(
                """
                \(tag) is the catalog's own language; name a locale to translate into (its texts: \
                `catalog strings`)
                """
            )
        }
        Output.write(try file(catalog, format ?? .table, [catalog.strings.source, tag]))
    }

    private func list(_ catalog: TourCatalog) {
        let texts = catalog.sourceTexts
        if parent.root.options.json {
            let object = TourValue.object(
                Dictionary(texts.map { ($0.id, TourValue.string($0.text)) }) { first, _ in first })
            Output.document((try? object.jsonText()) ?? "{}")
        } else {
            for (id, text) in texts { Output.line("\(id)\t\(text)") }
        }
    }

    private func file(_ catalog: TourCatalog, _ format: TranslationFile.Format, _ locales: [LocaleTag]) throws
        -> String
    {
        do {
            return try catalog.translationFile(format, locales: locales)
        } catch {
            throw CLIFailure.usage(error.description)
        }
    }

    /// `--import FILE`: the file read and checked against the catalog, then each locale's table
    /// written; a refusal writes nothing.
    private func takeBack(_ path: String, into catalog: TourCatalog) throws {
        guard locale == nil, format == nil else {
            throw CLIFailure.usage(
                "--import reads the locales and format from the file: give no LOCALE or --format with it")
        }
        let text = try Self.read(path)
        let imported: TranslationImport
        do {
            imported = try TranslationImport(try TranslationFile(text: text), into: catalog)
        } catch {
            throw CLIFailure.translations(
                """
                refused \(path == "-" ? "standard input" : path): \(error.problems.joined(separator: "; ")); \
                nothing was written
                """
            )
        }
        let locales = imported.reports.map(\.locale)
        // Each table as `catalog strings LOCALE` writes it: every text, an empty one still to translate.
        var translated = catalog
        translated.strings = imported.strings
        var tables: [(LocaleTag, String)] = []
        for locale in locales { tables.append((locale, try file(translated, .table, [locale]))) }
        guard let out else {
            guard tables.count == 1, let table = tables.first else {
                throw CLIFailure.usage(
                    """
                    the file translates into \(locales.map(\.rawValue).joined(separator: ", ")): \
                    give --out DIR to write each table file
                    """
                )
            }
            for report in imported.reports { Output.error(report.summary) }
            Output.write(table.1)
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            for (locale, text) in tables {
                try Data(text.utf8).write(
                    to: URL(fileURLWithPath: out).appendingPathComponent("\(locale.rawValue).json"),
                    options: .atomic)
            }
        } catch {
            throw CLIFailure.translations("cannot write into '\(out.quotable)': \(error)")
        }
        if parent.root.options.json {
            let reports = imported.reports.map { report -> TourValue in
                [
                    "locale": .string(report.locale.rawValue),
                    "file": .string("\(out)/\(report.locale.rawValue).json"),
                    "added": .list(report.added.map(TourValue.string)),
                    "changed": .list(report.changed.map(TourValue.string)),
                    "unchanged": .int(report.unchanged),
                    "untranslated": .list(report.untranslated.map(TourValue.string)),
                    "outOfDate": .list(report.madeFromAnotherSource.map(TourValue.string)),
                    "notInCatalog": .list(report.notInCatalog.map(TourValue.string)),
                ]
            }
            Output.document(try TourValue.object(["imported": .list(reports)]).jsonText())
        } else {
            for report in imported.reports {
                Output.line("\(report.summary); wrote \(out)/\(report.locale.rawValue).json")
            }
        }
    }

    private static func read(_ path: String) throws -> String {
        if path == "-" {
            var bytes: [UInt8] = []
            while let line = readLine(strippingNewline: false) {
                bytes += line.utf8
                guard bytes.count <= TranslationFile.maximumBytes else { break }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        switch DeviceStore.kind(of: path) {
        case .missing: throw CLIFailure.usage("there is no file '\(path.quotable)' to import")
        case .folder: throw CLIFailure.usage("'\(path.quotable)' is a folder; give a translation file")
        case .file: break
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIFailure.usage("'\(path.quotable)' cannot be read (check its permissions)")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw CLIFailure.translations("refused \(path): the file is not UTF-8 text; nothing was written")
        }
        return text
    }
}

extension TranslationFile.Format: ExpressibleByArgument {}
