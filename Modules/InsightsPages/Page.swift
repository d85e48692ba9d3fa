/// One insights page: a title, navigation, and sections (charts each with their table, plain
/// tables, links, forms), rendered to one self-contained HTML document. Every value is written
/// through ``HTML/text(_:)``, which escapes it, so an app, flow or step id with markup in it is
/// shown as text; markup is only ever this file's own constants.
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
        public static func percent(_ value: Double?) -> Cell {
            Cell(InsightsPage.percent(value), numeric: true)
        }
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

    /// A GET form of date fields (the range filter), or a POST form (sign-in, the people of an app):
    /// a `hidden` field is rendered without a label (an anti-forgery token).
    public struct Form: Sendable, Equatable {
        public struct Field: Sendable, Equatable {
            public var name: String
            public var label: String
            public var type: String
            public var value: String
            /// A choice among these (a `select`), when not empty.
            public var options: [String]
            /// What each option says to people, by its value (the value itself when it has none).
            public var optionLabels: [String: String]
            /// Whether a POST form may leave it empty.
            public var optional: Bool

            public init(
                name: String, label: String, type: String, value: String = "", options: [String] = [],
                optionLabels: [String: String] = [:], optional: Bool = false
            ) {
                self.name = name
                self.label = label
                self.type = type
                self.value = value
                self.options = options
                self.optionLabels = optionLabels
                self.optional = optional
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
        /// A flow's journeys, each stage's skipped and abandoned linked to its subjects when the
        /// person may see them (``JourneyFigures/Stage``'s hrefs).
        case journey(JourneyFigures)
        /// One split side by side, with the links that choose another.
        case split(SplitFigures, choices: [Link])
        case cohortTrend(CohortTrendFigures, choices: [Link])
        case sampleSize(SampleSizeFigures, form: Form)
        case trend(TrendFigures)
        case arms(ArmFigures)
        case table(Table)
        case links(String, [Link])
        case form(Form)
        case text(String)
        /// The studio: a form of texts with problems beside their fields.
        case editor(TextEditor)
        /// The studio: a card as a device shows it.
        case card(CardPreview)
        /// The studio: publish a draft, signed (with ``signingScript`` at the page's end).
        case publish(PublishForm)
    }

    public var title: String
    public var subtitle: String?
    public var navigation: [Link]
    /// Shows the sign-out button (dashboard pages of a signed-in person), its form carrying this
    /// anti-forgery token.
    public var signOut: String?
    public var sections: [Section]
    /// Shown at the foot of the page (the shared modules' version).
    public var footer: String
    /// Shown under the title when set: something about the figures themselves (read from a
    /// replica still behind the primary).
    public var notice: String?

    public init(
        title: String, subtitle: String? = nil, navigation: [Link] = [], signOut: String? = nil,
        sections: [Section],
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
    public static var styleSheet: String { HTML.css }

    /// The whole HTML document.
    public func render() -> String {
        let html = HTML()
        html.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        html.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        html.raw("<meta name=\"referrer\" content=\"same-origin\">\n")
        html.raw("<title>").text(title).raw(" · Onboarding insights</title>\n<style>").raw(HTML.css).raw(
            "</style>\n</head>\n<body>\n")
        html.raw(
            """
            <a class=\"skip\" href=\"#main\">Skip to the content</a>\n<header>\n<span \
            class=\"brand\">Onboarding insights</span>\n
            """
        )
        if !navigation.isEmpty {
            html.raw("<nav aria-label=\"Dashboard\">")
            for link in navigation {
                html.raw("<a href=\"").text(link.href).raw("\"").raw(
                    link.current ? " aria-current=\"page\"" : ""
                ).raw(">")
                    .text(link.label).raw("</a> ")
            }
            html.raw("</nav>\n")
        }
        if let signOut {
            html.raw(
                """
                <form method=\"post\" action=\"/dashboard/sign-out\" class=\"sign-out\"><input \
                type=\"hidden\" name=\"form_token\" value=\"
                """
            )
            .text(signOut).raw("\"><button type=\"submit\">Sign out</button></form>\n")
        }
        html.raw("</header>\n<main id=\"main\" tabindex=\"-1\">\n<h1>").text(title).raw("</h1>\n")
        if let subtitle { html.raw("<p class=\"subtitle\">").text(subtitle).raw("</p>\n") }
        if let notice { html.raw("<p class=\"notice\" role=\"status\">").text(notice).raw("</p>\n") }
        for (index, section) in sections.enumerated() {
            Self.render(section, id: "s\(index + 1)", into: html)
        }
        html.raw("</main>\n<footer>").text(footer).raw("</footer>\n")
        if sections.contains(where: { if case .publish = $0 { true } else { false } }) {
            html.raw("<script>").raw(Self.signingScript).raw("</script>\n")
        }
        html.raw("</body>\n</html>\n")
        return html.output
    }

    /// `0.4567` → `45.7%` (one decimal, rounded half away from zero).
    static func percent(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "–" }
        let tenths = Int((value * 1000).rounded())
        return (tenths < 0 ? "-" : "") + "\(abs(tenths) / 10).\(abs(tenths) % 10)%"
    }

    static func interval(_ range: ClosedRange<Double>?) -> String {
        guard let range else { return "–" }
        return "\(percent(range.lowerBound)) to \(percent(range.upperBound))"
    }

    // MARK: - Sections (geometry computed here, every value written through `text`, which escapes it)

    static let chartWidth = 640.0
    static let labelWidth = 220.0

    static func render(_ section: Section, id: String, into html: HTML) {
        switch section {
        case .funnel(let funnel): renderFunnel(funnel, id: id, into: html)
        case .trend(let trend): renderTrend(trend, id: id, into: html)
        case .arms(let arms): renderArms(arms, id: id, into: html)
        case .journey(let journey): renderJourney(journey, id: id, into: html)
        case .split(let split, let choices): renderSplit(split, choices: choices, id: id, into: html)
        case .cohortTrend(let trend, let choices):
            renderCohortTrend(trend, choices: choices, id: id, into: html)
        case .sampleSize(let figures, let form): renderSampleSize(figures, form: form, id: id, into: html)
        case .table(let table):
            html.raw(
                "<section aria-labelledby=\"\(id)\">\n<table id=\"\(id)-table\">\n<caption id=\"\(id)\">"
            ).text(table.caption)
                .raw("</caption>\n<thead><tr>")
            for column in table.columns { html.raw("<th scope=\"col\">").text(column).raw("</th>") }
            html.raw("</tr></thead>\n<tbody>")
            for row in table.rows {
                html.raw("<tr>")
                for cell in row {
                    html.raw(cell.numeric ? "<td class=\"n\">" : "<td>")
                    if let href = cell.href {
                        html.raw("<a href=\"").text(href).raw("\">").text(cell.text).raw("</a>")
                    } else {
                        html.text(cell.text)
                    }
                    html.raw("</td>")
                }
                html.raw("</tr>\n")
            }
            html.raw("</tbody>\n</table>\n</section>\n")
        case .links(let heading, let links):
            html.raw("<section class=\"links\"><h2>").text(heading).raw("</h2><ul>")
            for link in links {
                html.raw("<li><a href=\"").text(link.href).raw("\">").text(link.label).raw("</a></li>")
            }
            html.raw("</ul></section>\n")
        case .form(let form):
            html.raw("<form class=\"filter\" method=\"").text(form.method).raw("\" action=\"").text(
                form.action
            ).raw("\">")
            for field in form.fields {
                if field.type == "hidden" {
                    html.raw("<input type=\"hidden\" name=\"").text(field.name).raw("\" value=\"").text(
                        field.value
                    ).raw("\">")
                    continue
                }
                let fieldID = "\(id)-\(field.name)"
                html.raw("<label for=\"").text(fieldID).raw("\">").text(field.label).raw("</label> ")
                if !field.options.isEmpty {
                    html.raw("<select id=\"").text(fieldID).raw("\" name=\"").text(field.name).raw("\">")
                    for option in field.options {
                        html.raw("<option value=\"").text(option).raw("\"").raw(
                            option == field.value ? " selected" : ""
                        ).raw(">")
                            .text(field.optionLabels[option] ?? option).raw("</option>")
                    }
                    html.raw("</select> ")
                    continue
                }
                if field.type == "textarea" {
                    html.raw("<textarea id=\"").text(fieldID).raw("\" name=\"").text(field.name).raw(
                        "\" rows=\"8\""
                    )
                    .raw(form.method == "post" && !field.optional ? " required>" : ">").text(field.value).raw(
                        "</textarea> ")
                    continue
                }
                // A day is typed as every table writes it (YYYY-MM-DD), not in the browser's own format.
                let type =
                    field.type == "day"
                    ? """
                    text\" inputmode=\"numeric\" pattern=\"[0-9]{4}-[0-9]{2}-[0-9]{2}\" \
                    placeholder=\"YYYY-MM-DD
                    """
                    : field.type
                html.raw("<input id=\"").text(fieldID)
                    .raw("\" name=\"").text(field.name).raw("\" type=\"").raw(type).raw("\" value=\"").text(
                        field.value
                    )
                    .raw(form.method == "post" && !field.optional ? "\" required> " : "\"> ")
            }
            html.raw("<button type=\"submit\">").text(form.submit).raw("</button></form>\n")
        case .text(let text): html.raw("<p>").text(text).raw("</p>\n")
        case .editor(let editor): renderEditor(editor, id: id, into: html)
        case .card(let card): renderCard(card, id: id, into: html)
        case .publish(let form): renderPublish(form, id: id, into: html)
        }
    }

    /// A horizontal bar chart: one row per label, bar widths relative to the largest value.
    static func bars(
        _ rows: [(label: String, value: Double, shown: String, interval: ClosedRange<Double>?)],
        scale: Double, title: String,
        id: String, into html: HTML
    ) {
        let span = chartWidth - labelWidth - 95
        let height = rows.count * 28 + 8
        html.raw(
            """
            <svg role=\"img\" aria-labelledby=\"\(id)-svg\" viewBox=\"0 0 640 \(height)\" width=\"640\" \
            height=\"\(height)\">\n
            """
        )
        html.raw("<title id=\"\(id)-svg\">").text(title).raw("</title>\n")
        for (index, row) in rows.enumerated() {
            let y = index * 28 + 4
            let width = Int((max(0, row.value) / scale * span).rounded())
            let x = Int(labelWidth)
            html.raw("<text x=\"0\" y=\"\(y + 15)\" class=\"label\">").text(row.label).raw("</text>")
            html.raw("<rect x=\"\(x)\" y=\"\(y)\" width=\"\(width)\" height=\"20\" class=\"bar\"><title>")
                .text(row.label)
                .raw(": ").text(row.shown).raw("</title></rect>")
            // The value is written past the bar and past its interval's line, never over either.
            var end = x + width
            if let interval = row.interval {
                let low = x + Int((interval.lowerBound / scale * span).rounded())
                let high = x + Int((interval.upperBound / scale * span).rounded())
                html.raw(
                    """
                    <line x1=\"\(low)\" y1=\"\(y + 10)\" x2=\"\(high)\" y2=\"\(y + 10)\" class=\"interval\"/>
                    """
                )
                end = max(end, high)
            }
            html.raw("<text x=\"\(end + 6)\" y=\"\(y + 15)\" class=\"value\">").text(row.shown).raw(
                "</text>\n")
        }
        html.raw("</svg>\n")
    }

}
