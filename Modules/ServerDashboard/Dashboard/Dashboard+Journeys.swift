import AccountSync
import CatalogDocuments
import Foundation
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerControlPlane
import ServerInsights
import ServerPublishing
import Synchronization
import TourCodec
import TourCore

/// A flow's page as a product manager reads it: the journeys' funnel (conversions,
/// skipped and abandoned, times, step titles), one split compared on one scale, the completion
/// rate per week of start, each experiment's sample size; and the drill-down from a stage's
/// skipped or abandoned count to the subjects behind it and each subject's timeline, for the roles
/// that may see subjects (``subjectsRole``; a viewer sees counts only).
extension Dashboard {
    /// Who may see subjects: the drill-down and timelines name them (pseudonymous ids).
    static let subjectsRole: Role = .editor
    static let subjectsPerPage = 50
    static let timelineLimit = 500

    /// What the flow page shows beyond the range: the split (`split=`), the trend's period
    /// (`every=week|day`) and the smallest difference an experiment should detect (`effect=`, in
    /// percentage points).
    struct FlowView {
        var split: Insights.Split = .app
        var weekly = true
        var effect = 0.05

        init(_ request: Request) throws {
            let query = request.uri.queryParameters
            if let given = query.get("split"), !given.isEmpty {
                guard let split = Insights.Split(rawValue: given) else {
                    throw DashboardError(
                        .badRequest,
                        "split takes \(Insights.Split.allCases.map(\.rawValue).joined(separator: ", ")).")
                }
                self.split = split
            }
            switch query.get("every") ?? "week" {
            case "week", "": weekly = true
            case "day": weekly = false
            default: throw DashboardError(.badRequest, "every takes week or day.")
            }
            if let given = query.get("effect"), !given.isEmpty {
                guard let points = Double(given), points.isFinite, (0.1...50).contains(points) else {
                    throw DashboardError(
                        .badRequest,
                        "effect is the smallest difference to detect, in percentage points from 0.1 to 50.")
                }
                effect = points / 100
            }
        }

        /// The query of this view with `change` applied, keeping the range.
        func query(_ range: DayRange?, split: Insights.Split? = nil, weekly: Bool? = nil) -> String {
            var items: [String] = []
            if let range { items += ["from=\(range.first)", "to=\(range.last)"] }
            items.append("split=\((split ?? self.split).rawValue)")
            items.append("every=\((weekly ?? self.weekly) ? "week" : "day")")
            if effect != 0.05 { items.append("effect=\(CSVTable.decimal(effect * 100))") }
            return "?" + items.joined(separator: "&")
        }
    }

