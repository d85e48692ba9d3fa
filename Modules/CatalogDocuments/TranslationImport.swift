import TourCore

/// A translation file (``TranslationFile``) taken into a catalog's tables, with what changed.
///
/// An entry counts when it has a text and either is marked done or its text differs from the
/// table's (a translator who edited it without marking it). It is kept as a translation of the
/// source text the file shows, so one made from an earlier source text stays out of date and
/// `check` names it; one the file leaves empty, or not done and unchanged, leaves the table as it
/// was. Ids the catalog does not have are left out and named. A translation that would show
/// wrongly (other placeholders than its source, plural forms that are not its locale's) refuses
/// the whole import: nothing is taken.
public struct TranslationImport: Sendable, Equatable {
    /// What the import did to one locale's table.
    public struct Report: Sendable, Equatable {
        public var locale: LocaleTag
        public var added: [String] = []
        public var changed: [String] = []
        public var unchanged = 0
        /// Ids the catalog has that the file leaves without a text.
        public var untranslated: [String] = []
        /// Imported translations made from another source text than the catalog's now.
        public var madeFromAnotherSource: [String] = []
        /// Ids in the file the catalog does not have (left out).
        public var notInCatalog: [String] = []

        /// One line: `pt-BR: 3 added, 1 changed, 12 unchanged, 2 still to translate`.
        public var summary: String {
            var parts = ["\(added.count) added", "\(changed.count) changed", "\(unchanged) unchanged"]
            if !untranslated.isEmpty { parts.append("\(untranslated.count) still to translate") }
            if !madeFromAnotherSource.isEmpty {
                parts.append(
                    """
                    \(madeFromAnotherSource.count) translated from an earlier source text (out of date: \
                    \(Self.list(madeFromAnotherSource)))
                    """
                )
            }
            if !notInCatalog.isEmpty {
                parts.append(
                    "\(notInCatalog.count) left out, not in this catalog (\(Self.list(notInCatalog)))")
            }
            return "\(locale): " + parts.joined(separator: ", ")
        }

        private static func list(_ ids: [String]) -> String {
            ids.prefix(3).joined(separator: ", ") + (ids.count > 3 ? ", …" : "")
        }
    }

    /// The catalog's translations after the import.
    public var strings: CatalogStrings
    /// Per locale of the file, in order.
    public var reports: [Report]

    /// Whether any table changed.
    public var changesAnything: Bool { reports.contains { !$0.added.isEmpty || !$0.changed.isEmpty } }

    /// Takes `file` into `catalog`'s tables.
    ///
    /// - Throws: ``TranslationFileError`` listing every problem: a file in another source
    ///   language, a table for the source locale itself, no locale at all, a translation that
    ///   would show wrongly.
    public init(_ file: TranslationFile, into catalog: TourCatalog) throws(TranslationFileError) {
        let source = catalog.strings.source
        if let given = file.sourceLocale, given != source {
            throw TranslationFileError(
                """
                the file translates from \(given), but \(catalog.app)'s texts are in \(source): \
                export the file from this catalog
                """
            )
        }
        let targets = file.locales.keys.filter { $0 != source }.sorted()
        if file.locales[source] != nil, file.format != .xcstrings {
            throw TranslationFileError(
                """
                \(source) is \(catalog.app)'s own language: its texts are edited in the catalog, \
                not translated
                """
            )
        }
        guard !targets.isEmpty else {
            throw TranslationFileError("the file has no translations (no locale other than \(source))")
        }
        let texts = catalog.sourceTexts
        let current = Dictionary(texts.map { ($0.id, $0.text) }) { first, _ in first }
        var strings = catalog.strings
        var reports: [Report] = []
        var problems: [String] = []
        for locale in targets {
            let entries = file.locales[locale] ?? [:]
            var table = strings.tables[locale] ?? [:]
            var report = Report(locale: locale)
            report.notInCatalog = entries.keys.filter { current[$0] == nil }.sorted()
            for (id, text) in texts {
                let existing = table[id].flatMap { $0.text.isEmpty ? nil : $0 }
                guard let entry = entries[id], !entry.text.isEmpty else {
                    if existing == nil { report.untranslated.append(id) } else { report.unchanged += 1 }
                    continue
                }
                if !entry.isDone, entry.text == existing?.text {
                    report.unchanged += 1
                    continue
                }
                let translation = CatalogStrings.Translation(entry.text, source: entry.source ?? text)
                problems += TourCatalog.badTranslation(
                    translation.text, of: text, id: id, locale: locale, path: "\(locale) \(id)"
                ).map(\.detail)
                if translation == existing {
                    report.unchanged += 1
                    continue
                }
                if translation.source != text { report.madeFromAnotherSource.append(id) }
                if existing == nil { report.added.append(id) } else { report.changed.append(id) }
                table[id] = translation
            }
            if !table.isEmpty || strings.tables[locale] != nil { strings.tables[locale] = table }
            reports.append(report)
        }
        guard problems.isEmpty else { throw TranslationFileError(problems) }
        self.strings = strings
        self.reports = reports
    }
}
