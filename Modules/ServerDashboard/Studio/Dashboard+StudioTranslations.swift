import CatalogDocuments
import Foundation
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerPublishing
import TourCore

/// A draft's texts out to translators and back: downloaded as XLIFF 2.0, an Xcode String
/// Catalog or a table file (viewers and above), and a translated file pasted back as a new
/// revision (editors), checked as the command line checks it (``TranslationImport``). The
/// revision's note, and so the audit row, says what the import changed.
extension Dashboard {
    func addTranslations(to router: RouterGroup<DashboardRequestContext>) {
        let (viewers, editors) = (router.requiring(.viewer), router.requiring(.editor))
        viewers.get("/dashboard/apps/:app/studio/drafts/:draft/strings") { request, context in
            let app = try context.app()
            let revision = try await draft(app, context)
            let catalog = try Self.readable(revision).catalog
            let query = request.uri.queryParameters
            guard let format = query.get("format").flatMap(TranslationFile.Format.init(rawValue:)) else {
                throw DashboardError(.badRequest, "Choose a format: xliff, xcstrings or table.")
            }
            var locales = catalog.strings.locales
            if let given = query.get("locale"), !given.isEmpty {
                guard let locale = LocaleTag(given), locale.rawValue == given else {
                    throw DashboardError(.badRequest, "A locale is a language tag such as pt or pt-BR.")
                }
                locales = [catalog.strings.source, locale]
            }
            let text: String
            do {
                text = try catalog.translationFile(format, locales: locales)
            } catch let error as TranslationFileError {
                throw DashboardError(
                    .badRequest,
                    error.description.prefix(1).uppercased() + error.description.dropFirst() + ".")
            }
            let target = locales.count == 2 ? locales[1].rawValue : "all"
            return Self.download(
                text, type: format.mediaType,
                name:
                    "\(app)-\(catalog.version)-\(target).\(format.fileExtension)"
            )
        }
        editors.post("/dashboard/apps/:app/studio/drafts/:draft/strings") { request, context in
            try await savingDraft(request, context) { app, fields, actor, _, current, after in
                var document = try Self.readable(current)
                let imported: TranslationImport
                do {
                    imported = try TranslationImport(
                        try TranslationFile(text: fields["file"] ?? ""), into: document.catalog)
                } catch let error as TranslationFileError {
                    throw DashboardError(
                        .unprocessableContent,
                        """
                        The translations were not taken, nothing was saved: \
                        \(error.problems.joined(separator: "; ")).
                        """
                    )
                }
                guard imported.changesAnything else {
                    throw DashboardError(
                        .unprocessableContent,
                        """
                        The file changes nothing in this draft (\
                        \(imported.reports.map(\.summary).joined(separator: "; "))): nothing was saved.
                        """
                    )
                }
                document.catalog.strings = imported.strings
                let note = "imported translations: " + imported.reports.map(\.summary).joined(separator: "; ")
                let saved = try await drafts.save(
                    app: app, draft: current.draft, after: after, document: try document.text(),
                    note: String(note.prefix(500)), by: actor, at: Date().timeIntervalSince1970)
                return try Self.afterSave(saved, current: current, after: after, place: (nil, nil))
            }
        }
    }

    /// The draft page's translation section: a download per locale in each format, and (for
    /// editors) the form a translated file is pasted into.
    static func translationSections(
        _ catalog: TourCatalog, revision: CatalogDrafts.Revision, base: String, token: String?
    ) -> [InsightsPage.Section] {
        let targets = catalog.strings.locales.dropFirst()
        var links: [InsightsPage.Link] = targets.flatMap { locale in
            [
                InsightsPage.Link(
                    "XLIFF 2.0 for \(locale)", href: "\(base)/strings?format=xliff&locale=\(locale)"),
                InsightsPage.Link(
                    "Table file for \(locale)", href: "\(base)/strings?format=table&locale=\(locale)"),
            ]
        }
        links.append(
            .init("String Catalog (.xcstrings) of every locale", href: "\(base)/strings?format=xcstrings"))
        var sections: [InsightsPage.Section] = [
            .links("Translation files to download", links),
            .form(
                .init(
                    action: "\(base)/strings", method: "get",
                    fields: [
                        .init(name: "format", label: "", type: "hidden", value: "xliff"),
                        .init(
                            name: "locale", label: "XLIFF 2.0 for another locale (a tag such as fr or pt-PT)",
                            type: "text"),
                    ],
                    submit: "Download")),
        ]
        guard let token else { return sections }
        sections.append(
            .form(
                .init(
                    action: "\(base)/strings", method: "post",
                    fields: [
                        .init(name: "form_token", label: "", type: "hidden", value: token),
                        .init(name: "revision", label: "", type: "hidden", value: String(revision.revision)),
                        .init(
                            name: "file",
                            label:
                                "A translated file (XLIFF 2.0, String Catalog or table file), pasted whole",
                            type: "textarea"),
                    ],
                    submit: "Take the translations as a new revision")))
        return sections
    }
}
