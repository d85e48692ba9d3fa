import AccountSync
import Foundation
import Hummingbird
import InsightsPages
import TourCodec
import TourCore

/// The dashboard's pages and their exports: what each view shows, as HTML, CSV and JSON.
extension Dashboard {
    // MARK: - Pages

    static func overview(_ apps: [Insights.AppSummary], range: DayRange?, format: Format) throws -> Response {
        let flowRows = apps.flatMap { app in app.flows.map { (app, $0) } }
        let days = apps.first?.trend.days.indices.map { index in
            TrendFigures.Day(
                day: apps[0].trend.days[index].day, started: apps.map { $0.trend.days[index].started }.reduce(0, +),
                completed: apps.map { $0.trend.days[index].completed }.reduce(0, +))
        } ?? []
        let trend = TrendFigures(title: "Every app's flows started and completed per day", days: days)
        switch format {
        case .csv:
            let table = CSVTable(
                header: ["app", "accounts", "devices", "flow", "started", "start_rate", "completed", "completion_rate", "skipped"],
                rows: flowRows.map { app, flow in
                    [
                        .text(app.app), .number(app.accounts), .number(app.devices), .text(flow.flow), .number(flow.started),
                        .decimal(rate(flow.started, app.accounts)), .number(flow.completed),
                        .decimal(rate(flow.completed, flow.started)), .number(flow.skipped),
                    ]
                })
            return download(table.text, type: "text/csv; charset=utf-8", name: "onboarding-apps.csv")
        case .json:
            return try json(
                .members([
                    "range": range.map { ["from": .string($0.first), "to": .string($0.last)] as TourValue },
                    "apps": .list(apps.map(Self.appValue)), "trend": trendValue(trend),
                ]), name: "onboarding-apps.json")
        case .html:
            var sections: [InsightsPage.Section] = [rangeForm("/dashboard", range)]
            sections.append(
                .table(
                    .init(
                        caption: "Apps", columns: ["App", "Accounts", "Devices", "Flows"],
                        rows: apps.map { app in
                            [
                                .init(app.app, href: "/dashboard/apps/\(app.app)" + query(range)), .number(app.accounts),
                                .number(app.devices), .number(app.flows.count),
                            ]
                        })))
            sections.append(.table(flowsTable(flowRows, range: range)))
            sections.append(.trend(trend))
            sections.append(exports("/dashboard", range))
            return html(
                InsightsPage(
                    title: "All apps", subtitle: rangeText(range), navigation: navigation(apps.map(\.app), current: nil),
                    signOut: true, sections: sections, footer: footer))
        }
    }

    static func flowsTable(_ rows: [(Insights.AppSummary, Insights.FlowSummary)], range: DayRange?) -> InsightsPage.Table {
        .init(
            caption: "Flows", columns: ["App", "Flow", "Started", "Start rate", "Completed", "Completion rate", "Skipped"],
            rows: rows.map { app, flow in
                [
                    .init(app.app), .init(flow.flow, href: "/dashboard/apps/\(app.app)/flows/\(flow.flow)" + query(range)),
                    .number(flow.started), .percent(rate(flow.started, app.accounts)), .number(flow.completed),
                    .percent(rate(flow.completed, flow.started)), .number(flow.skipped),
                ]
            })
    }

    static func navigation(_ apps: [String], current: String?) -> [InsightsPage.Link] {
        [.init("All apps", href: "/dashboard", current: current == nil)]
            + apps.map { .init($0, href: "/dashboard/apps/\($0)", current: $0 == current) }
    }

