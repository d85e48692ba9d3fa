// A page's funnels and an experiment's arms: their figures as HTML.
extension InsightsPage {
    static func renderFunnel(_ funnel: FunnelFigures, id: String, into html: HTML) {
        html.raw("<section class=\"chart\" aria-labelledby=\"\(id)\">\n<h2 id=\"\(id)\">").text(funnel.title)
            .raw("</h2>\n<div class=\"pair\">\n")
        bars(
            funnel.stages.map { ($0.label, Double($0.reached), String($0.reached), nil) },
            scale: Double(max(1, funnel.stages.map(\.reached).max() ?? 1)),
            title: "\(funnel.title): how many reached each stage (the table beside it has the numbers)",
            id: id, into: html)
        html.raw("<table data-chart=\"funnel\" id=\"\(id)-table\">\n<caption>").text(funnel.title).raw(
            "</caption>\n")
        html.raw(
            """
            <thead><tr><th scope=\"col\">Stage</th><th scope=\"col\">Reached</th><th \
            scope=\"col\">Dropped</th><th scope=\"col\">Drop-off</th></tr></thead>\n<tbody>
            """
        )
        for stage in funnel.stages {
            html.raw("<tr><th scope=\"row\">").text(stage.label).raw(
                "</th><td class=\"n\" data-field=\"reached\">\(stage.reached)</td>")
            html.raw(
                """
                <td class=\"n\" data-field=\"dropped\">\(stage.dropped)</td><td class=\"n\" \
                data-field=\"dropOff\">
                """
            )
            .text(percent(stage.dropOff)).raw("</td></tr>\n")
        }
        html.raw("</tbody>\n</table>\n</div>\n</section>\n")
    }

    /// What each interval of the difference promises, under the experiment's table.
    static let intervalsNote =
        """
        Differences are in percentage points (pts). The always-valid interval and p-value (mSPRT) hold \
        however often this page is read, and the verdict uses them: with no true difference, \
        it names one in at most 5% of experiments, read every day. The fixed-horizon interval (Newcombe) \
        holds only when read once, at the sample size planned before the experiment started; read every day, \
        it names a difference that is not there in about 29% of experiments (Docs/Publishing.md, \
        \"Experiments you may peek at\").
        """

    /// A difference in percentage points: "+9.3 pts", "−7.5 pts".
    static func points(_ difference: Double) -> String {
        let tenths = Int((difference * 1000).rounded())
        let text = "\(abs(tenths) / 10).\(abs(tenths) % 10) pts"
        return tenths > 0 ? "+" + text : tenths < 0 ? "−" + text : text
    }

    static func pointsInterval(_ range: ClosedRange<Double>?) -> String {
        guard let range else { return "–" }
        return "\(points(range.lowerBound)) to \(points(range.upperBound))"
    }

    /// A p-value as the page shows it: "0.0123", "< 0.0001".
    static func pValue(_ p: Double) -> String {
        if p < 0.0001 { return "< 0.0001" }
        let scaled = Int((p * 10_000).rounded())
        let fraction = String(scaled % 10_000)
        return "\(scaled / 10_000).\(String(repeating: "0", count: 4 - fraction.count))\(fraction)"
    }

    static func renderArms(_ arms: ArmFigures, id: String, into html: HTML) {
        let title = "Experiment \(arms.experiment)"
        html.raw("<section class=\"chart\" aria-labelledby=\"\(id)\">\n<h2 id=\"\(id)\">").text(title).raw(
            "</h2>\n")
        html.raw("<p>").text("Goal: \(arms.goal). \(arms.conclusion)").raw("</p>\n<div class=\"pair\">\n")
        bars(
            arms.arms.map {
                ($0.variant + ($0.control ? " (control)" : ""), $0.rate ?? 0, percent($0.rate), $0.interval)
            },
            scale: 1, title: "\(title): the goal rate of each variant with its 95% interval", id: id,
            into: html)
        html.raw("<table data-chart=\"arms\" id=\"\(id)-table\">\n<caption>").text(title).raw(
            "</caption>\n<thead><tr>")
        for column in [
            "Variant", "Assigned", "Exposed", "Reached the goal", "Goal rate", "95% interval",
            "Difference to control",
            "Always-valid 95% interval", "Always-valid p", "Fixed-horizon 95% interval", "Verdict",
        ] {
            html.raw("<th scope=\"col\">").text(column).raw("</th>")
        }
        html.raw("</tr></thead>\n<tbody>")
        for arm in arms.arms {
            html.raw("<tr><th scope=\"row\">").text(arm.variant + (arm.control ? " (control)" : "")).raw(
                "</th>")
            html.raw(
                """
                <td class=\"n\" data-field=\"assigned\">\(arm.assigned)</td><td class=\"n\" \
                data-field=\"exposed\">\(arm.exposed)</td>
                """
            )
            html.raw(
                """
                <td class=\"n\" data-field=\"goalReached\">\(arm.goalReached)</td><td class=\"n\" \
                data-field=\"rate\">
                """
            ).text(percent(arm.rate))
            html.raw("</td><td class=\"n\">").text(interval(arm.interval)).raw(
                "</td><td class=\"n\" data-field=\"difference\">"
            )
            .text(arm.difference.map { points($0) } ?? "–")
            html.raw("</td><td class=\"n\" data-field=\"alwaysValidInterval\">").text(
                pointsInterval(arm.alwaysValidInterval))
            html.raw("</td><td class=\"n\" data-field=\"alwaysValidP\">").text(
                arm.alwaysValidPValue.map(pValue) ?? "–")
            html.raw("</td><td class=\"n\" data-field=\"fixedHorizonInterval\">").text(
                pointsInterval(arm.differenceInterval))
            html.raw("</td><td data-field=\"verdict\">").text(arm.verdict ?? "–").raw("</td></tr>\n")
        }
        html.raw("</tbody>\n</table>\n</div>\n")
        html.raw("<p class=\"note\">").text(Self.intervalsNote).raw("</p>\n</section>\n")
    }
}
