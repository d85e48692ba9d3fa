import Foundation
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerPublishing
import TourCodec
import TourCore

/// Guarded rollouts on an app's page: each one's stage, the guardrail's interval at every look the
/// rollout guard took, what the guard does next, and a publisher's pause, resume and end.
extension Dashboard {
    /// A guarded rollout with the guard's looks, oldest first.
    struct GuardedRolloutView: Sendable {
        var record: GuardedRollouts.Record
        var looks: [GuardedRollouts.Look]
    }

    func guardedRolloutViews(app: String) async throws -> [GuardedRolloutView] {
        var views: [GuardedRolloutView] = []
        for record in try await rollouts.all(app: app) {
            views.append(
                .init(
                    record: record,
                    looks: try await rollouts.looks(app: app, version: record.version, limit: 100)))
        }
        return views
    }

    func addGuardedRollouts(to router: RouterGroup<DashboardRequestContext>) {
        let publishers = router.requiring(.publisher)
        publishers.post("/dashboard/apps/:app/rollouts/:version/:command") { request, context in
            try await changing(request, context) { app, fields, actor, _ in
                guard let version = context.parameters.get("version").flatMap(Int.init),
                    let command = context.parameters.get("command").flatMap(
                        GuardedRollout.Command.init(rawValue:))
                else {
                    throw DashboardError(
                        .notFound, "A guarded rollout's commands are pause, resume and end, on a version.")
                }
                let place = try await formWrite(fields, caller: actor.caller) {
                    switch try await rollouts.command(
                        command, app: app, version: version, by: actor, at: Date().timeIntervalSince1970)
                    {
                    case .applied: return "/dashboard/apps/\(app)"
                    case .missing:
                        throw DashboardError(
                            .notFound, "\(app) has no guarded rollout of version \(version).")
                    case .refused(let message):
                        throw DashboardError(
                            .conflict, message.prefix(1).uppercased() + message.dropFirst() + ".")
                    }
                }
                return Self.redirect(place)
            }
        }
    }

    /// What the guard does next, in words, from its last look.
    static func nextStep(_ view: GuardedRolloutView, now: Double) -> String {
        let value = view.record.value
        switch value.status {
        case .paused: return "Nothing until a publisher resumes it; it stays at \(value.percent)%."
        case .ended: return "Nothing: a person ended the guard; the rollout is set by hand from now on."
        case .complete: return "Nothing: it passed every stage."
        case .rolledBack: return "Nothing: it rolled the publication back."
        case .running:
            guard let last = view.looks.last else {
                return "Looks at the first subjects who start \(value.plan.guardrail.flow) on it."
            }
            switch value.decide(last.evidence, now: now).1 {
            case .wait(let reason):
                return
                    "Waits for \(reason), then raises it to the next stage unless the guardrail shows a drop."
            case .raise(let percent):
                return "Raises it to \(percent)% at its next look unless the guardrail shows a drop."
            case .complete: return "Completes at its next look."
            case .rollBack: return "Rolls it back at its next look."
            case .none: return "Nothing."
            }
        }
    }

    /// The sections of an app's page for its guarded rollouts (none when it has none).
    static func guardedRolloutSections(
        _ views: [GuardedRolloutView], app: String, access: Access, now: Double
    ) -> [InsightsPage.Section] {
        guard !views.isEmpty else { return [] }
        var sections: [InsightsPage.Section] = [
            .table(
                .init(
                    caption:
                        """
                        Guarded rollouts: raised stage by stage by the rollout guard, \
                        rolled back by it on a drop
                        """,
                    columns: [
                        "Version", "Against", "Status", "Rollout", "Stage", "Guardrail",
                        "Each stage at least", "Next",
                    ],
                    rows: views.map { view in
                        let (record, value) = (view.record, view.record.value)
                        return [
                            .number(record.version), .number(record.baseline), .init(value.status.rawValue),
                            .init("\(value.percent)%"),
                            .init(
                                """
                                \(value.stage + 1) of \(value.plan.stages.count): \
                                \(value.plan.stages.map { "\($0)%" }.joined(separator: " → "))
                                """
                            ),
                            .init(value.plan.guardrail.summary),
                            .init(
                                """
                                \(GuardedRollout.duration(value.plan.minimumSeconds)) and \
                                \(value.plan.minimumSubjects) subjects
                                """
                            ),
                            .init(nextStep(view, now: now)),
                        ]
                    })),
            .text(
                """
                The difference is version N's rate minus the version it replaces, among subjects who started \
                the flow since the 
                """
                    + """
                    rollout began; its interval is always valid (it holds however often the guard \
                    looks). The guard rolls back 
                    """
                        + """
                        when the whole interval lies below the tolerated drop, and raises a stage when its \
                        time and subjects are met 
                        """
                    + "and no such drop is shown."),
        ]
        let token = InsightsPage.Form.Field(
            name: "form_token", label: "", type: "hidden", value: access.session.formToken)
        for view in views {
            let (record, value) = (view.record, view.record.value)
            if !view.looks.isEmpty {
                sections.append(
                    .table(
                        .init(
                            caption: "Version \(record.version): the guardrail at each look",
                            columns: [
                                "Time (UTC)", "Rollout", "Version \(record.version): reached / started",
                                "Version \(record.baseline): reached / started",
                                "Difference (always-valid 95%)", "The guard",
                            ],
                            rows: view.looks.reversed().map { look in
                                [
                                    .init(isoTime(look.at)), .init("\(look.percent)%"),
                                    .init(
                                        """
                                        \(look.evidence.candidate.successes) / \
                                        \(look.evidence.candidate.trials)
                                        """
                                    ),
                                    .init(
                                        """
                                        \(look.evidence.baseline.successes) / \
                                        \(look.evidence.baseline.trials)
                                        """
                                    ),
                                    .init(
                                        look.interval.map {
                                            """
                                            \(GuardedRollout.Guardrail.points($0.lowerBound)) to \
                                            \(GuardedRollout.Guardrail.points($0.upperBound))
                                            """
                                        } ?? "not known yet"),
                                    .init(look.decision),
                                ]
                            })))
            }
            guard access.may(.publisher, in: app) else { continue }
            let commands: [(GuardedRollout.Command, String)] =
                switch value.status {
                case .running:
                    [
                        (.pause, "Pause the guard of version \(record.version)"),
                        (.end, "End the guard of version \(record.version)"),
                    ]
                case .paused:
                    [
                        (.resume, "Resume the guard of version \(record.version)"),
                        (.end, "End the guard of version \(record.version)"),
                    ]
                default: []
                }
            for (command, label) in commands {
                sections.append(
                    .form(
                        .init(
                            action: "/dashboard/apps/\(app)/rollouts/\(record.version)/\(command.rawValue)",
                            method: "POST",
                            fields: [token, idempotencyFormField()], submit: label)))
            }
        }
        return sections
    }
}
