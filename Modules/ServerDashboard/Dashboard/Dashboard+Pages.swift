import AccountSync
import Foundation
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerInsights
import ServerPublishing
import TourCodec
import TourCore

/// The dashboard's pages and their exports: what each view shows, as HTML, CSV and JSON.
extension Dashboard {
    // MARK: - Pages

    static func overview(
        _ apps: [Insights.AppSummary], trendRange: DayRange, range: DayRange?, format: Format, table: String,
        access: Access
    ) throws -> Response {
        let flowRows = apps.flatMap { app in app.flows.map { (app, $0) } }
        // Every app's trend covers the same days (one window for the page), so they add up by day.
        let days = trendRange.days.enumerated().map { index, day in
            TrendFigures.Day(
                day: day, started: apps.map { $0.trend.days[index].started }.reduce(0, +),
                completed: apps.map { $0.trend.days[index].completed }.reduce(0, +))
        }
        let trend = TrendFigures(
            title: trendTitle("Every app's flows started and completed per day", trendRange, range),
            days: days)
        switch format {
        case .csv:
            let csv: CSVTable
            switch table {
            case "apps":
                csv = CSVTable(
                    header: ["app", "accounts", "devices", "flows"],
                    rows: apps.map {
                        [.text($0.app), .number($0.accounts), .number($0.devices), .number($0.flows.count)]
                    })
            case "trend": csv = trend.csv
            default:
                csv = CSVTable(
                    header: [
                        "app", "accounts", "devices", "flow", "started", "start_rate", "completed",
                        "completion_rate", "skipped",
                    ],
                    rows: flowRows.map { app, flow in
                        [
                            .text(app.app), .number(app.accounts), .number(app.devices), .text(flow.flow),
                            .number(flow.started),
                            .decimal(startRate(flow, app, range: range)), .number(flow.completed),
                            .decimal(rate(flow.completed, flow.started)), .number(flow.skipped),
                        ]
                    })
            }
            return download(csv.text, type: "text/csv; charset=utf-8", name: "onboarding-apps-\(table).csv")
        case .json:
            return try json(
                .members([
                    "range": rangeValue(range), "trendRange": rangeValue(trendRange),
                    "apps": .list(apps.map { appValue($0, range: range) }), "trend": trendValue(trend),
                ]), name: "onboarding-apps.json")
        case .html:
            var sections: [InsightsPage.Section] = [rangeForm("/dashboard", range)]
            sections.append(
                .table(
                    .init(
                        caption: "Apps",
                        columns: ["App", "Accounts (all time)", "Devices (all time)", "Flows"],
                        rows: apps.map { app in
                            [
                                .init(app.app, href: "/dashboard/apps/\(app.app)" + query(range)),
                                .number(app.accounts),
                                .number(app.devices), .number(app.flows.count),
                            ]
                        })))
            sections.append(.table(flowsTable(flowRows, range: range)))
            if range != nil { sections.append(.text(startRateNote)) }
            sections.append(.trend(trend))
            sections.append(exports("/dashboard", range, tables: overviewTables))
            return html(
                InsightsPage(
                    title: "All apps", subtitle: rangeText(range),
                    navigation: navigation(apps.map(\.app), current: nil, range: range),
                    signOut: access.session.formToken, sections: sections, footer: footer))
        }
    }

    /// Without a range, the trend's title says which 30 days it covers (up to the last with activity).
    static func trendTitle(_ title: String, _ trendRange: DayRange, _ range: DayRange?) -> String {
        range == nil
            ? "\(title), \(trendRange.first) to \(trendRange.last) (the 30 days to the last with activity)"
            : title
    }

    static func flowsTable(_ rows: [(Insights.AppSummary, Insights.FlowSummary)], range: DayRange?)
        -> InsightsPage.Table
    {
        .init(
            caption: "Flows",
            columns: ["App", "Flow", "Started", "Start rate", "Completed", "Completion rate", "Skipped"],
            rows: rows.map { app, flow in
                [
                    .init(app.app),
                    .init(flow.flow, href: "/dashboard/apps/\(app.app)/flows/\(flow.flow)" + query(range)),
                    .number(flow.started), .percent(startRate(flow, app, range: range)),
                    .number(flow.completed),
                    .percent(rate(flow.completed, flow.started)), .number(flow.skipped),
                ]
            })
    }

