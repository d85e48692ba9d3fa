import Foundation
import Mustache


/// One insights page: a title, navigation, and sections (charts each with their table, plain
/// tables, links, forms), rendered to one self-contained HTML document by swift-mustache. Every
/// value goes through Mustache's `{{…}}`, which escapes it, so an app or flow id with markup in it
/// is shown as text; the only raw insertion is the page's own style sheet.
///
/// The page needs no script, no font and no image from anywhere: charts are inline SVG, each with
/// a text title and the table of its numbers beside it.
public struct InsightsPage: Sendable {
    public struct Link: Sendable, Equatable {
        public var label: String
        public var href: String
        public var current: Bool

        public init(_ label: String, href: String, current: Bool = false) {
            self.label = label
            self.href = href
            self.current = current
        }
    }

    /// A table cell: text, optionally a link; numbers are right-aligned.
    public struct Cell: Sendable, Equatable {
        public var text: String
        public var href: String?
        public var numeric: Bool

        public init(_ text: String, href: String? = nil, numeric: Bool = false) {
            self.text = text
            self.href = href
            self.numeric = numeric
        }

        public static func number(_ value: Int) -> Cell { Cell(String(value), numeric: true) }
        public static func percent(_ value: Double?) -> Cell { Cell(InsightsPage.percent(value), numeric: true) }
    }

    public struct Table: Sendable, Equatable {
        public var caption: String
        public var columns: [String]
        public var rows: [[Cell]]

        public init(caption: String, columns: [String], rows: [[Cell]]) {
            self.caption = caption
            self.columns = columns
            self.rows = rows
        }
    }

    /// A GET form of date fields (the range filter) or the sign-in form.
    public struct Form: Sendable, Equatable {
        public struct Field: Sendable, Equatable {
            public var name: String
            public var label: String
            public var type: String
            public var value: String

            public init(name: String, label: String, type: String, value: String = "") {
                self.name = name
                self.label = label
                self.type = type
                self.value = value
            }
        }

        public var action: String
        public var method: String
        public var fields: [Field]
        public var submit: String

        public init(action: String, method: String, fields: [Field], submit: String) {
            self.action = action
            self.method = method
            self.fields = fields
            self.submit = submit
        }
    }

    public enum Section: Sendable, Equatable {
        case funnel(FunnelFigures)
        case trend(TrendFigures)
        case arms(ArmFigures)
        case table(Table)
        case links(String, [Link])
        case form(Form)
        case text(String)
    }

    public var title: String
    public var subtitle: String?
    public var navigation: [Link]
    /// Shows the sign-out button (dashboard pages of a signed-in admin).
    public var signOut: Bool
    public var sections: [Section]
    /// Shown at the foot of the page (the shared modules' version).
    public var footer: String

    public init(
        title: String, subtitle: String? = nil, navigation: [Link] = [], signOut: Bool = false, sections: [Section],
        footer: String
    ) {
        self.title = title
        self.subtitle = subtitle
        self.navigation = navigation
        self.signOut = signOut
        self.sections = sections
        self.footer = footer
    }

    /// The page's one style sheet (inline), for a Content-Security-Policy that allows it by hash.
    public static var styleSheet: String { Templates.css }

    /// The whole HTML document.
    public func render() -> String {
        var sectionValues: [[String: Any]] = []
        for (index, section) in sections.enumerated() {
            sectionValues.append(Self.value(section, id: "s\(index + 1)"))
        }
        let context: [String: Any] = [
            "title": title, "subtitle": subtitle as Any, "css": Templates.css, "footer": footer,
            "navigation": navigation.map { ["label": $0.label, "href": $0.href, "current": $0.current] },
            "hasNavigation": !navigation.isEmpty, "signOut": signOut, "sections": sectionValues,
        ]
        return Templates.library.render(context, withTemplate: "page") ?? ""
    }

    static func percent(_ value: Double?) -> String {
        guard let value else { return "–" }
        return String(format: "%.1f%%", value * 100)
    }

    static func interval(_ range: ClosedRange<Double>?) -> String {
        guard let range else { return "–" }
        return "\(percent(range.lowerBound)) to \(percent(range.upperBound))"
    }

    // MARK: - Sections as Mustache values (geometry computed here; Mustache only places it)