    /// The flow page, in any format.
    func flowPage(
        app: String, flow: String, apps: [String], range: DayRange?, format: Format, table: String,
        access: Access,
        experiments: [ExperimentReport], view: FlowView
    ) async throws -> Response {
        let path = "/dashboard/apps/\(app)/flows/\(flow)"
        let (stages, splitRows, periods, versionsByStep, entries, funnels) = (
            try await insights.journeyStages(app: app, flow: flow, range: range),
            try await insights.splitStages(app: app, flow: flow, split: view.split, range: range),
            try await insights.cohortTrend(app: app, flow: flow, range: range, weekly: view.weekly),
            try await insights.catalogVersionsByStep(app: app, flow: flow),
            try await catalogs.all(app: app),
            try await insights.funnels(app: app, flow: flow, range: range)
        )
        let titles = StepTitles.shared.titles(flow: flow, entries: entries, versionsByStep: versionsByStep)
        let seesSubjects = access.may(Self.subjectsRole, in: app)
        func drill(_ stage: Insights.JourneyStage, _ standing: Insights.Standing) -> String? {
            guard seesSubjects, stage.measure != "completed" else { return nil }
            var query = "?step=\(Self.percentEncoded(stage.step))&standing=\(standing.rawValue)"
            if let range { query += "&from=\(range.first)&to=\(range.last)" }
            return "\(path)/subjects" + query
        }
        let journey = JourneyFigures(
            title: "First runs of \(flow)",
            stages: JourneyFigures.conversions(
                stages.map { stage in
                    var figures = JourneyFigures.Stage(
                        label: stage.label, step: stage.measure == "step" ? stage.step : nil,
                        title: stage.measure == "step" ? titles[stage.step] : nil, reached: stage.reached,
                        fromFirst: nil,
                        fromPrevious: nil, skipped: stage.skipped, abandoned: stage.waiting,
                        medianMillis: StageTimes.percentile(stage.times, 0.5),
                        p75Millis: StageTimes.percentile(stage.times, 0.75))
                    figures.skippedHref = drill(stage, .skipped)
                    figures.abandonedHref = drill(stage, .abandoned)
                    return figures
                }))
        let labels = stages.map(\.label)
        let split = SplitFigures(
            split: view.split.title, stages: labels,
            groups: splitRows.map { row in
                .init(
                    label: view.split.label(row.value), value: row.value,
                    reached: labels.map { row.reached[$0] ?? 0 })
            })
        let trend = CohortTrendFigures(
            title: "Completion rate of \(flow) by \(view.weekly ? "week" : "day") of start",
            period: view.weekly ? "week" : "day",
            periods: periods)
        let samples = try await sampleSizes(app: app, experiments: experiments, effect: view.effect)
        let arms = experiments.map(ArmFigures.init)
        switch format {
        case .csv:
            let csv: CSVTable =
                switch table {
                case "split": split.csv
                case "trend": trend.csv
                case "variants": ArmFigures.csv(arms)
                case "funnels":
                    FunnelFigures.csv([funnels.all] + funnels.byCatalogVersion + funnels.byAppVersion)
                default: journey.csv
                }
            return Self.download(
                csv.text, type: "text/csv; charset=utf-8", name: "\(app)-\(flow)-\(table).csv")
        case .json:
            return try Self.json(
                .members([
                    "app": .string(app), "flow": .string(flow), "range": Self.rangeValue(range),
                    "journey": Self.journeyValue(journey),
                    "split": .members(["by": .string(view.split.rawValue)]),
                    "splitGroups": .list(
                        split.groups.map { group in
                            [
                                "value": .string(group.value),
                                "reached": .object(
                                    Dictionary(
                                        uniqueKeysWithValues: zip(
                                            labels, group.reached.map { TourValue.int($0) }))),
                            ]
                        }),
                    "trend": .list(
                        trend.periods.map {
                            [
                                "start": .string($0.start), "started": .int($0.started),
                                "completed": .int($0.completed),
                            ]
                        }),
                    "all": Self.funnelValue(funnels.all),
                    "byCatalogVersion": .list(funnels.byCatalogVersion.map(Self.funnelValue)),
                    "byAppVersion": .list(funnels.byAppVersion.map(Self.funnelValue)),
                    "experiments": .list(experiments.map(\.tourValue)),
                    "sampleSizes": .list(samples.map(Self.sampleValue)),
                ]), name: "\(app)-\(flow)-funnel.json")
        case .html:
            var sections: [InsightsPage.Section] = [Self.rangeForm(path, range), .journey(journey)]
            sections.append(
                .split(
                    split,
                    choices: Insights.Split.allCases.map {
                        .init($0.title, href: path + view.query(range, split: $0), current: $0 == view.split)
                    }))
            sections.append(
                .cohortTrend(
                    trend,
                    choices: [
                        .init("week", href: path + view.query(range, weekly: true), current: view.weekly),
                        .init("day", href: path + view.query(range, weekly: false), current: !view.weekly),
                    ]))
            for (arm, sample) in zip(arms, samples) {
                sections.append(.arms(arm))
                sections.append(.sampleSize(sample, form: Self.effectForm(path, range: range, view: view)))
            }
            if !arms.isEmpty {
                sections.append(.text("Variants count every subject assigned, whatever the date range."))
            }
            if !seesSubjects {
                sections.append(
                    .text(
                        """
                        Who is behind a count is shown to the app's \(Self.subjectsRole.rawValue)s and \
                        above; a viewer sees counts.
                        """
                    ))
            }
            sections.append(Self.exports(path, range, tables: Self.funnelTables))
            return Self.html(
                InsightsPage(
                    title: "\(app) · \(flow)",
                    subtitle: range.map { "Journeys started from \($0.first) to \($0.last) (UTC)" }
                        ?? "All time",
                    navigation: Self.navigation(apps, current: app, flow: flow, range: range),
                    signOut: access.session.formToken,
                    sections: sections, footer: Self.footer))
        }
    }

    /// Each experiment's sample size for `effect`, from its control's goal rate, with the day each
    /// variant reaches it at the last 7 days' pace.
    func sampleSizes(app: String, experiments: [ExperimentReport], effect: Double) async throws
        -> [SampleSizeFigures]
    {
        let today = DayRange.dayNumber(Date())
        var figures: [SampleSizeFigures] = []
        for experiment in experiments {
            let week = try await
                (insights.assignments(
                    app: app, experiment: experiment.experiment, first: DayRange.text(today - 6),
                    last: DayRange.text(today)))
            let baseline = experiment.arms.first { $0.variant == experiment.control }?.rate
            let needed = baseline.flatMap { SampleSize.perVariant(baseline: $0, effect: effect) }
            figures.append(
                SampleSizeFigures(
                    experiment: experiment.experiment, baseline: baseline, effect: effect, needed: needed,
                    arms: experiment.arms.map { arm in
                        let lastWeek = week[arm.variant] ?? 0
                        var expected: String?
                        if let needed, arm.counts.assigned < needed, lastWeek > 0 {
                            let days = Int(
                                (Double(needed - arm.counts.assigned) * 7 / Double(lastWeek)).rounded(.up))
                            expected = DayRange.text(today + days)
                        }
                        return .init(
                            variant: arm.variant, assigned: arm.counts.assigned, lastWeek: lastWeek,
                            expected: expected)
                    }))
        }
        return figures
    }

