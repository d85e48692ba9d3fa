import CatalogDocuments
import Foundation
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerPublishing
import TourCodec
import TourCore

/// The studio's pages (``Dashboard/addStudio(to:)``).
extension Dashboard {
    /// An app's live publications and drafts, and (for editors) the form that starts a draft.
    func studioPage(_ app: String, access: Access, done: String? = nil) async throws -> Response {
        let entries = try await (catalogs.all(app: app))
        let listed = try await drafts.list(app: app)
        let names = try await drafts.names(app: app)
        let path = "/dashboard/apps/\(app)/studio"
        var sections: [InsightsPage.Section] = [
            .table(
                .init(
                    caption: "Catalog versions of \(app)",
                    columns: ["Version", "Source", "Rollout", "State", "Recorded by", "At (UTC)"],
                    rows: entries.sorted { $0.version > $1.version }.map { entry in
                        let state =
                            entry.withdrawnAt != nil
                            ? "withdrawn"
                            : entry.source == .compiled ? "in binaries" : entry.rollout > 0 ? "live" : "at 0%"
                        return [
                            .number(entry.version), .init(entry.source.rawValue),
                            .init(entry.source == .published ? "\(entry.rollout)%" : "–", numeric: true),
                            .init(state),
                            .init(entry.recordedBy), .init(Self.utc(entry.recordedAt)),
                        ]
                    })),
            .table(
                .init(
                    caption: "Drafts of \(app)",
                    columns: [
                        "Draft", "Version", "Started from", "Revision", "Last saved by", "At (UTC)",
                        "Last change",
                    ],
                    rows: listed.map { draft in
                        [
                            .init(
                                Self.draftTitle(draft.draft, names[draft.draft]),
                                href: "\(path)/drafts/\(draft.draft)"), .number(draft.version),
                            .number(draft.basedOn), .number(draft.revision), .init(draft.author),
                            .init(Self.utc(draft.savedAt)),
                            .init(draft.note),
                        ]
                    })),
        ]
        if let done = done.flatMap(Self.doneMessage) { sections.insert(.text(done), at: 0) }
        let guarded = try await guardedRolloutViews(app: app)
        sections += Self.guardedRolloutSections(
            guarded, app: app, access: access, now: Date().timeIntervalSince1970)
        // A publisher raises or rolls back each live publication (each asks once, on its own page);
        // one under a running or paused guard is rolled back by hand only (the guard sets its rollout).
        if access.may(.publisher, in: app) {
            let token = InsightsPage.Form.Field(
                name: "form_token", label: "", type: "hidden", value: access.session.formToken)
            let heldByGuard = Set(
                guarded.filter { [.running, .paused].contains($0.record.value.status) }.map(\.record.version))
            for entry in entries.filter({ $0.source == .published && $0.withdrawnAt == nil }).sorted(by: {
                $0.version > $1.version
            }) {
                let version = InsightsPage.Form.Field(
                    name: "version", label: "", type: "hidden", value: String(entry.version))
                // The rollout the form offers next: double, at least 10 points more, at most 100.
                let nextRollout =
                    entry.rollout == 100 ? 100 : min(100, max(entry.rollout * 2, entry.rollout + 10))
                if !heldByGuard.contains(entry.version) {
                    sections.append(
                        .form(
                            .init(
                                action: "\(path)/rollout", method: "post",
                                fields: [
                                    token, version,
                                    .init(
                                        name: "rollout", label: "Version \(entry.version) at (%)",
                                        type: "number",
                                        value: String(nextRollout)),
                                ],
                                submit: "Change its rollout")))
                }
                sections.append(
                    .form(
                        .init(
                            action: "\(path)/rollback", method: "post", fields: [token, version],
                            submit: "Roll back version \(entry.version)")))
            }
        }
        if access.may(.editor, in: app), let newest = entries.map(\.version).max() {
            sections.append(
                .form(
                    .init(
                        action: "\(path)/drafts", method: "post",
                        fields: [
                            .init(
                                name: "form_token", label: "", type: "hidden", value: access.session.formToken
                            ),
                            .init(name: "from", label: "", type: "hidden", value: String(newest)),
                        ], submit: "Start a draft from version \(newest) (the newest)")))
        } else if entries.isEmpty {
            sections.append(
                .text(
                    """
                    No catalog of \(app) is stored yet: register the compiled one (`onboarding-server \
                    register --app \(app) FILE`) to start drafts from it.
                    """
                ))
        }
        return Self.html(
            InsightsPage(
                title: "Studio: \(app)",
                subtitle:
                    """
                    Edit, translate, preview and check a flow; each save is a draft revision. Editors edit; \
                    publishing stays with publishers.
                    """,
                navigation: [
                    .init("All apps", href: "/dashboard"), .init(app, href: "/dashboard/apps/\(app)"),
                    .init("Studio", href: path, current: true),
                ],
                signOut: access.session.formToken, sections: sections, footer: Self.footer))
    }

