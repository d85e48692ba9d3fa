import CatalogDocuments
import Foundation
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerPublishing

/// A draft's life beyond its saves: a past revision opened (what restoring it would change) and
/// restored as a new revision, and a draft deleted with every revision. Viewers open; editors
/// restore and delete, each act one audit row (`catalog.draft-saved`, `catalog.draft-deleted`).
extension Dashboard {
    func addDraftLifecycle(to router: RouterGroup<DashboardRequestContext>) {
        let (viewers, editors) = (router.requiring(.viewer), router.requiring(.editor))
        viewers.get("/dashboard/apps/:app/studio/drafts/:draft/revisions/:revision") { request, context in
            let access = context.access
            let app = try context.app()
            let newest = try await draft(app, context)
            guard let number = context.parameters.get("revision").flatMap(Int.init), number > 0,
                let opened = try await drafts.revision(app: app, draft: newest.draft, revision: number)
            else {
                throw DashboardError(
                    .notFound,
                    """
                    Draft \(newest.draft) of \(app) has revisions 1 to \(newest.revision); open one of those.
                    """
                )
            }
            return try revisionPage(opened, newest: newest, access: access)
        }
        // Restore: the revision's document saved again as the newest (nothing before it is lost).
        editors.post("/dashboard/apps/:app/studio/drafts/:draft/restore") { request, context in
            try await savingDraft(request, context) { app, fields, actor, _, current, after in
                guard let number = fields["restore"].flatMap(Int.init), number > 0, number < current.revision,
                    let old = try await drafts.revision(app: app, draft: current.draft, revision: number)
                else {
                    throw DashboardError(
                        .badRequest,
                        """
                        Choose a revision before the newest to restore (1 to \(current.revision - 1)); \
                        nothing was saved.
                        """
                    )
                }
                let saved = try await drafts.save(
                    app: app, draft: current.draft, after: after, document: old.document,
                    note: "restored revision \(number)",
                    by: actor, at: Date().timeIntervalSince1970)
                return try Self.afterSave(saved, current: current, after: after, place: (nil, nil))
            }
        }
        // A name for the draft (none: its number alone); no revision, one audit row.
        editors.post("/dashboard/apps/:app/studio/drafts/:draft/name") { request, context in
            try await changing(request, context) { app, fields, actor, _ in
                let current = try await draft(app, context)
                let name = try Self.draftName(fields["name"] ?? "")
                guard
                    try await drafts.rename(
                        app: app, draft: current.draft, to: name, by: actor, at: Date().timeIntervalSince1970)
                else { throw DashboardError(.notFound, "\(app) has no draft \(current.draft).") }
                return Self.redirect("/dashboard/apps/\(app)/studio/drafts/\(current.draft)")
            }
        }
        editors.post("/dashboard/apps/:app/studio/drafts/:draft/delete") { request, context in
            try await savingDraft(request, context) { app, _, actor, _, current, after in
                let deleted = try await drafts.delete(
                    app: app, draft: current.draft, after: after, by: actor, at: Date().timeIntervalSince1970)
                switch deleted {
                case .deleted:
                    return Self.redirect("/dashboard/apps/\(app)/studio?done=deleted-\(current.draft)")
                case .stale(let newest):
                    throw DashboardError(
                        .conflict,
                        """
                        Revision \(newest) of this draft was saved after the page you deleted it from showed \
                        revision \(after), so nothing was deleted: reload the draft and look again.
                        """
                    )
                case .noSuchDraft:
                    throw DashboardError(.notFound, "\(app) has no draft \(current.draft).")
                }
            }
        }
    }