    static func effectForm(_ path: String, range: DayRange?, view: FlowView) -> InsightsPage.Form {
        var fields: [InsightsPage.Form.Field] = []
        if let range {
            fields += [
                .init(name: "from", label: "", type: "hidden", value: range.first),
                .init(name: "to", label: "", type: "hidden", value: range.last),
            ]
        }
        fields += [
            .init(name: "split", label: "", type: "hidden", value: view.split.rawValue),
            .init(name: "every", label: "", type: "hidden", value: view.weekly ? "week" : "day"),
            .init(
                name: "effect", label: "Smallest difference to detect (percentage points)", type: "number",
                value: CSVTable.decimal(view.effect * 100).replacingOccurrences(
                    of: #"\.?0+$"#, with: "", options: .regularExpression)),
        ]
        return .init(action: path, method: "get", fields: fields, submit: "Estimate")
    }

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
    }

    static func journeyValue(_ journey: JourneyFigures) -> TourValue {
        .list(
            journey.stages.map { stage in
                .members([
                    "stage": .string(stage.label), "title": stage.title.map(TourValue.string),
                    "reached": .int(stage.reached),
                    "fromFirst": stage.fromFirst.map(TourValue.double),
                    "fromPrevious": stage.fromPrevious.map(TourValue.double),
                    "skipped": .int(stage.skipped), "abandoned": .int(stage.abandoned),
                    "medianMs": stage.medianMillis.map(TourValue.int),
                    "p75Ms": stage.p75Millis.map(TourValue.int),
                ])
            })
    }

    static func sampleValue(_ sample: SampleSizeFigures) -> TourValue {
        .members([
            "experiment": .string(sample.experiment), "baseline": sample.baseline.map(TourValue.double),
            "effect": .double(sample.effect), "perVariant": sample.needed.map(TourValue.int),
            "variants": .list(
                sample.arms.map {
                    .members([
                        "variant": .string($0.variant), "assigned": .int($0.assigned),
                        "lastSevenDays": .int($0.lastWeek),
                        "expected": $0.expected.map(TourValue.string),
                    ])
                }),
        ])
    }
}

/// Step titles from the catalogs the server has, parsed once per catalog (by fingerprint).
final class StepTitles: Sendable {
    static let shared = StepTitles()
    /// flow → step → title, per catalog fingerprint.
    private let parsed = Mutex<[String: [String: [String: String]]]>([:])

    /// Each step's title in the catalog's source language, from the newest catalog version that
    /// counted it (`versionsByStep`), else the newest that has it.
    func titles(flow: String, entries: [CatalogStore.Entry], versionsByStep: [String: [Int]]) -> [String:
        String]
    {
        let newestFirst = entries.sorted { $0.version > $1.version }
        var byVersion: [Int: [String: String]] = [:]
        for entry in newestFirst where byVersion[entry.version] == nil {
            byVersion[entry.version] = steps(of: entry)[flow] ?? [:]
        }
        var titles: [String: String] = [:]
        for (version, steps) in byVersion.sorted(by: { $0.key > $1.key }) {
            for (step, title) in steps
            where titles[step] == nil && (versionsByStep[step]?.contains(version) ?? false) {
                titles[step] = title
            }
        }
        for (_, steps) in byVersion.sorted(by: { $0.key > $1.key }) {
            for (step, title) in steps where titles[step] == nil { titles[step] = title }
        }
        return titles
    }

    private func steps(of entry: CatalogStore.Entry) -> [String: [String: String]] {
        if let known = parsed.withLock({ $0[entry.fingerprint] }) { return known }
        var flows: [String: [String: String]] = [:]
        if let catalog = try? CatalogDocument(text: entry.document).catalog {
            for flow in catalog.flows {
                flows[flow.id.rawValue] = Dictionary(
                    flow.steps.map { ($0.id.rawValue, $0.content.title) },
                    uniquingKeysWith: { first, _ in first })
            }
        }
        parsed.withLock { cache in
            if cache.count >= 256 { cache.removeAll() }
            cache[entry.fingerprint] = flows
        }
        return flows
    }
}
