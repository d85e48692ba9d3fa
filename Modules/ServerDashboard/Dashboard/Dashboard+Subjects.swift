import AccountSync
import Foundation
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerInsights
import TourCodec

/// The drill-down: from a stage's skipped or abandoned count to the subjects behind it,
/// a page at a time, and from a subject to its timeline of facts across devices and catalog
/// versions. Only the app's ``subjectsRole`` and above see either; each is one bounded, indexed read.
extension Dashboard {
    func addSubjects(to router: RouterGroup<DashboardRequestContext>) {
        let subjectViewers = router.requiring(Self.subjectsRole)
        subjectViewers.get("/dashboard/apps/:app/flows/:flow/subjects") { request, context in
            let access = context.access
            let app = try context.app()
            let flow = try Self.name(context, "flow", access: nil)
            let range = try Self.range(request, today: Date())
            let query = request.uri.queryParameters
            let step = query.get("step") ?? ""
            guard step.isEmpty || SyncAPI.isValidName(step) else {
                throw DashboardError(
                    .badRequest, "step is a step id (\(SyncAPI.nameRule)), or empty for the start.")
            }
            guard let standing = Insights.Standing(rawValue: query.get("standing") ?? "") else {
                throw DashboardError(.badRequest, "standing takes abandoned or skipped.")
            }
            let after = query.get("after") ?? ""
            guard after.isEmpty || SyncAPI.isValidName(after) else {
                throw DashboardError(
                    .badRequest, "after is the last subject id of the page before (\(SyncAPI.nameRule)).")
            }
            let apps = try await knownApps(app, access: access)
            var subjects = try await
                (insights.journeySubjects(
                    app: app, flow: flow, step: step, standing: standing, range: range, after: after,
                    limit: Self.subjectsPerPage + 1))
            let more = subjects.count > Self.subjectsPerPage
            subjects = Array(subjects.prefix(Self.subjectsPerPage))
            let stage = step.isEmpty ? "the start" : "step \(step)"
            var sections: [InsightsPage.Section] = [
                .text(
                    standing == .skipped
                        ? "Subjects whose first run of \(flow) ended with Skip or a dismissal at \(stage)."
                        : "Subjects whose first run of \(flow) is still at \(stage), with no further step."
                ),
                .table(
                    .init(
                        caption:
                            """
                            Subjects \(after.isEmpty ? "" : "after \(after) ")(at most \
                            \(Self.subjectsPerPage) a page)
                            """,
                        columns: [
                            "Subject (pseudonymous id)", "Journey started (UTC)", "Last activity (UTC)",
                        ],
                        rows: subjects.map { row in
                            [
                                .init(
                                    row.subject, href: "/dashboard/apps/\(app)/subjects/\(row.subject)"),
                                .init(Self.isoTimeMillis(row.startedAt)),
                                .init(Self.isoTimeMillis(row.lastActivityAt)),
                            ]
                        })),
                .text(
                    """
                    Times are the devices' own clocks, to the millisecond. A journey whose last activity is \
                    recent may still be in progress.
                    """
                ),
            ]
            if more, let last = subjects.last?.subject {
                var next =
                    """
                    ?step=\(Self.percentEncoded(step))&standing=\(standing.rawValue)&after=\
                    \(Self.percentEncoded(last))
                    """
                if let range { next += "&from=\(range.first)&to=\(range.last)" }
                sections.append(
                    .links(
                        "More",
                        [
                            .init(
                                "Next \(Self.subjectsPerPage)",
                                href: "/dashboard/apps/\(app)/flows/\(flow)/subjects" + next)
                        ]))
            }
            return Self.html(
                InsightsPage(
                    title: "\(app) · \(flow): \(standing.rawValue) at \(stage)",
                    subtitle: Self.rangeText(range),
                    navigation: Self.navigation(apps, current: app, flow: flow, range: range),
                    signOut: access.session.formToken,
                    sections: sections, footer: Self.footer))
        }
        subjectViewers.get("/dashboard/apps/:app/subjects/:subject") { request, context in
            let access = context.access
            let app = try context.app()
            let subject = try Self.name(context, "subject", access: nil)
            let apps = try await knownApps(app, access: access)
            let (journeys, facts) = (
                try await insights.journeys(app: app, subject: subject),
                try await insights.timeline(app: app, subject: subject, limit: Self.timelineLimit + 1)
            )
            guard !journeys.isEmpty || !facts.isEmpty else {
                throw DashboardError(
                    .notFound, "\(app) has no journey or fact of the subject \(subject).")
            }
            var sections: [InsightsPage.Section] = [
                .table(
                    .init(
                        caption: "Journeys (first runs)",
                        columns: ["Flow", "Started (UTC)", "Standing", "Furthest step"],
                        rows: journeys.map {
                            [
                                .init($0.flow, href: "/dashboard/apps/\(app)/flows/\($0.flow)"),
                                .init($0.started), .init($0.standing),
                                .init($0.furthest.isEmpty ? "–" : $0.furthest),
                            ]
                        })),
                .table(
                    .init(
                        caption: "Timeline: every fact its devices pushed, oldest first",
                        columns: [
                            "Time (UTC)", "Device", "Row", "Catalog", "App version", "Fact", "Flow",
                            "Step", "Detail",
                        ],
                        rows: facts.prefix(Self.timelineLimit).map { fact in
                            [
                                .init(Self.isoTimeMillis(fact.time)), .init(fact.device),
                                .number(Int(fact.seq)), .number(Int(fact.catalogVersion)),
                                .init(fact.appVersion.isEmpty ? "–" : fact.appVersion), .init(fact.fact),
                                .init(fact.flow),
                                .init(fact.step.isEmpty ? "–" : fact.step),
                                .init(fact.detail.isEmpty ? "–" : fact.detail),
                            ]
                        })),
            ]
            if facts.count > Self.timelineLimit {
                sections.append(
                    .text(
                        """
                        The first \(Self.timelineLimit) facts are shown; the subject's export (GET /v1/apps/\
                        \(app)/accounts/\(subject)/export) has them all.
                        """
                    ))
            }
            return Self.html(
                InsightsPage(
                    title: "\(app) · subject \(subject)",
                    navigation: Self.navigation(apps, current: app, range: nil),
                    signOut: access.session.formToken, sections: sections, footer: Self.footer))
        }
    }
}
