import TourCodec
import TourCore

/// `report --by variant`: each experiment's variants against its control, as a table or JSON.
enum ExperimentReportView {
    static func show(_ reports: [ExperimentReport], rows: Int, runner: Runner) throws {
        if runner.json {
            Output.document(
                try TourValue.members([
                    "app": .string(runner.product.catalog.app), "journalRows": .int(rows),
                    "experiments": .list(reports.map(\.tourValue)),
                ]).jsonText())
            return
        }
        Output.line("\(runner.cli.displayName) · experiments from \(rows) journal rows")
        if reports.isEmpty {
            Output.line("No experiments: no flow of this catalog declares one and the journal assigns none.")
            return
        }
        for report in reports {
            Output.line("")
            Output.line(
                """
                \(report.flow) experiment \(report.experiment) · goal: \(report.goal ?? "unknown") · \
                control: \(report.control ?? "unknown")
                """
            )
            Output.line(
                "  " + "variant".padded(to: 14) + "assigned".leftPadded(9) + "exposed".leftPadded(9)
                    + "goal".leftPadded(7)
                    + "  rate (95% interval)".padded(to: 26)
                    + "  vs control (always-valid 95% interval, p; fixed-horizon)")
            for arm in report.arms {
                let rate = arm.rate.map { "\(percent($0)) (\(range(arm.interval)))" } ?? "-"
                let versus: String
                if arm.variant == report.control {
                    versus = "control"
                } else if let difference = arm.difference {
                    let p = arm.alwaysValidPValue.map { ", p \(ExperimentReport.pText($0))" } ?? ""
                    versus =
                        """
                        \(points(difference)) (\(pointsRange(arm.alwaysValidInterval))\(p); \
                        \(pointsRange(arm.differenceInterval)))
                        """
                        + (arm.verdict.map { " " + $0.rawValue } ?? "")
                } else {
                    versus = "-"
                }
                Output.line(
                    "  " + (arm.variant + (arm.holdout ? " (holdout)" : "")).padded(to: 14)
                        + String(arm.counts.assigned).leftPadded(9) + String(arm.counts.exposed).leftPadded(9)
                        + String(arm.counts.goalReached).leftPadded(7) + "  " + rate.padded(to: 24) + "  "
                        + versus)
            }
            for arm in report.arms where !arm.counts.steps.isEmpty {
                Output.line(
                    "  steps reached, \(arm.variant): "
                        + arm.counts.steps.map { "\($0.step) \($0.reached)" }.joined(separator: ", "))
            }
            Output.line("  → \(report.conclusion)")
            Output.line(
                """
                  (the always-valid interval holds at every look and decides; the fixed-horizon one only \
                when read once, at the planned sample size)
                """
            )
        }
    }

    /// 0.4567 → "45.7%".
    static func percent(_ rate: Double) -> String { Render.format((rate * 1000).rounded() / 10) + "%" }

    static func range(_ interval: ClosedRange<Double>?) -> String {
        guard let interval else { return "-" }
        return "\(percent(interval.lowerBound))–\(percent(interval.upperBound))"
    }

    /// A difference in percentage points: "+9.3 pts".
    static func points(_ difference: Double) -> String {
        let value = (difference * 1000).rounded() / 10
        return (value >= 0 ? "+" : "") + Render.format(value) + " pts"
    }

    static func pointsRange(_ interval: ClosedRange<Double>?) -> String {
        guard let interval else { return "-" }
        return "\(points(interval.lowerBound)) to \(points(interval.upperBound))"
    }
}