    static func value(_ section: Section, id: String) -> [String: Any] {
        switch section {
        case .funnel(let funnel): return ["funnel": funnelValue(funnel, id: id)]
        case .trend(let trend): return ["trend": trendValue(trend, id: id)]
        case .arms(let arms): return ["arms": armsValue(arms, id: id)]
        case .table(let table):
            return [
                "table": [
                    "id": id, "caption": table.caption, "columns": table.columns,
                    "rows": table.rows.map { row in
                        ["cells": row.map { ["text": $0.text, "href": $0.href as Any, "numeric": $0.numeric] }]
                    },
                ] as [String: Any]
            ]
        case .links(let heading, let links):
            return ["links": ["heading": heading, "items": links.map { ["label": $0.label, "href": $0.href] }] as [String: Any]]
        case .form(let form):
            return [
                "form": [
                    "action": form.action, "method": form.method, "submit": form.submit, "post": form.method == "post",
                    "fields": form.fields.map { field in
                        ["name": field.name, "label": field.label, "type": field.type, "value": field.value, "id": "\(id)-\(field.name)"]
                    },
                ] as [String: Any]
            ]
        case .text(let text): return ["text": text]
        }
    }

    static let chartWidth = 640.0
    static let labelWidth = 220.0

    static func funnelValue(_ funnel: FunnelFigures, id: String) -> [String: Any] {
        let most = Double(max(1, funnel.stages.map(\.reached).max() ?? 1))
        let span = chartWidth - labelWidth - 70
        let bars: [[String: Any]] = funnel.stages.enumerated().map { index, stage in
            let width = (Double(stage.reached) / most * span).rounded()
            let y = Double(index) * 28 + 4
            return [
                "label": stage.label, "reached": stage.reached, "y": Int(y), "textY": Int(y + 15),
                "width": Int(width), "x": Int(labelWidth), "valueX": Int(labelWidth + width + 6),
            ]
        }
        return [
            "id": id, "title": funnel.title, "height": funnel.stages.count * 28 + 8, "bars": bars,
            "rows": funnel.stages.map { stage in
                [
                    "label": stage.label, "reached": stage.reached, "dropped": stage.dropped,
                    "dropOff": percent(stage.dropOff),
                ] as [String: Any]
            },
        ]
    }

    static func trendValue(_ trend: TrendFigures, id: String) -> [String: Any] {
        let height = 160.0
        let most = Double(max(1, trend.days.map { max($0.started, $0.completed) }.max() ?? 1))
        let step = trend.days.count > 1 ? (chartWidth - 60) / Double(trend.days.count - 1) : 0
        func points(_ value: (TrendFigures.Day) -> Int) -> String {
            trend.days.enumerated().map { index, day in
                let x = 50 + Double(index) * step
                let y = 10 + (height - 30) * (1 - Double(value(day)) / most)
                return "\(Int(x.rounded())),\(Int(y.rounded()))"
            }.joined(separator: " ")
        }
        return [
            "id": id, "title": trend.title, "height": Int(height), "most": Int(most),
            "first": trend.days.first?.day ?? "", "last": trend.days.last?.day ?? "",
            "startedPoints": points(\.started), "completedPoints": points(\.completed),
            "empty": trend.days.isEmpty,
            "rows": trend.days.map { ["day": $0.day, "started": $0.started, "completed": $0.completed] as [String: Any] },
        ]
    }

    static func armsValue(_ arms: ArmFigures, id: String) -> [String: Any] {
        [
            "id": id, "title": "Experiment \(arms.experiment)", "goal": arms.goal, "conclusion": arms.conclusion,
            "height": arms.arms.count * 28 + 8,
            "bars": arms.arms.enumerated().map { index, arm in
                let y = Double(index) * 28 + 4
                let span = chartWidth - labelWidth - 70
                let rate = arm.rate ?? 0
                return [
                    "label": arm.variant + (arm.control ? " (control)" : ""), "y": Int(y), "textY": Int(y + 15),
                    "x": Int(labelWidth), "width": Int((rate * span).rounded()),
                    "valueX": Int(labelWidth + rate * span + 6), "rate": percent(arm.rate),
                    "low": Int(labelWidth + (arm.interval?.lowerBound ?? rate) * span),
                    "high": Int(labelWidth + (arm.interval?.upperBound ?? rate) * span), "mid": Int(y + 10),
                ] as [String: Any]
            },
            "rows": arms.arms.map { arm in
                [
                    "variant": arm.variant, "control": arm.control, "assigned": arm.assigned, "exposed": arm.exposed,
                    "goalReached": arm.goalReached, "rate": percent(arm.rate), "interval": interval(arm.interval),
                    "difference": arm.difference.map { percent($0) } ?? "–",
                    "differenceInterval": interval(arm.differenceInterval), "verdict": arm.verdict ?? "–",
                ] as [String: Any]
            },
        ]
    }
}