    /// A draft's document, or the refusal a page shows when this server cannot read it (a newer
    /// format, stored by a newer server).
    static func readable(_ revision: CatalogDrafts.Revision) throws -> CatalogDocument {
        do {
            return try CatalogDocument(text: revision.document)
        } catch {
            throw DashboardError(
                .unprocessableContent,
                """
                Draft \(revision.draft) (revision \(revision.revision)) is not a catalog document this \
                server reads (\(error)): it cannot be edited, previewed or published here; \
                start a new draft from a stored version.
                """
            )
        }
    }

    /// The studio's note after an act (`?done=published-3-20`, `rolled-back-3`).
    static func doneMessage(_ done: String) -> String? {
        let parts = done.split(separator: "-").map(String.init)
        if parts.count == 3, parts[0] == "published", let version = Int(parts[1]), let rollout = Int(parts[2])
        {
            return "Version \(version) is published at \(rollout)%."
        }
        if parts.count == 2, parts[0] == "deleted", let draft = Int(parts[1]) {
            return "Draft \(draft) is deleted."
        }
        if parts.count == 3, parts[0] == "rolled", parts[1] == "back", let version = Int(parts[2]) {
            return "Version \(version) is rolled back."
        }
        return nil
    }

    /// One draft: the check, the missing translations, the diff against the live version, its
    /// flows, one flow's steps, one step's texts in a form, and the draft's revisions.
    /// A save the studio refused: what was typed, and why, beside its field.
    struct RefusedSave {
        var values: [String: String]
        var field: String?
        var message: String
    }