    static func appPage(
        _ app: Insights.AppSummary, catalogs: [CatalogStore.Entry], range: DayRange?, format: Format
    ) throws -> Response {
        let path = "/dashboard/apps/\(app.app)"
        switch format {
        case .csv:
            let table = CSVTable(
                header: ["flow", "started", "start_rate", "completed", "completion_rate", "skipped"],
                rows: app.flows.map { flow in
                    [
                        .text(flow.flow), .number(flow.started), .decimal(rate(flow.started, app.accounts)),
                        .number(flow.completed), .decimal(rate(flow.completed, flow.started)), .number(flow.skipped),
                    ]
                })
            return download(table.text, type: "text/csv; charset=utf-8", name: "\(app.app)-flows.csv")
        case .json:
            var value = appValue(app).objectValue ?? [:]
            value["catalogs"] = .list(catalogs.map(catalogValue))
            return try json(.object(value), name: "\(app.app).json")
        case .html:
            let published = catalogs.reversed().map { entry -> [InsightsPage.Cell] in
                [
                    .number(entry.version), .init(entry.source.rawValue),
                    .init(entry.source == .published ? (entry.withdrawnAt == nil ? "\(entry.rollout)%" : "withdrawn") : "in the binary"),
                    .init(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: entry.recordedAt))),
                    .init(entry.recordedBy), .init(String(entry.fingerprint.prefix(12))),
                ]
            }
            let sections: [InsightsPage.Section] = [
                rangeForm(path, range),
                .table(
                    .init(
                        caption: "\(app.app) in all", columns: ["Accounts", "Devices"],
                        rows: [[.number(app.accounts), .number(app.devices)]])),
                .table(flowsTable(app.flows.map { (app, $0) }, range: range)),
                .trend(app.trend),
                .table(
                    .init(
                        caption: "Catalogs: what is published and at what rollout",
                        columns: ["Version", "Source", "Reaches", "Recorded (UTC)", "By", "Fingerprint"], rows: published)),
                exports(path, range),
            ]
            return html(
                InsightsPage(
                    title: app.app, subtitle: rangeText(range), navigation: [.init("All apps", href: "/dashboard")],
                    signOut: true, sections: sections, footer: footer))
        }
    }

    static func funnelPage(
        _ funnels: Insights.FlowFunnels, experiments: [ExperimentReport], range: DayRange?, format: Format
    ) throws -> Response {
        let path = "/dashboard/apps/\(funnels.app)/flows/\(funnels.flow)"
        let arms = experiments.map(ArmFigures.init)
        let all = [funnels.all] + funnels.byCatalogVersion + funnels.byAppVersion
        switch format {
        case .csv:
            return download(
                FunnelFigures.csv(all).text, type: "text/csv; charset=utf-8", name: "\(funnels.app)-\(funnels.flow)-funnel.csv")
        case .json:
            return try json(
                .members([
                    "app": .string(funnels.app), "flow": .string(funnels.flow),
                    "range": range.map { ["from": .string($0.first), "to": .string($0.last)] as TourValue },
                    "all": funnelValue(funnels.all), "byCatalogVersion": .list(funnels.byCatalogVersion.map(funnelValue)),
                    "byAppVersion": .list(funnels.byAppVersion.map(funnelValue)),
                    "experiments": .list(experiments.map(\.tourValue)),
                ]), name: "\(funnels.app)-\(funnels.flow)-funnel.json")
        case .html:
            var sections: [InsightsPage.Section] = [rangeForm(path, range), .funnel(funnels.all)]
            sections += funnels.byCatalogVersion.map(InsightsPage.Section.funnel)
            sections += funnels.byAppVersion.map(InsightsPage.Section.funnel)
            sections += arms.map(InsightsPage.Section.arms)
            if !arms.isEmpty {
                sections.append(.text("Variants count every subject assigned, whatever the date range."))
            }
            sections.append(exports(path, range))
            return html(
                InsightsPage(
                    title: "\(funnels.app) · \(funnels.flow)", subtitle: rangeText(range),
                    navigation: [
                        .init("All apps", href: "/dashboard"), .init(funnels.app, href: "/dashboard/apps/\(funnels.app)"),
                    ], signOut: true, sections: sections, footer: footer))
        }
    }

    // MARK: - JSON exports

    static func appValue(_ app: Insights.AppSummary) -> TourValue {
        [
            "app": .string(app.app), "accounts": .int(app.accounts), "devices": .int(app.devices),
            "flows": .list(
                app.flows.map { flow in
                    [
                        "flow": .string(flow.flow), "started": .int(flow.started), "completed": .int(flow.completed),
                        "skipped": .int(flow.skipped),
                    ]
                }), "trend": trendValue(app.trend),
        ]
    }

    static func trendValue(_ trend: TrendFigures) -> TourValue {
        .list(trend.days.map { ["day": .string($0.day), "started": .int($0.started), "completed": .int($0.completed)] })
    }

    static func funnelValue(_ funnel: FunnelFigures) -> TourValue {
        [
            "title": .string(funnel.title),
            "stages": .list(
                funnel.stages.map { stage in
                    .members([
                        "stage": .string(stage.label), "reached": .int(stage.reached), "dropped": .int(stage.dropped),
                        "dropOff": stage.dropOff.map(TourValue.double),
                    ])
                }),
        ]
    }

    static func catalogValue(_ entry: CatalogStore.Entry) -> TourValue {
        .members([
            "version": .int(entry.version), "source": .string(entry.source.rawValue), "rollout": .int(entry.rollout),
            "fingerprint": .string(entry.fingerprint), "recordedAt": .double(entry.recordedAt),
            "recordedBy": .string(entry.recordedBy), "withdrawnAt": entry.withdrawnAt.map(TourValue.double),
        ])
    }
}