    /// The links at the top of every page: all apps, each app and its studio, and on a funnel its
    /// flow; the page itself marked current. Each figures page keeps the page's date range.
    static func navigation(_ apps: [String], current: String?, flow: String? = nil, range: DayRange?)
        -> [InsightsPage.Link]
    {
        var links: [InsightsPage.Link] = [
            .init("All apps", href: "/dashboard" + query(range), current: current == nil)
        ]
        for app in apps {
            links.append(
                .init(
                    app, href: "/dashboard/apps/\(app)" + query(range), current: app == current && flow == nil
                ))
            links.append(.init("\(app) studio", href: "/dashboard/apps/\(app)/studio"))
            if app == current, let flow {
                links.append(
                    .init(
                        "\(app) · \(flow)", href: "/dashboard/apps/\(app)/flows/\(flow)" + query(range),
                        current: true))
            }
        }
        return links
    }

    static func appPage(
        _ app: Insights.AppSummary, catalogs: [CatalogStore.Entry], guarded: [GuardedRolloutView] = [],
        unplanned: [AppReport.Unplanned] = [],
        archived: Set<String> = [], apps: [String],
        range: DayRange?, format: Format, table: String, access: Access
    ) throws -> Response {
        let path = "/dashboard/apps/\(app.app)"
        switch format {
        case .csv:
            let csv: CSVTable
            switch table {
            case "trend": csv = app.trend.csv
            case "unplanned":
                csv = CSVTable(
                    header: [
                        "flow", "step", "kind", "subjects", "devices", "facts", "first_seen", "last_seen",
                    ],
                    rows: unplanned.map { row in
                        [
                            .text(row.flow), .text(row.step), .text(row.kind), .number(row.subjects),
                            .number(row.devices),
                            .number(row.facts), .text(isoTime(row.firstAt)), .text(isoTime(row.lastAt)),
                        ]
                    })
            case "catalogs":
                csv = CSVTable(
                    header: [
                        "version", "source", "reaches", "rollout", "recorded_at", "recorded_by",
                        "withdrawn_at", "fingerprint",
                    ],
                    rows: catalogs.reversed().map { entry in
                        [
                            .number(entry.version), .text(entry.source.rawValue), .text(reaches(entry)),
                            .number(entry.rollout),
                            .text(isoTime(entry.recordedAt)), .text(entry.recordedBy),
                            .text(entry.withdrawnAt.map(isoTime) ?? ""),
                            .text(entry.fingerprint),
                        ]
                    })
            default:
                csv = CSVTable(
                    header: ["flow", "started", "start_rate", "completed", "completion_rate", "skipped"],
                    rows: app.flows.map { flow in
                        [
                            .text(flow.flow), .number(flow.started),
                            .decimal(startRate(flow, app, range: range)),
                            .number(flow.completed), .decimal(rate(flow.completed, flow.started)),
                            .number(flow.skipped),
                        ]
                    })
            }
            return download(csv.text, type: "text/csv; charset=utf-8", name: "\(app.app)-\(table).csv")
        case .json:
            var value = appValue(app, range: range).objectValue ?? [:]
            value["range"] = rangeValue(range)
            value["catalogs"] = .list(catalogs.map(catalogValue))
            value["guardedRollouts"] = .list(
                guarded.map { view in
                    var object = view.record.tourValue.objectValue ?? [:]
                    object["looks"] = .list(view.looks.map(\.tourValue))
                    return .object(object)
                })
            value["unplanned"] = unplanned.tourValue
            return try json(.object(value), name: "\(app.app).json")
        case .html:
            let published = catalogs.reversed().map { entry -> [InsightsPage.Cell] in
                [
                    .number(entry.version), .init(entry.source.rawValue), .init(reaches(entry)),
                    .init(isoTime(entry.recordedAt)),
                    .init(entry.recordedBy), .init(String(entry.fingerprint.prefix(12))),
                    .init(entry.signatures.map(\.key).joined(separator: ", ")),
                ]
            }
            var sections: [InsightsPage.Section] = [
                rangeForm(path, range),
                .table(
                    .init(
                        caption: "\(app.app) in all", columns: ["Accounts (all time)", "Devices (all time)"],
                        rows: [[.number(app.accounts), .number(app.devices)]])),
                .table(flowsTable(app.flows.map { (app, $0) }, range: range)),
            ]
            if range != nil { sections.append(.text(startRateNote)) }
            if !archived.isEmpty {
                sections.append(
                    .text(
                        """
                        Archived (off the overview, counted here): \
                        \(archived.sorted().joined(separator: ", ")). An editor restores one with \
                        DELETE /v1/apps/\(app.app)/flows/FLOW/archive.
                        """
                    ))
            }
            var trend = app.trend
            if let first = trend.days.first?.day, let last = trend.days.last?.day {
                trend.title = trendTitle(trend.title, DayRange(first: first, last: last), range)
            }
            sections += [
                .trend(trend),
                .table(
                    .init(
                        caption: "Catalogs: what is published and at what rollout",
                        columns: [
                            "Version", "Source", "Reaches", "Recorded (UTC)", "By", "Fingerprint",
                            "Signed by",
                        ],
                        rows: published)),
            ]
            sections += guardedRolloutSections(
                guarded, app: app.app, access: access, now: Date().timeIntervalSince1970)
            if !unplanned.isEmpty {
                sections.append(
                    .table(
                        .init(
                            caption:
                                """
                                Facts no catalog declares: never counted above (a typo in a build, \
                                or a probe)
                                """,
                            columns: [
                                "Flow", "Step or experiment", "Fact", "Subjects", "Devices", "Facts",
                                "First seen (UTC)", "Last seen (UTC)",
                            ],
                            rows: unplanned.map { row in
                                [
                                    .init(row.flow), .init(row.step), .init(row.kind), .number(row.subjects),
                                    .number(row.devices),
                                    .number(row.facts), .init(isoTime(row.firstAt)),
                                    .init(isoTime(row.lastAt)),
                                ]
                            })))
            }
            sections.append(exports(path, range, tables: appTables))
            if access.may(.owner, in: app.app) {
                sections.append(
                    .links(
                        "Control of \(app.app)",
                        [
                            .init("People of \(app.app)", href: "\(path)/people"),
                            .init("Audit trail of \(app.app)", href: "/dashboard/audit?app=\(app.app)"),
                        ]))
            }
            return html(
                InsightsPage(
                    title: app.app, subtitle: rangeText(range),
                    navigation: navigation(apps, current: app.app, range: range),
                    signOut: access.session.formToken, sections: sections, footer: footer))
        }
    }