    func draftPage(
        _ revision: CatalogDrafts.Revision, access: Access, flow: String?, step: String?, saved: Int?,
        refused: RefusedSave?
    ) async throws -> Response {
        let app = revision.app
        let document = try Self.readable(revision)
        let draft = CatalogDraft(document: document)
        let catalog = document.catalog
        let entries = try await (catalogs.all(app: app))
        let check = CatalogStore.check(revision.document, app: app, existing: entries)
        let history = try await drafts.history(app: app, draft: revision.draft)
        let base = "/dashboard/apps/\(app)/studio/drafts/\(revision.draft)"
        guard
            let chosenFlow = flow.flatMap({ FlowID($0) }).flatMap({ catalog.flow($0) }) ?? catalog.flows.first
        else {
            throw DashboardError(.notFound, "This draft has no flows.")
        }
        let chosenStep = step.flatMap { StepID($0) }.flatMap { chosenFlow.step($0) } ?? chosenFlow.steps.first
        var sections: [InsightsPage.Section] = []
        if let saved { sections.append(.text("Saved as revision \(saved).")) }
        sections.append(
            .text(
                """
                Version \(catalog.version), started from version \(revision.basedOn); \
                revision \(revision.revision), saved by \(revision.author) at \(Self.utc(revision.savedAt)) \
                UTC.
                """
            ))
        // The check publishing runs, whole; first, whether the draft's version is still free (another
        // draft of the same version may have been published since this one started).
        let problems = check?.catalogProblems ?? []
        let fingerprint = CatalogStore.fingerprint((try? document.text()) ?? "")
        let taken = entries.first { $0.version == catalog.version && $0.fingerprint != fingerprint }
        let newest = entries.map(\.version).max() ?? catalog.version
        if let taken {
            let how =
                taken.source == .published
                ? "another document was published"
                : """
                a binary compiled another document
                """
            sections.append(
                .text(
                    """
                    Version \(catalog.version) is taken: \(how) as version \(catalog.version) at \
                    \(Self.utc(taken.recordedAt)) UTC, \
                    after this draft started, so this draft cannot be published. Start a new draft from \
                    version \(newest) (it becomes version \(newest + 1)) and make this draft's changes there.
                    """
                ))
        } else if let check, check.isAccepted {
            sections.append(
                .text(
                    """
                    Check: the draft passes every check publishing runs (coherence, \
                    the registered binary's vocabulary, every compiled and published version).
                    """
                ))
        } else if check == nil {
            sections.append(
                .text(
                    """
                    Check: no compiled catalog of \(app) is registered, so there is no vocabulary to check \
                    against.
                    """
                ))
        } else {
            let rows =
                check?.catalogProblems.isEmpty == false
                ? problems.map {
                    [
                        InsightsPage.Cell($0.kind.rawValue),
                        .init(
                            [$0.flow?.rawValue, $0.step?.rawValue].compactMap { $0 }.joined(
                                separator: " step ")), .init($0.detail),
                    ]
                }
                : (check?.problems ?? []).map { [InsightsPage.Cell("refused"), .init(""), .init($0)] }
            sections.append(
                .table(
                    .init(
                        caption:
                            """
                            Check: \(rows.count) problem\(rows.count == 1 ? "" : "s"); \
                            the draft cannot be published until each is fixed
                            """,
                        columns: ["Problem", "Where", "What to do"], rows: rows)))
        }
        if taken == nil, let check, check.isAccepted, access.may(.publisher, in: app) {
            let keys = try await self.keys.all(app: app)
            sections.append(
                .publish(
                    .init(
                        heading: "Publish version \(catalog.version)", action: "\(base)/publish",
                        document: revision.document,
                        hidden: [
                            .init(
                                name: "form_token", label: "", type: "hidden", value: access.session.formToken
                            ),
                            .init(
                                name: """
                                    revision
                                    """, label: "", type: "hidden", value: String(revision.revision)),
                        ],
                        rollout: 20, key: keys.last?.key.id ?? "", signature: "",
                        submit: "Review the publication")))
        }
        // Missing translations, per locale.
        let missing = catalog.translationProblems.filter {
            $0.kind == .missingTranslation || $0.kind == .staleTranslation
        }
        let byLocale = Dictionary(grouping: missing) {
            String($0.path.dropFirst("strings.tables.".count).prefix { $0 != "." })
        }
        sections.append(
            .table(
                .init(
                    caption: "Translations", columns: ["Locale", "Missing", "Out of date", "First missing"],
                    rows: draft.locales.dropFirst().map { locale in
                        let problems = byLocale[locale.rawValue] ?? []
                        let missingIDs = problems.filter { $0.kind == .missingTranslation }.map {
                            String($0.path.dropFirst("strings.tables.\(locale).".count))
                        }
                        return [
                            .init(locale.rawValue), .number(missingIDs.count),
                            .number(problems.count - missingIDs.count),
                            .init(missingIDs.prefix(3).joined(separator: ", ")),
                        ]
                    })))
        sections += Self.translationSections(
            catalog, revision: revision, base: base,
            token: access.may(.editor, in: app) ? access.session.formToken : nil)
        // The diff against what devices run now: the newest live publication, else the newest compiled
        // version.
        let live = PublicationForecast.live(entries)
        if let live, let liveDocument = try? CatalogDocument(text: live.document) {
            let diff = CatalogDiff(from: liveDocument, to: document)
            sections.append(
                .table(
                    .init(
                        caption:
                            """
                            Against version \(live.version) (\
                            \(live.source == .published ? "live at \(live.rollout)%" : "in binaries")): \
                            \(diff.changes.count) change\(diff.changes.count == 1 ? "" : "s")
                            """,
                        columns: ["Change", "Where", "What", "Users on it"],
                        rows: diff.changes.map { change in
                            [
                                .init(change.kind.rawValue),
                                .init(
                                    [change.flow?.rawValue, change.step?.rawValue].compactMap { $0 }.joined(
                                        separator: " step ")),
                                .init(change.detail), .init(change.placement?.rawValue ?? "–"),
                            ]
                        })))
        }
        sections.append(
            .links(
                "Flows", catalog.flows.map { .init("\($0.name) (\($0.id))", href: "\(base)?flow=\($0.id)") }))
        // The chosen flow's steps in order, in words.
        sections.append(
            .table(
                .init(
                    caption: "Steps of \(chosenFlow.name) (\(chosenFlow.id)), in order",
                    columns: [
                        "Step", "Id", "Title", "Actions", "Shown when", "Moves on by itself", "Preview",
                    ],
                    rows: chosenFlow.steps.enumerated().map { index, step in
                        [
                            .number(index + 1),
                            .init(
                                step.id.rawValue, href: "\(base)?flow=\(chosenFlow.id)&step=\(step.id)#editor"
                            ), .init(step.content.title),
                            .init(
                                step.actions.map { "\($0.label ?? $0.name) (\($0.name))" }.joined(
                                    separator: ", ")),
                            .init(step.includedWhen.summary),
                            .init(step.autoAdvanceAfter.map { "after \(Int($0)) s" } ?? "no"),
                            .init("Preview", href: "\(base)/preview?flow=\(chosenFlow.id)&step=\(step.id)"),
                        ]
                    })))
        if let chosenStep {
            sections.append(
                .editor(
                    Self.editor(
                        draft, revision: revision, flow: chosenFlow, step: chosenStep, problems: problems,
                        base: base,
                        token: access.may(.editor, in: app) ? access.session.formToken : nil, refused: refused
                    )))
        }
        if let chosenStep, access.may(.editor, in: app) {
            sections += Self.stepForms(
                flow: chosenFlow, step: chosenStep,
                templates: try await stepTemplates(app).map(\.id.rawValue), revision: revision, base: base,
                token: access.session.formToken)
        }
        if let forecast = try await forecast(
            app: app, flow: chosenFlow.id, live: PublicationForecast.liveVersions(entries), draft: catalog)
        {
            sections.append(.table(forecast))
        }
        let name = try await drafts.names(app: app)[revision.draft]
        sections += Self.revisionSections(
            history, of: revision, name: name, base: base,
            token: access.may(.editor, in: app) ? access.session.formToken : nil)
        let studio = "/dashboard/apps/\(app)/studio"
        let page = InsightsPage(
            title: "\(Self.draftTitle(revision.draft, name)) of \(app)",
            subtitle: "Version \(catalog.version) · \(catalog.flows.count) flows",
            navigation: [
                .init("All apps", href: "/dashboard"), .init(app, href: "/dashboard/apps/\(app)"),
                .init("Studio", href: studio),
                .init("Draft \(revision.draft)", href: base, current: true),
            ],
            signOut: access.session.formToken, sections: sections, footer: Self.footer)
        return Self.html(page, status: refused == nil ? .ok : .badRequest)
    }

    /// `1767225600` → `2026-01-01 00:00`.
    static func utc(_ seconds: Double) -> String { ISOTime.minutes(seconds) }
}
