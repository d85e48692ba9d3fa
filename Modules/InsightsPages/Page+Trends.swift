import TourCore

/// The line charts: starts and completions per day, and the completion rate per week (or day) of
/// start. Each has its legend in the page (not only in the SVG's title), labelled axes with several
/// ticks, and its numbers in a table beside it.
extension InsightsPage {
    /// Up to `most` evenly spaced indexes of `count` points, the first and last always among them.
    static func tickIndexes(_ count: Int, most: Int = 6) -> [Int] {
        guard count > 1 else { return count == 1 ? [0] : [] }
        let step = max(1, Int((Double(count - 1) / Double(most - 1)).rounded(.up)))
        var indexes = Array(stride(from: 0, to: count - 1, by: step))
        indexes.append(count - 1)
        return indexes
    }

    /// The frame of a line chart 640 wide: y ticks with their labels, x ticks with theirs, and the
    /// axes' titles. Plots from x 60 to 630, y 10 to 140.
    static func frame(
        yTicks: [(value: Double, label: String)], yMax: Double, xLabels: [(index: Int, label: String)],
        points: Int,
        yTitle: String, xTitle: String, into html: HTML
    ) {
        for tick in yTicks {
            let y = Int((10 + 130 * (1 - tick.value / yMax)).rounded())
            html.raw(
                """
                <line x1=\"60\" y1=\"\(y)\" x2=\"630\" y2=\"\(y)\" class=\"axis\"/><text x=\"54\" y=\"\
                \(y + 4)\" class=\"value end\">
                """
            )
            .text(tick.label).raw("</text>")
        }
        for label in xLabels {
            let x = points > 1 ? 60 + Int((Double(label.index) * 570 / Double(points - 1)).rounded()) : 60
            // The last label ends at its tick, so it stays inside the chart.
            let anchor = points > 1 && label.index == points - 1 ? "end" : "middle"
            html.raw(
                """
                <line x1=\"\(x)\" y1=\"140\" x2=\"\(x)\" y2=\"144\" class=\"axis\"/><text x=\"\(x)\" \
                y=\"158\" class=\"value \(anchor)\">
                """
            )
            .text(label.label).raw("</text>")
        }
        html.raw("<text x=\"12\" y=\"80\" class=\"value middle\" transform=\"rotate(-90 12 80)\">").text(
            yTitle
        ).raw("</text>")
        html.raw("<text x=\"345\" y=\"176\" class=\"value middle\">").text(xTitle).raw("</text>\n")
    }

    static func x(_ index: Int, of count: Int) -> Int {
        count > 1 ? 60 + Int((Double(index) * 570 / Double(count - 1)).rounded()) : 345
    }
    static func y(_ value: Double, max: Double) -> Int { Int((10 + 130 * (1 - value / max)).rounded()) }

    static func renderTrend(_ trend: TrendFigures, id: String, into html: HTML) {
        html.raw("<section class=\"chart\" aria-labelledby=\"\(id)\">\n<h2 id=\"\(id)\">").text(trend.title)
            .raw("</h2>\n")
        if trend.days.isEmpty {
            html.raw("<p>No days in this range.</p>\n")
        } else {
            html.raw(
                """
                <ul class=\"legend\" aria-label=\"Legend\"><li><svg width=\"28\" height=\"10\" \
                aria-hidden=\"true\"><line x1=\"0\" y1=\"5\" x2=\"28\" y2=\"5\" class=\"started\"/></svg> \
                Started (solid)</li>
                """
            )
            html.raw(
                """
                <li><svg width=\"28\" height=\"10\" aria-hidden=\"true\"><line x1=\"0\" y1=\"5\" x2=\"28\" \
                y2=\"5\" class=\"completed\"/></svg> Completed (dashed)</li></ul>\n
                """
            )
        }
        html.raw("<div class=\"pair\">\n")
        if let first = trend.days.first?.day, let last = trend.days.last?.day {
            let most = max(1, trend.days.map { max($0.started, $0.completed) }.max() ?? 1)
            // Whole-number ticks: 0, a quarter, a half, three quarters and the most (rounded, unique).
            var ticks: [Int] = []
            for quarter in 0...4 where !ticks.contains(Int((Double(most) * Double(quarter) / 4).rounded())) {
                ticks.append(Int((Double(most) * Double(quarter) / 4).rounded()))
            }
            func points(_ value: (TrendFigures.Day) -> Int) -> String {
                trend.days.enumerated().map {
                    "\(x($0.offset, of: trend.days.count)),\(y(Double(value($0.element)), max: Double(most)))"
                }
                .joined(separator: " ")
            }
            html.raw(
                """
                <svg role=\"img\" aria-labelledby=\"\(id)-svg\" viewBox=\"0 0 640 184\" width=\"640\" \
                height=\"184\">\n
                """
            )
            html.raw("<title id=\"\(id)-svg\">").text(
                """
                \(trend.title) from \(first) to \(last): started (solid line) and completed (dashed line) \
                per day, at most \(most) (the table beside it has every day)
                """
            ).raw("</title>\n")
            frame(
                yTicks: ticks.map { (Double($0), String($0)) }, yMax: Double(most),
                xLabels: tickIndexes(trend.days.count).map { ($0, String(trend.days[$0].day.dropFirst(5))) },
                points: trend.days.count,
                yTitle: "Subjects", xTitle: "Day (UTC), \(first.prefix(4))", into: html)
            html.raw(
                """
                <polyline points=\"\(points(\.started))\" class=\"started\"/><polyline points=\"\
                \(points(\.completed))\" class=\"completed\"/>\n</svg>\n
                """
            )
        }
        html.raw("<table data-chart=\"trend\" id=\"\(id)-table\">\n<caption>").text(trend.title).raw(
            "</caption>\n")
        html.raw(
            """
            <thead><tr><th scope=\"col\">Day (UTC)</th><th scope=\"col\">Started</th><th \
            scope=\"col\">Completed</th></tr></thead>\n<tbody>
            """
        )
        for day in trend.days {
            html.raw("<tr><th scope=\"row\">").text(day.day).raw(
                "</th><td class=\"n\" data-field=\"started\">\(day.started)</td>")
            html.raw("<td class=\"n\" data-field=\"completed\">\(day.completed)</td></tr>\n")
        }
        html.raw("</tbody>\n</table>\n</div>\n</section>\n")
    }