    /// Whom a catalog reaches: a published one its rollout's share of devices until withdrawn; a
    /// recorded release is in the app's binary.
    static func reaches(_ entry: CatalogStore.Entry) -> String {
        entry.source == .published
            ? (entry.withdrawnAt == nil ? "\(entry.rollout)%" : "withdrawn") : "in the binary"
    }

    static func isoTime(_ seconds: Double) -> String {
        ISOTime.wholeSeconds(seconds)
    }

    /// To the millisecond: a subject's facts often come several a second.
    static func isoTimeMillis(_ seconds: Double) -> String {
        ISOTime.milliseconds(seconds)
    }

    // MARK: - JSON exports

    static func appValue(_ app: Insights.AppSummary, range: DayRange?) -> TourValue {
        [
            "app": .string(app.app), "accounts": .int(app.accounts), "devices": .int(app.devices),
            "flows": .list(
                app.flows.map { flow in
                    .members([
                        "flow": .string(flow.flow), "started": .int(flow.started),
                        "startRate": startRate(flow, app, range: range).map(TourValue.double),
                        "completed": .int(flow.completed),
                        "completionRate": rate(flow.completed, flow.started).map(TourValue.double),
                        "skipped": .int(flow.skipped),
                    ])
                }), "trend": trendValue(app.trend),
        ]
    }

    static func rangeValue(_ range: DayRange?) -> TourValue? {
        range.map { ["from": .string($0.first), "to": .string($0.last)] as TourValue }
    }

    static func trendValue(_ trend: TrendFigures) -> TourValue {
        .list(
            trend.days.map {
                ["day": .string($0.day), "started": .int($0.started), "completed": .int($0.completed)]
            })
    }

    static func funnelValue(_ funnel: FunnelFigures) -> TourValue {
        [
            "title": .string(funnel.title),
            "stages": .list(
                funnel.stages.map { stage in
                    .members([
                        "stage": .string(stage.label), "reached": .int(stage.reached),
                        "dropped": .int(stage.dropped),
                        "dropOff": stage.dropOff.map(TourValue.double),
                    ])
                }),
        ]
    }

    static func catalogValue(_ entry: CatalogStore.Entry) -> TourValue {
        .members([
            "version": .int(entry.version), "source": .string(entry.source.rawValue),
            "rollout": .int(entry.rollout),
            "fingerprint": .string(entry.fingerprint), "recordedAt": .double(entry.recordedAt),
            "recordedBy": .string(entry.recordedBy), "withdrawnAt": entry.withdrawnAt.map(TourValue.double),
        ])
    }
}
