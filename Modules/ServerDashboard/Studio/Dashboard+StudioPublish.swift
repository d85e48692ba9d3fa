import AccountSync
import CatalogDocuments
import Foundation
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerPublishing
import TourCodec
import TourCore

/// The studio's publishing: a draft published at a rollout, a publication raised or
/// rolled back, each shown first with what it will do and asked once, then done exactly as
/// `onboarding-server publish` and `unpublish` do it (``CatalogStore``: the same checks, the same
/// signature rule, one audit row). Publishers only.
extension Dashboard {
    func addStudioPublishing(to router: RouterGroup<DashboardRequestContext>) {
        let publishers = router.requiring(.publisher)
        publishers.post("/dashboard/apps/:app/studio/drafts/:draft/publish") { request, context in
            try await changing(request, context) { app, fields, actor, access in
                let revision = try await draft(app, context)
                guard fields["revision"].flatMap(Int.init) == revision.revision else {
                    throw DashboardError(
                        .conflict,
                        """
                        Revision \(revision.revision) of this draft was saved after the page you published \
                        from, so nothing was published: reload the draft, check it, and publish again.
                        """
                    )
                }
                let rollout = try Self.rollout(fields)
                guard let key = fields["key"], SyncAPI.isValidName(key),
                    let signature = fields["signature"]?.trimmingCharacters(in: .whitespacesAndNewlines),
                    !signature.isEmpty, signature.count <= 200
                else {
                    throw DashboardError(
                        .badRequest,
                        """
                        A publication needs a signature by one of \(app)'s publication keys: \
                        the key's id and the base64 signature (pick your key file on the page, \
                        or paste what `onboarding-server keys sign` prints).
                        """
                    )
                }
                let document = try Self.readable(revision)
                let version = document.catalog.version
                let guarded = try Self.guardedPlan(fields)
                let rolloutText =
                    guarded.map { "\($0.stages[0])% (the first of its stages)" } ?? "\(rollout)%"
                if fields["confirm"] != "yes" {
                    let entries = try await (catalogs.all(app: app))
                    let check = CatalogStore.check(revision.document, app: app, existing: entries)
                    guard let check, check.isAccepted else {
                        throw DashboardError(
                            .unprocessableContent,
                            "Draft \(revision.draft) cannot be published: "
                                + (check?.problems ?? ["no compiled catalog of \(app) is registered"]).joined(
                                    separator: "; "))
                    }
                    let forecast = try await publishForecast(
                        app: app, live: PublicationForecast.liveVersions(entries), document: document)
                    return try await confirmation(
                        app, access: access,
                        action: "/dashboard/apps/\(app)/studio/drafts/\(revision.draft)/publish",
                        title: "Publish version \(version) of \(app) at \(rolloutText)?",
                        what: [
                            """
                            Version \(version) (draft \(revision.draft), revision \(revision.revision)) goes \
                            to \(rolloutText) of \(app)'s subjects, chosen by the same hash on every device; \
                            the rest keep what they run.
                            """,
                            """
                            Devices get it on their next launch (or sooner on a sync), \
                            once their list of publications is older than the server's \(publicationMaxAge) \
                            s.
                            """,
                        ] + (guarded.map { [Self.guardedLine($0)] } ?? []) + forecast.lines,
                        tables: forecast.tables,
                        fields: [
                            ("revision", String(revision.revision)), ("rollout", String(rollout)),
                            ("key", key), ("signature", signature),
                        ] + Self.guardedFields(fields), submit: "Publish version \(version) at \(rolloutText)"
                    )
                }
                let text = revision.document
                let place = try await formWrite(fields, caller: actor.caller) {
                    let outcome = try await catalogs.publish(
                        app: app, text: text, rollout: rollout,
                        signatures: [CatalogSignature(key: key, signature: signature)],
                        guarded: guarded, by: actor, at: Date().timeIntervalSince1970)
                    return try Self.done(outcome, app: app, draft: revision.draft)
                }
                return Self.redirect(place)
            }
        }
        // A stored publication at another rollout (no signature: the document is stored and signed).
        publishers.post("/dashboard/apps/:app/studio/rollout") { request, context in
            try await changing(request, context) { app, fields, actor, access in
                let (entry, rollout) = (try await publication(app, fields), try Self.rollout(fields))
                if fields["confirm"] != "yes" {
                    let move = rollout > entry.rollout ? "raised" : "lowered"
                    // Lowered, the subjects outside the new percentage go back to the version below.
                    let back =
                        rollout < entry.rollout
                        ? try await rollbackForecast(
                            app: app, entry: entry,
                            below: PublicationForecast.versionBelow(
                                entry, in: try await catalogs.all(app: app)))
                        : []
                    return try await confirmation(
                        app, access: access, action: "/dashboard/apps/\(app)/studio/rollout",
                        title:
                            """
                            Change version \(entry.version) of \(app) from \(entry.rollout)% to \(rollout)%?
                            """,
                        what: [
                            rollout > entry.rollout
                                ? """
                                \(rollout - entry.rollout)% more of \(app)'s subjects get version \
                                \(entry.version) on their next launch; those who have it keep it.
                                """
                                : """
                                Subjects outside the first \(rollout)% go back to the version below it \
                                on their next launch; a run on a step only version \(entry.version) has \
                                goes by its flow's policy.
                                """,
                            """
                            The rollout is \(move) exactly as `onboarding-server publish --rollout \(rollout)\
                            ` of the same document does it.
                            """,
                        ] + back,
                        fields: [("version", String(entry.version)), ("rollout", String(rollout))],
                        submit: "Set version \(entry.version) to \(rollout)%")
                }
                let place = try await formWrite(fields, caller: actor.caller) {
                    let outcome = try await catalogs.publish(
                        app: app, text: entry.document, rollout: rollout, signatures: [], guarded: nil,
                        by: actor, at: Date().timeIntervalSince1970)
                    return try Self.done(outcome, app: app, draft: nil)
                }
                return Self.redirect(place)
            }
        }
        publishers.post("/dashboard/apps/:app/studio/rollback") { request, context in
            try await changing(request, context) { app, fields, actor, access in
                let entry = try await publication(app, fields)
                if fields["confirm"] != "yes" {
                    let back = try await rollbackForecast(
                        app: app, entry: entry,
                        below: PublicationForecast.versionBelow(entry, in: try await catalogs.all(app: app)))
                    return try await confirmation(
                        app, access: access, action: "/dashboard/apps/\(app)/studio/rollback",
                        title: "Roll back version \(entry.version) of \(app)?",
                        what: [
                            """
                            Version \(entry.version) is withdrawn: devices stop choosing it on their next \
                            launch and run the newest version below it they can check (a publication, \
                            or their compiled catalog).
                            """,
                            "It is done exactly as `onboarding-server unpublish` does it.",
                        ] + back,
                        fields: [("version", String(entry.version))],
                        submit: "Roll back version \(entry.version)")
                }
                let place = try await formWrite(fields, caller: actor.caller) {
                    guard
                        try await catalogs.withdraw(
                            app: app, version: entry.version, by: actor, at: Date().timeIntervalSince1970)
                            != nil
                    else {
                        throw DashboardError(.notFound, "Version \(entry.version) of \(app) is not live.")
                    }
                    return "/dashboard/apps/\(app)/studio?done=rolled-back-\(entry.version)"
                }
                return Self.redirect(place)
            }
        }
    }