    static func renderCohortTrend(_ trend: CohortTrendFigures, choices: [Link], id: String, into html: HTML) {
        html.raw("<section class=\"chart\" aria-labelledby=\"\(id)\">\n<h2 id=\"\(id)\">").text(trend.title)
            .raw("</h2>\n")
        choiceLinks(choices, label: "Per", into: html)
        let periods = trend.periods
        guard let firstStart = periods.first?.start, let lastStart = periods.last?.start else {
            html.raw("<p>No journeys started in this range.</p>\n</section>\n")
            return
        }
        html.raw(
            """
            <ul class=\"legend\" aria-label=\"Legend\"><li><svg width=\"28\" height=\"10\" \
            aria-hidden=\"true\"><line x1=\"0\" y1=\"5\" x2=\"28\" y2=\"5\" class=\"started\"/></svg> \
            Completion rate</li>
            """
        )
        html.raw(
            """
            <li><svg width=\"28\" height=\"10\" aria-hidden=\"true\"><rect width=\"28\" height=\"10\" \
            class=\"band\"/></svg> Its 95% interval</li></ul>\n<div class=\"pair\">\n
            """
        )
        html.raw(
            """
            <svg role=\"img\" aria-labelledby=\"\(id)-svg\" viewBox=\"0 0 640 184\" width=\"640\" \
            height=\"184\">\n<title id=\"\(id)-svg\">
            """
        ).text(
            """
            \(trend.title): the share of the journeys started each \(trend.period) that completed, \
            with its 95% interval, from \(firstStart) to \(lastStart) (the table beside it has every \
            \(trend.period))
            """
        ).raw("</title>\n")
        frame(
            yTicks: [0, 0.25, 0.5, 0.75, 1].map { ($0, percent($0)) }, yMax: 1,
            xLabels: tickIndexes(periods.count).map { ($0, String(periods[$0].start.dropFirst(5))) },
            points: periods.count,
            yTitle: "Completed",
            xTitle: "\(trend.period == "week" ? "Week" : "Day") of start (UTC), from \(firstStart)",
            into: html)
        // The interval as a band (only periods with starts), then the rate as a line with points.
        let measured = periods.enumerated().filter { $0.element.started > 0 }
        // Each measured period's interval (a period with starts always has one).
        let intervals = measured.compactMap { period in
            period.element.rate.wilson().map { (x: x(period.offset, of: periods.count), interval: $0) }
        }
        if !measured.isEmpty {
            let upper = intervals.map { "\($0.x),\(y($0.interval.upperBound, max: 1))" }
            let lower = intervals.reversed().map { "\($0.x),\(y($0.interval.lowerBound, max: 1))" }
            html.raw("<polygon points=\"\((upper + lower).joined(separator: " "))\" class=\"band\"/>")
            html.raw("<polyline points=\"").raw(
                measured.map { "\(x($0.offset, of: periods.count)),\(y($0.element.rate.rate ?? 0, max: 1))" }
                    .joined(separator: " ")
            ).raw("\" class=\"started\"/>")
            for (index, period) in measured {
                html.raw(
                    """
                    <circle cx=\"\(x(index, of: periods.count))\" cy=\"\(y(period.rate.rate ?? 0, max: 1))\" \
                    r=\"3\" class=\"point\"><title>
                    """
                )
                .text("\(period.start): \(percent(period.rate.rate)) of \(period.started)").raw(
                    "</title></circle>")
            }
        }
        html.raw("\n</svg>\n<table data-chart=\"cohorts\" id=\"\(id)-table\">\n<caption>").text(trend.title)
            .raw("</caption>\n<thead><tr>")
        for column in [
            trend.period == "week" ? "Week of start (UTC)" : "Day of start (UTC)", "Started", "Completed",
            "Completion rate", "95% interval",
        ] {
            html.raw("<th scope=\"col\">").text(column).raw("</th>")
        }
        html.raw("</tr></thead>\n<tbody>")
        for period in periods {
            html.raw("<tr><th scope=\"row\">").text(period.start).raw(
                "</th><td class=\"n\" data-field=\"started\">\(period.started)</td>")
            html.raw(
                """
                <td class=\"n\" data-field=\"completed\">\(period.completed)</td><td class=\"n\" \
                data-field=\"rate\">
                """
            ).text(percent(period.rate.rate))
                .raw("</td><td class=\"n\">").text(interval(period.rate.wilson())).raw("</td></tr>\n")
        }
        html.raw("</tbody>\n</table>\n</div>\n</section>\n")
    }
}
