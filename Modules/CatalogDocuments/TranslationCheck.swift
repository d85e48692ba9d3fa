import TourCodec
import TourCore

/// What is wrong with a catalog's translations (``TourCatalog/translationProblems``).
extension TourCatalog {
    /// Per translated locale, in order: every source text without a translation (missing), every
    /// translation of an id the catalog does not have (extra), every translation made from a
    /// source text that has changed since (stale), and every translation that would show wrongly
    /// (bad: other placeholders than its source, or plural forms that are not its locale's).
    ///
    /// A missing, extra or stale translation still runs (the chain falls back to the source text,
    /// a stale one is shown as it is), so only bad ones are catalog problems that stop a release or
    /// a publication (``problems(declaring:)``); `APP check` lists them all.
    public var translationProblems: [CatalogProblem] {
        let sources = sourceTexts
        let known = Set(sources.map(\.id))
        var problems: [CatalogProblem] = []
        for problem in sources.compactMap({ Self.badPlurals(in: $0.text, id: $0.id, locale: strings.source) })
        {
            problems.append(problem)
        }
        for (file, reason) in strings.unreadable.sorted(by: { $0.key < $1.key }) {
            problems.append(
                CatalogProblem(
                    kind: .badTranslation, flow: nil, step: nil, path: "strings/\(file)", detail: reason))
        }
        for locale in strings.tables.keys.sorted() {
            let table = strings.tables[locale] ?? [:]
            let path = "strings.tables.\(locale)"
            if locale == strings.source {
                problems.append(
                    CatalogProblem(
                        kind: .extraTranslation, flow: nil, step: nil, path: path,
                        detail:
                            """
                            \(locale) is the catalog's source locale: its texts are the catalog's own, \
                            not a table
                            """
                    ))
                continue
            }
            for (id, text) in sources {
                guard let translation = table[id], !translation.text.isEmpty else {
                    problems.append(
                        CatalogProblem(
                            kind: .missingTranslation, flow: nil, step: nil, path: "\(path).\(id)",
                            detail:
                                """
                                no \(locale) text for \(id) (\"\(Self.quoted(text))\"); \
                                shown in \(strings.resolved(Self.parent(of: locale)))
                                """
                        ))
                    continue
                }
                if translation.source != text {
                    problems.append(
                        CatalogProblem(
                            kind: .staleTranslation, flow: nil, step: nil, path: "\(path).\(id)",
                            detail:
                                """
                                the \(locale) text of \(id) translates \"\(Self.quoted(translation.source))\
                                \"; the source is now \"\(Self.quoted(text))\"
                                """
                        ))
                }
                problems += Self.badTranslation(
                    translation.text, of: text, id: id, locale: locale, path: "\(path).\(id)")
            }
            for id in table.keys.sorted() where !known.contains(id) {
                let near =
                    NameSuggestion.nearest(to: id, in: Array(known)).map { " (did you mean \($0)?)" } ?? ""
                problems.append(
                    CatalogProblem(
                        kind: .extraTranslation, flow: nil, step: nil, path: "\(path).\(id)",
                        detail: "\(locale) translates \(id), which the catalog does not have\(near)"))
            }
        }
        return problems
    }

    /// The locale a missing text falls back to: the next in `locale`'s chain.
    private static func parent(of locale: LocaleTag) -> LocaleTag {
        locale.fallbacks.dropFirst().first ?? locale
    }

    /// The problems of one translation that would show wrongly (also what an import refuses).
    static func badTranslation(
        _ translation: String, of source: String, id: String, locale: LocaleTag, path: String
    ) -> [CatalogProblem] {
        var problems: [CatalogProblem] = []
        let expected = Template.placeholders(in: source)
        let found = Template.placeholders(in: translation)
        if expected != found {
            let missing = expected.subtracting(found).sorted().map { "{\($0)}" }
            let unknown = found.subtracting(expected).sorted().map { "{\($0)}" }
            let parts =
                (missing.isEmpty ? [] : ["leaves out \(missing.joined(separator: ", "))"])
                + (unknown.isEmpty
                    ? [] : ["has \(unknown.joined(separator: ", ")), which the source does not"])
            problems.append(
                CatalogProblem(
                    kind: .badTranslation, flow: nil, step: nil, path: path,
                    detail: "the \(locale) text of \(id) \(parts.joined(separator: " and "))"))
        }
        if let plural = badPlurals(in: translation, id: id, locale: locale, path: path) {
            problems.append(plural)
        }
        return problems
    }

    private static func badPlurals(in text: String, id: String, locale: LocaleTag, path: String? = nil)
        -> CatalogProblem?
    {
        let rules = PluralRules(locale)
        let wrong = Template.pluralFormCounts(in: text).filter { $0.forms != rules.categories.count }
        guard let first = wrong.first else { return nil }
        let categories = rules.categories.map(\.rawValue).joined(separator: "|")
        return CatalogProblem(
            kind: .badTranslation, flow: nil, step: nil, path: path ?? "",
            detail:
                """
                {#\(first.name)|…} in the \(locale) text of \(id) gives \(first.forms) form\
                \(first.forms == 1 ? "" : "s"); \(locale) counts with \(rules.categories.count) (\
                \(categories))
                """
        )
    }

    private static func quoted(_ text: String) -> String { text.count > 60 ? text.prefix(60) + "…" : text }
}