    /// The guarded rollout the publish form asks for (its stages filled in), or nil.
    static func guardedPlan(_ fields: [String: String]) throws -> GuardedRollout.Plan? {
        guard let stages = fields["stages"], !stages.allSatisfy(\.isWhitespace) else { return nil }
        switch GuardedRollout.Plan.read(
            stages: stages, guardrail: fields["guard"] ?? "", stageTime: fields["stage_time"] ?? "1d",
            stageSubjects: fields["stage_subjects"] ?? "500")
        {
        case .success(let plan): return plan
        case .failure(let refusal):
            throw DashboardError(.badRequest, "Nothing was published: " + refusal.message + ".")
        }
    }

    /// The publish form's guarded-rollout fields, carried to the confirmation.
    static func guardedFields(_ fields: [String: String]) -> [(String, String)] {
        ["stages", "guard", "stage_time", "stage_subjects"].compactMap { name in
            fields[name].map { (name, $0) }
        }
    }

    static func guardedLine(_ plan: GuardedRollout.Plan) -> String {
        """
        A guarded rollout: the rollout guard raises it through \
        \(plan.stages.map { "\($0)%" }.joined(separator: ", ")), each stage 
        """
            + """
            lasting at least \(GuardedRollout.duration(plan.minimumSeconds)) and \(plan.minimumSubjects) \
            subjects who start the flow on it, 
            """
                + """
                and withdraws it by itself when its guardrail shows a larger drop (\(plan.guardrail.summary)\
                ; the flow: the document's first).
                """
    }

    static func rollout(_ fields: [String: String]) throws -> Int {
        guard let rollout = fields["rollout"].flatMap(Int.init), (0...100).contains(rollout) else {
            throw DashboardError(.badRequest, "The rollout is a whole percentage, 0 to 100.")
        }
        return rollout
    }

    /// The live publication a form names.
    func publication(_ app: String, _ fields: [String: String]) async throws -> CatalogStore.Entry {
        guard let version = fields["version"].flatMap(Int.init) else {
            throw DashboardError(.badRequest, "Choose a published version.")
        }
        let entries = try await (catalogs.all(app: app))
        guard
            let entry = entries.last(where: {
                $0.version == version && $0.source == .published && $0.withdrawnAt == nil
            })
        else {
            throw DashboardError(.notFound, "\(app) has no live publication of version \(version).")
        }
        return entry
    }

    /// The page that says what an act will do and asks once.
    func confirmation(
        _ app: String, access: Access, action: String, title: String, what: [String],
        tables: [InsightsPage.Table] = [],
        fields: [(String, String)], submit: String
    ) async throws -> Response {
        let hidden: [InsightsPage.Form.Field] =
            [
                .init(name: "form_token", label: "", type: "hidden", value: access.session.formToken),
                .init(name: "confirm", label: "", type: "hidden", value: "yes"), Self.idempotencyFormField(),
            ] + fields.map { .init(name: $0.0, label: "", type: "hidden", value: $0.1) }
        return Self.html(
            InsightsPage(
                title: title, subtitle: "Nothing is done until you confirm.",
                navigation: [
                    .init("All apps", href: "/dashboard"), .init(app, href: "/dashboard/apps/\(app)"),
                    .init("Studio", href: "/dashboard/apps/\(app)/studio"),
                ],
                signOut: access.session.formToken,
                sections: what.map(InsightsPage.Section.text) + tables.map(InsightsPage.Section.table) + [
                    .form(.init(action: action, method: "post", fields: hidden, submit: submit))
                ],
                footer: Self.footer))
    }

    /// A publish's outcome: where the studio shows it, or the refusal whole.
    static func done(_ outcome: CatalogStore.Outcome, app: String, draft: Int?) throws -> String {
        switch outcome {
        case .stored(let entry):
            return "/dashboard/apps/\(app)/studio?done=published-\(entry.version)-\(entry.rollout)"
        case .refused(let problems):
            throw DashboardError(
                .unprocessableContent,
                "Nothing was published: " + problems.joined(separator: "; ")
                    + (draft.map { " (draft \($0))" } ?? ""))
        }
    }
}
