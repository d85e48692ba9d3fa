import TourCodec
import TourCore

// MARK: - Document form

extension CatalogStrings {
    /// `{"source": "en", "tables": {"pt-BR": {"ID": {"source": "…", "text": "…"}}}}`.
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set("source", source.rawValue)
        writer.set(
            "tables",
            object: Dictionary(
                uniqueKeysWithValues: tables.map { locale, table in
                    (locale.rawValue, Self.documentValue(of: table))
                }))
        return writer.value
    }

    static func documentValue(of table: Table) -> TourValue {
        .object(table.mapValues { .object(["source": .string($0.source), "text": .string($0.text)]) })
    }

    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        let source = try Self.locale(reader.string("source"), at: reader.path("source"))
        var tables: [LocaleTag: Table] = [:]
        for (name, table) in try reader.object("tables") {
            let at = "\(reader.path("tables")).\(name)"
            let locale = try Self.locale(name, at: at)
            guard locale.rawValue == name else {
                throw CatalogDocumentError(
                    path: at, "a table's locale is written \(locale.rawValue), not \(name)")
            }
            tables[locale] = try Self.table(document: table, at: at)
        }
        try reader.finish()
        self.init(source: source, tables: tables)
    }

    static func table(document value: TourValue, at path: String) throws(CatalogDocumentError) -> Table {
        guard case .object(let entries) = value else {
            throw CatalogDocumentError(
                path: path, "expected an object of texts by id, found \(DocumentReader.describe(value))")
        }
        var table: Table = [:]
        for (id, entry) in entries {
            var reader = try DocumentReader(entry, at: "\(path).\(id)")
            table[id] = Translation(try reader.string("text"), source: try reader.string("source"))
            try reader.finish()
        }
        return table
    }

    static func locale(_ text: String, at path: String) throws(CatalogDocumentError) -> LocaleTag {
        guard let locale = LocaleTag(text) else {
            throw CatalogDocumentError(
                path: path, "'\(text)' is not a locale; write a language tag such as en, pt or pt-BR")
        }
        return locale
    }
}

// MARK: - Table files

/// One locale's table as a file beside a product's catalog (`Apps/<Product>/Onboarding/strings/pt-BR.json`,
/// compiled in): `{"locale": "pt-BR", "strings": {"ID": {"source": "…", "text": "…"}}}`.
public struct StringTableFile: Sendable, Equatable {
    public var locale: LocaleTag
    public var table: CatalogStrings.Table

    public init(locale: LocaleTag, table: CatalogStrings.Table) {
        self.locale = locale
        self.table = table
    }

    /// Reads a file's text.
    ///
    /// - Throws: ``CatalogDocumentError`` naming the path of the first thing that is not a table.
    public init(text: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(DocumentReader.json(text), at: "")
        locale = try CatalogStrings.locale(reader.string("locale"), at: "locale")
        table = try CatalogStrings.table(document: reader.required("strings"), at: "strings")
        try reader.finish()
    }

    /// The file's canonical text (members sorted, one entry per line, for readable diffs).
    public func text() throws(JSONTextError) -> String {
        let entries = try table.sorted(by: { $0.key < $1.key }).map { id, entry throws(JSONTextError) in
            let value: TourValue = ["source": .string(entry.source), "text": .string(entry.text)]
            return "    \(try TourValue.string(id).jsonText()): \(try value.jsonText())"
        }
        return
            """
            {\n  \"locale\": \"\(locale.rawValue)\",\n  \"strings\": {\n\(entries.joined(separator: ",\n"))\
            \n  }\n}\n
            """
    }
}

extension CatalogStrings {
    /// The tables of a product's `strings/` folder (compiled in), with `source` as the catalog's
    /// own locale. A file that does not read, or whose name is not its locale (`pt-BR.json`), is
    /// left out and named by ``TourCatalog/translationProblems``: the product still runs, in the
    /// locales that read.
    public init(source: LocaleTag = .english, files: [RecordedCatalog]) {
        self.init(source: source)
        for file in files.sorted(by: { $0.file < $1.file }) {
            do {
                let table = try StringTableFile(text: file.text)
                guard file.file == "\(table.locale.rawValue).json" else {
                    unreadable[file.file] =
                        "holds the \(table.locale) table; name it \(table.locale.rawValue).json"
                    continue
                }
                tables[table.locale] = table.table
            } catch {
                unreadable[file.file] = "not a string table: \(error)"
            }
        }
    }
}
