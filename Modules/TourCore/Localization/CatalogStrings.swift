import TourCodec

/// A catalog's translations: the locale its own texts are written in, and one table per other
/// locale, each keyed by the stable ids of the catalog's user-visible texts
/// (``TourCatalog/sourceTexts``: `tutorial.swipeToSelect.title`, `onboarding.chooseApps.action.next.label`).
///
/// Each translation keeps the source text it was made from, so a source text changed since is found
/// stale (`TourCatalog.translationProblems` (CatalogDocuments)) rather than silently shown out of
/// date. The tables are part of the catalog document (member `strings`, format 3), so a published
/// document can add a locale without an app release.
public struct CatalogStrings: Sendable, Equatable {
    public struct Translation: Sendable, Equatable {
        public var text: String
        /// The source text this translates, as it was when translated.
        public var source: String

        public init(_ text: String, source: String) {
            self.text = text
            self.source = source
        }
    }

    /// One locale's translations by text id.
    public typealias Table = [String: Translation]

    /// The locale the catalog's own texts are in.
    public var source: LocaleTag
    public var tables: [LocaleTag: Table]
    /// Table files that did not read, by file name, with why (not part of any document).
    public var unreadable: [String: String] = [:]

    public init(source: LocaleTag = .english, tables: [LocaleTag: Table] = [:]) {
        self.source = source
        self.tables = tables
    }

    /// No translations, texts in English: what every catalog before localisation was (and how its
    /// document is written: without a `strings` member).
    public var isStandard: Bool { source == .english && tables.isEmpty }

    /// The source locale, then every translated one in order.
    public var locales: [LocaleTag] { [source] + tables.keys.filter { $0 != source }.sorted() }

    /// The translation of text `id` for `locale`, by its fallback chain (`pt-BR`, then `pt`); nil
    /// when the chain reaches the source locale first (the catalog's own text is the answer). An
    /// empty text is a translation still to be made (`catalog strings LOCALE` writes them).
    public func translation(of id: String, for locale: LocaleTag) -> String? {
        for tag in locale.chain(endingWith: source) {
            if tag == source { return nil }
            if let translation = tables[tag]?[id], !translation.text.isEmpty { return translation.text }
        }
        return nil
    }

    /// The locale a request ends up in when it has no table of its own: the first of its chain with
    /// a table, else the source locale (`pt-BR` → `pt`; `ja` → `en`).
    public func resolved(_ locale: LocaleTag) -> LocaleTag {
        locale.chain(endingWith: source).first { $0 == source || tables[$0] != nil } ?? source
    }
}

// MARK: - Texts the engine itself shows

/// Texts the engine composes around a catalog's own (the progress line): their ids, source texts
/// and parameters. A catalog's tables translate them like any other text.
public enum EngineText {
    /// "Step {step} of {total}".
    public static let progressStep = "progress.step"
    /// "All {#total|step|steps} done": the finale of a flow whose terminal step is not counted.
    public static let progressFinale = "progress.finale"

    /// Every engine text with its English source.
    public static let english: [(id: String, text: String)] = [
        (progressStep, "Step {step} of {total}"),
        (progressFinale, "All {#total|step|steps} done"),
    ]
}
