import AccountSync
import CatalogDocuments
import Foundation
import HTTPTypes
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerControlPlane
import ServerPublishing
import TourCodec
import TourCore

/// The studio: an app's catalogs and drafts, a draft's flows and steps with every text
/// per locale, edited in forms (each save a new revision, audited), checked as publishing checks,
/// previewed as the engine shows each card, and diffed against the live version. Viewers read;
/// editors start and save drafts.
extension Dashboard {
    func addStudio(to router: RouterGroup<DashboardRequestContext>) {
        let (viewers, editors) = (router.requiring(.viewer), router.requiring(.editor))
        viewers.get("/dashboard/apps/:app/studio") { request, context in
            let access = context.access
            let app = try context.app()
            return try await studioPage(
                app, access: access, done: request.uri.queryParameters.get("done"))
        }
        // Start a draft from the newest stored version (its migrations then say how every earlier
        // version's users reach the draft, as a compiled release's do).
        editors.post("/dashboard/apps/:app/studio/drafts") { request, context in
            try await changing(request, context) { app, fields, actor, _ in
                let entries = try await (catalogs.all(app: app))
                guard let newest = entries.max(by: { $0.version < $1.version }),
                    let document = try? CatalogDocument(text: newest.document)
                else {
                    throw DashboardError(
                        .badRequest,
                        """
                        \(app) has no stored catalog yet: register the app's compiled one \
                        (`onboarding-server register --app \(app) FILE`).
                        """
                    )
                }
                guard fields["from"].flatMap(Int.init) == newest.version else {
                    throw DashboardError(
                        .badRequest,
                        """
                        A draft starts from \(app)'s newest stored version, \(newest.version) (a change to \
                        an older one would not place the users of the versions after it).
                        """
                    )
                }
                let version = newest.version + 1
                let text = try CatalogDraft(document: document).versioned(version).text()
                guard
                    let draft = try await drafts.create(
                        app: app, document: text, version: version, basedOn: newest.version, by: actor,
                        at: Date().timeIntervalSince1970)
                else {
                    throw DashboardError(
                        .badRequest,
                        """
                        \(app) has \(CatalogDrafts.maximumDrafts) drafts, the most an app keeps: \
                        publish or finish one first.
                        """
                    )
                }
                return Self.redirect("/dashboard/apps/\(app)/studio/drafts/\(draft.draft)")
            }
        }
        viewers.get("/dashboard/apps/:app/studio/drafts/:draft") { request, context in
            let access = context.access
            let app = try context.app()
            let revision = try await draft(app, context)
            let query = request.uri.queryParameters
            return try await draftPage(
                revision, access: access, flow: query.get("flow"), step: query.get("step"),
                saved: query.get("saved").flatMap(Int.init), refused: nil)
        }
        // Save texts: a new revision, if the form was made from the newest one.
        editors.post("/dashboard/apps/:app/studio/drafts/:draft/texts") { request, context in
            try await savingDraft(request, context) { app, fields, actor, access, current, after in
                let place = Self.place(fields)
                let edited: (document: CatalogDocument, changes: [String])
                do {
                    edited = try CatalogDraft(document: try Self.readable(current)).applying(fields)
                } catch let refusal as CatalogDraft.Refusal {
                    // The same page, with what was typed kept and the refusal beside its field.
                    return try await draftPage(
                        current, access: access, flow: place.flow, step: place.step, saved: nil,
                        refused: .init(
                            values: fields, field: refusal.field,
                            message: refusal.message + " Nothing was saved."))
                }
                guard !edited.changes.isEmpty else {
                    return Self.redirect(Self.draftPath(current, place) + "#editor")
                }
                let note = edited.changes.joined(separator: ", ")
                let saved = try await drafts.save(
                    app: app, draft: current.draft, after: after, document: try edited.document.text(),
                    note: String(note.prefix(500)), by: actor, at: Date().timeIntervalSince1970)
                return try Self.afterSave(saved, current: current, after: after, place: place)
            }
        }
        // Reorder, remove (asking where its users go) or rename a step: a new revision with its migration.
        editors.post("/dashboard/apps/:app/studio/drafts/:draft/steps") { request, context in
            try await savingDraft(request, context) { app, fields, actor, _, current, after in
                let place = Self.place(fields)
                guard let flow = place.flow, let step = place.step else {
                    throw DashboardError(.badRequest, "Choose a flow and a step.")
                }
                let changed: (document: CatalogDocument, note: String)
                let change: CatalogDraft.StepChange
                // A new step takes the shape of one the app's binaries declare (the newest registered
                // compiled catalog's).
                let templates = fields["op"] == "add" ? try await stepTemplates(app) : []
                do {
                    change = try CatalogDraft.stepChange(fields, templates: templates)
                    // The version before the draft's, which its migration starts from.
                    let base = try await (catalogs.all(app: app))
                        .last { $0.version == current.version - 1 }.flatMap {
                            try? CatalogDocument(text: $0.document).catalog
                        }
                    changed = try CatalogDraft(document: try Self.readable(current)).changing(
                        FlowID(flow), StepID(step), change, base: base)
                } catch let refusal as CatalogDraft.Refusal {
                    throw DashboardError(.badRequest, refusal.message + " Nothing was saved.")
                }
                let saved = try await drafts.save(
                    app: app, draft: current.draft, after: after, document: try changed.document.text(),
                    note: changed.note,
                    by: actor, at: Date().timeIntervalSince1970)
                var shown = place
                if case .rename(let new) = change { shown.step = new.rawValue }
                if case .remove = change { shown.step = nil }
                if case .add(_, let new) = change { shown.step = new.rawValue }
                return try Self.afterSave(saved, current: current, after: after, place: shown)
            }
        }
        addDraftLifecycle(to: router)
        addTranslations(to: router)
        viewers.get("/dashboard/apps/:app/studio/drafts/:draft/preview") { request, context in
            let access = context.access
            let app = try context.app()
            let revision = try await draft(app, context)
            return try previewPage(revision, request: request, access: access)
        }
    }

