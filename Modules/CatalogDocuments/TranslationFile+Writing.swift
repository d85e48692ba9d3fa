import TourCodec
import TourCore

extension TourCatalog {
    /// The catalog's texts for translation into `locales` in `format`, each text with its current
    /// translation: one made from an earlier source text is marked not done (XLIFF `initial`, a
    /// String Catalog's `needs_review`) with the text it was made from in a note, so a tool shows
    /// it for review; a missing one is empty.
    ///
    /// XLIFF and the table file hold one target locale; a String Catalog holds any number.
    public func translationFile(_ format: Format, locales: [LocaleTag]) throws(TranslationFileError) -> String
    {
        let targets = locales.filter { $0 != strings.source }
        switch format {
        case .table, .xliff:
            guard targets.count == 1, let locale = targets.first else {
                throw TranslationFileError(
                    """
                    \(format == .xliff ? "an XLIFF file" : "a table file") translates into one locale; \
                    name one other than \(strings.source), the catalog's own
                    """
                )
            }
            return format == .xliff ? xliff(locale) : try table(locale)
        case .xcstrings:
            return try stringCatalog(targets)
        }
    }

    public typealias Format = TranslationFile.Format

    private func table(_ locale: LocaleTag) throws(TranslationFileError) -> String {
        let existing = strings.tables[locale] ?? [:]
        var table: CatalogStrings.Table = [:]
        for (id, text) in sourceTexts {
            table[id] = existing[id] ?? CatalogStrings.Translation("", source: text)
        }
        do {
            return try StringTableFile(locale: locale, table: table).text()
        } catch {
            throw TranslationFileError("a text cannot be written as JSON: \(error)")
        }
    }

    private func xliff(_ locale: LocaleTag) -> String {
        let existing = strings.tables[locale] ?? [:]
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="\#(strings.source)" \#
            trgLang="\#(locale)">
            """#,
            #"""
              <file id="\#(XMLText.escaped(app, attribute: true))" original="\#
            \#(XMLText.escaped("\(app) catalog \(version)", attribute: true))">
            """#,
        ]
        for (id, source) in sourceTexts {
            let translation = existing[id].flatMap { $0.text.isEmpty ? nil : $0 }
            let stale = translation.map { $0.source != source } ?? false
            lines.append(#"    <unit id="\#(XMLText.escaped(id, attribute: true))">"#)
            if let translation, stale {
                lines.append(
                    #"""
                          <notes><note category="translated-from">\#(XMLText.escaped(translation.source))\#
                    </note></notes>
                    """#
                )
            }
            lines.append(
                #"      <segment state="\#(translation == nil || stale ? "initial" : "translated")">"#)
            lines.append("        <source>\(XMLText.escaped(source))</source>")
            if let translation {
                lines.append("        <target>\(XMLText.escaped(translation.text))</target>")
            }
            lines.append("      </segment>")
            lines.append("    </unit>")
        }
        lines += ["  </file>", "</xliff>", ""]
        return lines.joined(separator: "\n")
    }

    private func stringCatalog(_ targets: [LocaleTag]) throws(TranslationFileError) -> String {
        var entries: [String: TourValue] = [:]
        for (id, source) in sourceTexts {
            var localizations: [String: TourValue] = [
                strings.source.rawValue: Self.stringUnit("translated", source)
            ]
            for locale in targets {
                guard let translation = strings.tables[locale]?[id], !translation.text.isEmpty else {
                    localizations[locale.rawValue] = Self.stringUnit("new", "")
                    continue
                }
                localizations[locale.rawValue] = Self.stringUnit(
                    translation.source == source ? "translated" : "needs_review", translation.text)
            }
            var entry: [String: TourValue] = [
                "extractionState": "manual", "localizations": .object(localizations),
            ]
            if let made = targets.compactMap({ strings.tables[$0]?[id] }).first(where: {
                $0.source != source && !$0.text.isEmpty
            }) {
                entry["comment"] = .string("Translated from an earlier text: \"\(made.source)\"")
            }
            entries[id] = .object(entry)
        }
        let document: TourValue = [
            "sourceLanguage": .string(strings.source.rawValue), "strings": .object(entries), "version": "1.0",
        ]
        do {
            return try PrettyJSON.text(document) + "\n"
        } catch {
            throw TranslationFileError("a text cannot be written as JSON: \(error)")
        }
    }

    private static func stringUnit(_ state: String, _ value: String) -> TourValue {
        ["stringUnit": ["state": .string(state), "value": .string(value)]]
    }
}

/// JSON as Xcode writes a String Catalog: two-space indents, `"key" : value`, members sorted.
enum PrettyJSON {
    static func text(_ value: TourValue, indent: String = "") throws(JSONTextError) -> String {
        let inner = indent + "  "
        switch value {
        case .object(let members) where !members.isEmpty:
            var parts: [String] = []
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                parts.append(
                    inner + (try TourValue.string(key).jsonText()) + " : " + (try text(member, indent: inner))
                )
            }
            return "{\n" + parts.joined(separator: ",\n") + "\n" + indent + "}"
        case .list(let items) where !items.isEmpty:
            var parts: [String] = []
            for item in items { parts.append(inner + (try text(item, indent: inner))) }
            return "[\n" + parts.joined(separator: ",\n") + "\n" + indent + "]"
        default:
            return try value.jsonText()
        }
    }
}
