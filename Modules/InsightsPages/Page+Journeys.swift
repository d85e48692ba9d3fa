import TourCore

/// The journey sections: the funnel with conversions, skips, abandonment and times; one
/// split on one scale; an experiment's sample size. As everywhere on a page, every value goes
/// through ``HTML/text(_:)`` and every chart has a text title and its numbers in a table beside it.
extension InsightsPage {
    /// A number with thousands separated ("12,345"), as the tables write counts a person compares.
    static func count(_ value: Int) -> String {
        let digits = String(abs(value))
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { grouped += "," }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    static func renderJourney(_ journey: JourneyFigures, id: String, into html: HTML) {
        html.raw("<section class=\"chart\" aria-labelledby=\"\(id)\">\n<h2 id=\"\(id)\">").text(journey.title)
            .raw("</h2>\n<div class=\"pair\">\n")
        bars(
            journey.stages.map { stage in
                (
                    stage.title.map { "\(stage.label) (\($0))" } ?? stage.label, Double(stage.reached),
                    "\(stage.reached) (\(percent(stage.fromFirst)))", nil
                )
            },
            scale: Double(max(1, journey.stages.map(\.reached).max() ?? 1)),
            title:
                """
                \(journey.title): how many reached each stage and that share of those who started (the table \
                beside it has every number)
                """,
            id: id, into: html)
        html.raw("<table data-chart=\"funnel\" id=\"\(id)-table\">\n<caption>").text(journey.title).raw(
            "</caption>\n<thead><tr>")
        for column in [
            "Stage", "Step title", "Reached", "From start", "From previous", "Skipped", "Abandoned",
            "Median time from start",
            "75th percentile",
        ] {
            html.raw("<th scope=\"col\">").text(column).raw("</th>")
        }
        html.raw("</tr></thead>\n<tbody>")
        for stage in journey.stages {
            html.raw("<tr><th scope=\"row\">").text(stage.label).raw("</th><td>").text(stage.title ?? "–")
                .raw("</td>")
            html.raw("<td class=\"n\" data-field=\"reached\">\(stage.reached)</td>")
            html.raw("<td class=\"n\" data-field=\"fromFirst\">").text(percent(stage.fromFirst)).raw("</td>")
            html.raw("<td class=\"n\" data-field=\"fromPrevious\">").text(percent(stage.fromPrevious)).raw(
                "</td>")
            for (field, value, href) in [
                ("skipped", stage.skipped, stage.skippedHref),
                ("abandoned", stage.abandoned, stage.abandonedHref),
            ] {
                html.raw("<td class=\"n\" data-field=\"\(field)\">")
                if let href, value > 0 {
                    html.raw("<a href=\"").text(href).raw("\" aria-label=\"").text(
                        "\(value) \(field) at \(stage.label): who they are"
                    )
                    .raw("\">\(value)</a>")
                } else {
                    html.raw("\(value)")
                }
                html.raw("</td>")
            }
            html.raw(
                """
                <td class=\"n\" data-field=\"median\" data-ms=\"\(stage.medianMillis.map(String.init) ?? "")\
                \">
                """
            )
            .text(StageTimes.text(milliseconds: stage.medianMillis)).raw("</td>")
            html.raw(
                "<td class=\"n\" data-field=\"p75\" data-ms=\"\(stage.p75Millis.map(String.init) ?? "")\">"
            )
            .text(StageTimes.text(milliseconds: stage.p75Millis)).raw("</td></tr>\n")
        }
        html.raw("</tbody>\n</table>\n</div>\n")
        html.raw("<p class=\"note\">").text(
            """
            Each subject's first run, counted by the day it started. From start: of those who started; \
            from previous: of those who reached the stage before. 
            """
                + """
                Skipped: ended there with Skip or a dismissal. Abandoned: still there, \
                with no further step. Times: from the start to the first reach of the stage, \
                to two significant figures.
                """
        ).raw("</p>\n</section>\n")
    }

    /// The colours of a split's groups (each at least 4.5:1 against the page, light and dark).
    static let groupCount = 6

    static func renderSplit(_ split: SplitFigures, choices: [Link], id: String, into html: HTML) {
        let title = "Compared by \(split.split)"
        html.raw("<section class=\"chart\" aria-labelledby=\"\(id)\">\n<h2 id=\"\(id)\">").text(title).raw(
            "</h2>\n")
        choiceLinks(choices, label: "Compare by", into: html)
        guard !split.groups.isEmpty else {
            html.raw("<p>No journeys started in this range.</p>\n</section>\n")
            return
        }
        // The legend, in the page: each group's swatch, name and starts.
        html.raw("<ul class=\"legend\" aria-label=\"Legend\">")
        for (index, group) in split.groups.enumerated() {
            html.raw(
                """
                <li><svg width=\"14\" height=\"14\" aria-hidden=\"true\"><rect width=\"14\" height=\"14\" \
                class=\"g\(index % groupCount)\"/></svg> 
                """
            )
            .text("\(group.label) (\(count(group.reached.first ?? 0)) started)").raw("</li>")
        }
        html.raw("</ul>\n<div class=\"pair\">\n")
        // Grouped bars: per stage, one bar per group, each its share of that group's starts, on one
        // 0-100% scale with its 95% interval.
        let groups = split.groups.count
        let rowHeight = 16
        let blockHeight = groups * rowHeight + 12
        let top = 8
        let height = top + split.stages.count * blockHeight + 34
        let left = Int(labelWidth)
        let span = chartWidth - labelWidth - 70
        html.raw(
            """
            <svg role=\"img\" aria-labelledby=\"\(id)-svg\" viewBox=\"0 0 640 \(height)\" width=\"640\" \
            height=\"\(height)\">\n
            """
        )
        html.raw("<title id=\"\(id)-svg\">").text(
            """
            \(title): for each stage, the share of each \(split.split)'s starts that reached it, \
            with its 95% interval, on one scale from 0% to 100% (the table beside it has every number)
            """
        ).raw("</title>\n")
        let axisY = top + split.stages.count * blockHeight + 4
        for tick in stride(from: 0, through: 100, by: 25) {
            let x = left + Int((Double(tick) / 100 * span).rounded())
            html.raw("<line x1=\"\(x)\" y1=\"\(top)\" x2=\"\(x)\" y2=\"\(axisY)\" class=\"axis\"/>")
            html.raw("<text x=\"\(x)\" y=\"\(axisY + 14)\" class=\"value middle\">\(tick)%</text>")
        }
        html.raw("<text x=\"\(left + Int(span / 2))\" y=\"\(axisY + 28)\" class=\"value middle\">").text(
            "Share of starts that reached the stage"
        )
        .raw("</text>\n")
        for (stageIndex, stage) in split.stages.enumerated() {
            let y0 = top + stageIndex * blockHeight
            html.raw("<text x=\"0\" y=\"\(y0 + blockHeight / 2 + 2)\" class=\"label\">").text(stage).raw(
                "</text>")
            for (groupIndex, group) in split.groups.enumerated() {
                let y = y0 + groupIndex * rowHeight
                let proportion = group.conversion(stageIndex)
                let width = Int(((proportion.rate ?? 0) * span).rounded())
                html.raw(
                    """
                    <rect x=\"\(left)\" y=\"\(y)\" width=\"\(width)\" height=\"\(rowHeight - 3)\" class=\"g\
                    \(groupIndex % groupCount)\"><title>
                    """
                )
                .text(
                    "\(stage), \(group.label): \(percent(proportion.rate)) (\(interval(proportion.wilson())))"
                ).raw("</title></rect>")
                if let wilson = proportion.wilson() {
                    let low = left + Int((wilson.lowerBound * span).rounded())
                    let high = left + Int((wilson.upperBound * span).rounded())
                    html.raw(
                        """
                        <line x1=\"\(low)\" y1=\"\(y + 6)\" x2=\"\(high)\" y2=\"\(y + 6)\" \
                        class=\"interval\"/>
                        """
                    )
                }
            }
            html.raw("\n")
        }
        html.raw("</svg>\n<table data-chart=\"split\" id=\"\(id)-table\">\n<caption>").text(title).raw(
            "</caption>\n<thead><tr><th scope=\"col\">Stage</th>")
        for group in split.groups { html.raw("<th scope=\"col\">").text(group.label).raw("</th>") }
        html.raw("</tr></thead>\n<tbody>")
        for (stageIndex, stage) in split.stages.enumerated() {
            html.raw("<tr><th scope=\"row\">").text(stage).raw("</th>")
            for group in split.groups {
                let proportion = group.conversion(stageIndex)
                html.raw(
                    """
                    <td class=\"n\" data-reached=\"\(proportion.successes)\" data-started=\"\
                    \(proportion.trials)\">
                    """
                )
                .text(
                    """
                    \(count(proportion.successes)) of \(count(proportion.trials)): \
                    \(percent(proportion.rate)) (\(interval(proportion.wilson())))
                    """
                )
                .raw("</td>")
            }
            html.raw("</tr>\n")
        }
        html.raw("</tbody>\n</table>\n</div>\n<p class=\"note\">").text(
            """
            Each cell: of the journeys that started with that \(split.split), how many reached the stage, \
            and the share with its 95% (Wilson) interval.
            """
        ).raw("</p>\n</section>\n")
    }

    /// A row of links that choose among views of one section, the current one marked.
    static func choiceLinks(_ choices: [Link], label: String, into html: HTML) {
        guard !choices.isEmpty else { return }
        html.raw("<nav class=\"choices\" aria-label=\"").text(label).raw("\">").text(label + ": ")
        for choice in choices {
            html.raw("<a href=\"").text(choice.href).raw("\"").raw(
                choice.current ? " aria-current=\"true\"" : ""
            ).raw(">")
                .text(choice.label).raw("</a> ")
        }
        html.raw("</nav>\n")
    }

    static func renderSampleSize(_ figures: SampleSizeFigures, form: Form, id: String, into html: HTML) {
        let title = "Sample size of experiment \(figures.experiment)"
        html.raw("<section aria-labelledby=\"\(id)\">\n<h2 id=\"\(id)\">").text(title).raw("</h2>\n")
        render(.form(form), id: id + "f", into: html)
        let effect = percentagePoints(figures.effect)
        if let needed = figures.needed, let baseline = figures.baseline {
            html.raw("<p>").text(
                """
                To tell a difference of \(effect) from the control's goal rate of \(percent(baseline)) \
                (power 80%, two-sided 5%), each variant needs \(count(needed)) subjects.
                """
            ).raw("</p>\n")
        } else {
            html.raw("<p>").text(
                """
                No estimate yet: the control needs subjects and a goal rate that leaves room for a \
                difference of \(effect).
                """
            ).raw("</p>\n")
        }
        html.raw("<table data-chart=\"sample\" id=\"\(id)-table\">\n<caption>").text(title).raw(
            "</caption>\n<thead><tr>")
        for column in [
            "Variant", "Assigned", "Needed", "Still to go", "Assigned in the last 7 days",
            "Expected on (UTC)",
        ] {
            html.raw("<th scope=\"col\">").text(column).raw("</th>")
        }
        html.raw("</tr></thead>\n<tbody>")
        for arm in figures.arms {
            let toGo = figures.needed.map { max(0, $0 - arm.assigned) }
            let expected: String =
                if let toGo, toGo == 0 { "reached" } else if let day = arm.expected {
                    day
                } else if figures.needed == nil { "–" } else {
                    "not at this pace (none in 7 days)"
                }
            html.raw("<tr><th scope=\"row\">").text(arm.variant).raw(
                "</th><td class=\"n\" data-field=\"assigned\">\(arm.assigned)</td>")
            html.raw("<td class=\"n\" data-field=\"needed\">").text(figures.needed.map(String.init) ?? "–")
                .raw("</td>")
            html.raw("<td class=\"n\" data-field=\"toGo\">").text(toGo.map(String.init) ?? "–").raw("</td>")
            html.raw(
                "<td class=\"n\" data-field=\"lastWeek\">\(arm.lastWeek)</td><td data-field=\"expected\">"
            ).text(expected).raw("</td></tr>\n")
        }
        html.raw("</tbody>\n</table>\n<p class=\"note\">").text(
            """
            n = (1.96·√(2·p̄(1−p̄)) + 0.8416·√(p₁(1−p₁) + p₂(1−p₂)))² \
            / (p₂ − p₁)², \
            p₁ the control's rate, \
            p₂ = p₁ + the difference, p̄ their mean (Fleiss, no continuity correction); \
            the date assumes the last 7 days' pace.
            """
        ).raw("</p>\n</section>\n")
    }

    /// `0.05` → "5 percentage points" (one decimal when needed).
    static func percentagePoints(_ share: Double) -> String {
        let tenths = Int((share * 1000).rounded())
        let text = tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(abs(tenths) % 10)"
        return "\(text) percentage point\(tenths == 10 ? "" : "s")"
    }
}
