import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Edits to a draft catalog document, apart from storage and pages: its texts per locale and the
/// edits a form makes to them (here), its steps' order, removal, renaming, timers and skip policy
/// (`CatalogDraft+Steps.swift`). The studio's editor and a product's `catalog edit` both make their
/// changes through it, so a change and its refusal are the same whichever way it is made.
public struct CatalogDraft: Sendable {
    public let document: CatalogDocument

    public init(document: CatalogDocument) { self.document = document }

    public var catalog: TourCatalog { document.catalog }

    /// The source locale first, then each translated one.
    public var locales: [LocaleTag] { catalog.strings.locales }

    /// The texts of one step (title, body, hint, details, action labels and refusals, gate
    /// messages), by id, in the catalog's order.
    public func texts(flow: FlowID, step: StepID) -> [(id: String, text: String)] {
        let prefix = "\(flow.rawValue).\(step.rawValue)."
        return catalog.sourceTexts.filter { $0.id.hasPrefix(prefix) }
    }

    /// What a text id is, for a label: `tutorial.welcome.title` → `title`.
    public static func part(of id: String, flow: FlowID, step: StepID) -> String {
        String(id.dropFirst(flow.rawValue.count + step.rawValue.count + 2))
    }

    /// `locale`'s translation of `id`, when its table has one that is not empty.
    public func translation(_ id: String, in locale: LocaleTag) -> String? {
        catalog.strings.tables[locale]?[id].flatMap { $0.text.isEmpty ? nil : $0.text }
    }

    /// A form field's name for text `id` in `locale`.
    public static func field(_ id: String, _ locale: LocaleTag) -> String { "text|\(locale)|\(id)" }

    /// The longest text the studio takes (a card's body is a few sentences).
    public static let maximumText = 2_000

    /// Why an edit was refused: one message for the page, nothing saved.
    public struct Refusal: Error {
        public var message: String
        /// The form field it concerns, when one: the page shows the message beside it.
        public var field: String? = nil

        public init(message: String, field: String? = nil) {
            self.message = message
            self.field = field
        }
    }

    /// The document with the form's texts in it (`text|LOCALE|ID` fields: the source locale's set
    /// the catalog's own text, the others its translations, made from the source text as it now
    /// is; an emptied translation is removed, so it is listed missing), and what changed, in
    /// words. Fields it does not know are refused whole.
    public func applying(_ fields: [String: String]) throws(Refusal) -> (
        document: CatalogDocument, changes: [String]
    ) {
        var catalog = self.catalog
        let source = catalog.strings.source
        let known = Set(catalog.sourceTexts.map(\.id))
        var edits: [(locale: LocaleTag, id: String, text: String)] = []
        for (name, value) in fields where name.hasPrefix("text|") {
            let parts = name.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, let locale = LocaleTag(String(parts[1])), known.contains(String(parts[2]))
            else {
                throw Refusal(
                    message:
                        """
                        The form names a text this draft does not have (\(name.prefix(80))); \
                        reload the draft and edit it again.
                        """
                )
            }
            guard locale == source || catalog.strings.tables[locale] != nil else {
                throw Refusal(
                    message:
                        """
                        \(locale) is not a locale of this draft; its locales are \
                        \(locales.map(\.rawValue).joined(separator: ", ")).
                        """
                )
            }
            // A browser sends a form's line breaks as CR LF ("\r\n" is one Character).
            let text = String(value.map { $0 == "\r\n" ? "\n" : $0 })
            guard text.count <= Self.maximumText else {
                throw Refusal(
                    message: "A text is at most \(Self.maximumText) characters; this one has \(text.count).",
                    field: name)
            }
            edits.append((locale, String(parts[2]), text))
        }
        var changes: [String] = []
        // The source texts first: a translation saved with them is made from the new text.
        for edit in edits where edit.locale == source && catalog.text(edit.id) != edit.text {
            guard !edit.text.allSatisfy(\.isWhitespace) else {
                throw Refusal(
                    message: "The source language's text cannot be empty: write it, or remove the step.",
                    field: Self.field(edit.id, source))
            }
            guard catalog.setText(edit.id, to: edit.text) else {
                throw Refusal(
                    message:
                        """
                        \(edit.id) is the engine's own text: it is translated per locale, \
                        not changed in \(source).
                        """,
                    field: Self.field(edit.id, source))
            }
            changes.append("\(edit.id) in \(source)")
        }
        for edit in edits where edit.locale != source {
            let current = catalog.strings.tables[edit.locale]?[edit.id]
            let sourceText = catalog.text(edit.id) ?? ""
            if edit.text.isEmpty {
                guard current != nil else { continue }
                catalog.strings.tables[edit.locale]?[edit.id] = nil
            } else {
                // An untouched translation keeps the source text it was made from, so a changed
                // source shows it out of date; only a translation written now is made from today's.
                guard current?.text != edit.text else { continue }
                catalog.strings.tables[edit.locale, default: [:]][edit.id] = .init(
                    edit.text, source: sourceText)
            }
            changes.append("\(edit.id) in \(edit.locale)")
        }
        return (CatalogDocument(catalog, declarations: document.vocabulary), changes.sorted())
    }

    /// The draft with its version set (a new draft takes the version after every stored one).
    public func versioned(_ version: Int) -> CatalogDocument {
        var catalog = self.catalog
        catalog.version = version
        return CatalogDocument(catalog, declarations: document.vocabulary)
    }
}