    /// A draft's name as typed: trimmed, one line of at most ``CatalogDrafts/maximumNameLength``
    /// characters, no control characters (it shows in lists and the audit trail).
    static func draftName(_ typed: String) throws -> String {
        let name = typed.trimmingCharacters(in: .whitespacesAndNewlines)
        guard name.count <= CatalogDrafts.maximumNameLength,
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw DashboardError(
                .badRequest,
                """
                A draft's name is one line of at most \(CatalogDrafts.maximumNameLength) characters (leave \
                it empty for none); nothing was changed.
                """
            )
        }
        return name
    }

    /// "Draft 3" or "Draft 3 (Shorter welcome)".
    static func draftTitle(_ draft: Int, _ name: String?) -> String {
        guard let name, !name.isEmpty else { return "Draft \(draft)" }
        return "Draft \(draft) (\(name))"
    }

    /// A past revision: who saved it and why, what restoring it would change in the newest, and
    /// (for an editor) the form that restores it.
    func revisionPage(_ opened: CatalogDrafts.Revision, newest: CatalogDrafts.Revision, access: Access) throws
        -> Response
    {
        let app = opened.app
        let base = "/dashboard/apps/\(app)/studio/drafts/\(opened.draft)"
        let diff = CatalogDiff(from: try Self.readable(newest), to: try Self.readable(opened))
        var sections: [InsightsPage.Section] = [
            .text(
                """
                Revision \(opened.revision) of draft \(opened.draft), saved by \(opened.author) at \
                \(Self.utc(opened.savedAt)) UTC: \(opened.note). The draft is at revision \(newest.revision).
                """
            ),
            .table(
                .init(
                    caption: opened.revision == newest.revision
                        ? "This is the newest revision."
                        : """
                        Restoring it changes the newest revision so: \(diff.changes.count) change\
                        \(diff.changes.count == 1 ? "" : "s")
                        """,
                    columns: ["Change", "Where", "What"],
                    rows: diff.changes.map { change in
                        [
                            .init(change.kind.rawValue),
                            .init(
                                [change.flow?.rawValue, change.step?.rawValue].compactMap { $0 }.joined(
                                    separator: " step ")),
                            .init(change.detail),
                        ]
                    })),
        ]
        if access.may(.editor, in: app), opened.revision < newest.revision {
            sections.append(
                .form(
                    .init(
                        action: "\(base)/restore", method: "post",
                        fields: [
                            .init(
                                name: "form_token", label: "", type: "hidden", value: access.session.formToken
                            ),
                            .init(
                                name: "revision", label: "", type: "hidden", value: String(newest.revision)),
                            .init(name: "restore", label: "", type: "hidden", value: String(opened.revision)),
                        ],
                        submit: "Restore revision \(opened.revision) as revision \(newest.revision + 1)")))
        }
        return Self.html(
            InsightsPage(
                title: "Draft \(opened.draft) of \(app), revision \(opened.revision)",
                subtitle: "Version \(opened.version)",
                navigation: [
                    .init("All apps", href: "/dashboard"), .init(app, href: "/dashboard/apps/\(app)"),
                    .init("Studio", href: "/dashboard/apps/\(app)/studio"),
                    .init("Draft \(opened.draft)", href: base),
                    .init(
                        "Revision \(opened.revision)", href: "\(base)/revisions/\(opened.revision)",
                        current: true),
                ],
                signOut: access.session.formToken, sections: sections, footer: Self.footer))
    }

    /// The draft page's revisions, each opening its own page, and for an editor the form that
    /// deletes the draft (made from the newest revision: a save since refuses it).
    static func revisionSections(
        _ history: [CatalogDrafts.Revision], of revision: CatalogDrafts.Revision, name: String?, base: String,
        token: String?
    ) -> [InsightsPage.Section] {
        var sections: [InsightsPage.Section] = [
            .table(
                .init(
                    caption: "Revisions of draft \(revision.draft)",
                    columns: ["Revision", "Saved by", "At (UTC)", "Change"],
                    rows: history.map {
                        [
                            .init(
                                String($0.revision), href: "\(base)/revisions/\($0.revision)", numeric: true),
                            .init($0.author),
                            .init(utc($0.savedAt)), .init($0.note),
                        ]
                    }))
        ]
        if let token {
            sections.append(
                .form(
                    .init(
                        action: "\(base)/name", method: "post",
                        fields: [
                            .init(name: "form_token", label: "", type: "hidden", value: token),
                            .init(
                                name: "name", label: "Name of draft \(revision.draft)", type: "text",
                                value: name ?? ""),
                        ],
                        submit: "Name the draft")))
            sections.append(
                .form(
                    .init(
                        action: "\(base)/delete", method: "post",
                        fields: [
                            .init(name: "form_token", label: "", type: "hidden", value: token),
                            .init(
                                name: """
                                    revision
                                    """, label: "", type: "hidden", value: String(revision.revision)),
                        ],
                        submit:
                            """
                            Delete draft \(revision.draft) with its \(revision.revision) revision\
                            \(revision.revision == 1 ? "" : "s") (published versions stay)
                            """
                    )))
        }
        return sections
    }
}