    /// The steps of the newest compiled catalog registered for `app`: the kinds of step its
    /// binaries declare (a studio's new step is shaped like one of them).
    func stepTemplates(_ app: String) async throws -> [StepDefinition] {
        let entries = try await (catalogs.all(app: app))
        guard let compiled = entries.last(where: { $0.source == .compiled }),
            let document = try? CatalogDocument(text: compiled.document)
        else {
            return []
        }
        return document.catalog.flows.flatMap(\.steps)
    }

    /// The draft a path names, at its newest revision.
    func draft(_ app: String, _ context: some RequestContext) async throws -> CatalogDrafts.Revision {
        guard let number = context.parameters.get("draft").flatMap(Int.init), number > 0 else {
            throw DashboardError(.badRequest, "A draft is named by its number (1, 2, ...).")
        }
        guard
            let revision = try await drafts.latest(app: app, draft: number)
        else { throw DashboardError(.notFound, "\(app) has no draft \(number).") }
        return revision
    }

    /// A form that saves a new revision of the draft in the path (an editor's: the route group's
    /// role), with the draft as it is now and the revision the form was made from.
    func savingDraft(
        _ request: Request, _ context: DashboardRequestContext,
        _ body: (String, [String: String], Actor, Access, CatalogDrafts.Revision, Int) async throws ->
            Response
    ) async throws -> Response {
        try await changing(request, context) { app, fields, actor, access in
            let current = try await draft(app, context)
            guard let after = fields["revision"].flatMap(Int.init) else {
                throw DashboardError(
                    .badRequest, "The form lacks the revision it was made from; reload the draft.")
            }
            return try await body(app, fields, actor, access, current, after)
        }
    }

    /// Where a save leads: the draft's page (at the step), or why nothing was saved.
    static func afterSave(
        _ saved: CatalogDrafts.Saved, current: CatalogDrafts.Revision, after: Int,
        place: (flow: String?, step: String?)
    ) throws -> Response {
        switch saved {
        case .saved(let revision):
            return redirect(draftPath(revision, place, saved: revision.revision) + "#editor")
        case .stale(let newest):
            throw DashboardError(
                .conflict,
                """
                Revision \(newest) of this draft was saved after the one this form was made from (\(after)), \
                so nothing was saved: reload the draft, then make your change again.
                """
            )
        case .noSuchDraft: throw DashboardError(.notFound, "\(current.app) has no draft \(current.draft).")
        case .full:
            throw DashboardError(
                .badRequest,
                """
                This draft has \(CatalogDrafts.maximumRevisions) revisions, the most a draft keeps: \
                start a new draft from it.
                """
            )
        case .tooLarge(let why):
            throw DashboardError(.contentTooLarge, "Nothing was saved: \(why).")
        }
    }

    /// The flow and step a form or query names (ids only).
    static func place(_ fields: [String: String]) -> (flow: String?, step: String?) {
        (
            fields["flow"].flatMap { SyncAPI.isValidName($0) ? $0 : nil },
            fields["step"].flatMap { SyncAPI.isValidName($0) ? $0 : nil }
        )
    }

    static func draftPath(
        _ revision: CatalogDrafts.Revision, _ place: (flow: String?, step: String?), saved: Int? = nil
    ) -> String {
        var query: [String] = []
        if let flow = place.flow { query.append("flow=\(flow)") }
        if let step = place.step { query.append("step=\(step)") }
        if let saved { query.append("saved=\(saved)") }
        return "/dashboard/apps/\(revision.app)/studio/drafts/\(revision.draft)"
            + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }
}
