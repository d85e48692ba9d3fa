/// The numbers of a page as CSV (RFC 4180): a header row, then one row per line, every field that
/// needs it quoted. A text field that a spreadsheet would read as a formula (starting with `=`,
/// `+`, `-`, `@`, a tab or a carriage return) is prefixed with `'`, so an exported step id never
/// runs in the spreadsheet that opens it.
public struct CSVTable: Equatable, Sendable {
    public enum Field: Equatable, Sendable {
        case text(String)
        case number(Int)
        case decimal(Double?)
    }

    public var header: [String]
    public var rows: [[Field]]

    public init(header: [String], rows: [[Field]]) {
        self.header = header
        self.rows = rows
    }

    public var text: String {
        var lines = [header.map { Self.quoted($0) }.joined(separator: ",")]
        for row in rows {
            lines.append(
                row.map { field in
                    switch field {
                    case .text(let text): Self.quoted(Self.inert(text))
                    case .number(let number): String(number)
                    case .decimal(let value): value.map(Self.decimal) ?? ""
                    }
                }.joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Six decimals (`0.255319`), without `String(format:)` (which is Foundation's, not the
    /// standard library's).
    public static func decimal(_ value: Double) -> String {
        guard value.isFinite else { return "" }
        let millionths = Int((value * 1_000_000).rounded())
        let whole = abs(millionths) / 1_000_000
        let fraction = String(abs(millionths) % 1_000_000)
        return (millionths < 0 ? "-" : "") + "\(whole)." + String(repeating: "0", count: 6 - fraction.count)
            + fraction
    }

    static func inert(_ text: String) -> String {
        guard let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else {
            return text
        }
        return "'" + text
    }

    static func quoted(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else {
            return text
        }
        return "\"" + text.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"")
            + "\""
    }
}

extension FunnelFigures {
    /// Rows of `split,stage,reached,dropped,drop_off` for each funnel.
    public static func csv(_ funnels: [FunnelFigures]) -> CSVTable {
        CSVTable(
            header: ["split", "stage", "reached", "dropped", "drop_off"],
            rows: funnels.flatMap { funnel in
                funnel.stages.map {
                    [
                        .text(funnel.title), .text($0.label), .number($0.reached), .number($0.dropped),
                        .decimal($0.dropOff),
                    ]
                }
            })
    }
}

extension TrendFigures {
    public var csv: CSVTable {
        CSVTable(
            header: ["day", "started", "completed"],
            rows: days.map { [.text($0.day), .number($0.started), .number($0.completed)] })
    }
}

extension ArmFigures {
    /// Rows of each experiment's variants: subjects, the goal rate with its 95% interval, and the
    /// difference to control with its interval (empty where there is none).
    public static func csv(_ experiments: [ArmFigures]) -> CSVTable {
        CSVTable(
            header: [
                "experiment", "variant", "control", "assigned", "exposed", "goal_reached", "goal_rate",
                "goal_rate_low",
                "goal_rate_high", "difference", "difference_low", "difference_high", "always_valid_low",
                "always_valid_high", "always_valid_p", "verdict",
            ],
            rows: experiments.flatMap { experiment in
                experiment.arms.map { arm in
                    [
                        .text(experiment.experiment), .text(arm.variant), .text(arm.control ? "yes" : "no"),
                        .number(arm.assigned), .number(arm.exposed), .number(arm.goalReached),
                        .decimal(arm.rate),
                        .decimal(arm.interval?.lowerBound), .decimal(arm.interval?.upperBound),
                        .decimal(arm.difference),
                        .decimal(arm.differenceInterval?.lowerBound),
                        .decimal(arm.differenceInterval?.upperBound),
                        .decimal(arm.alwaysValidInterval?.lowerBound),
                        .decimal(arm.alwaysValidInterval?.upperBound),
                        .decimal(arm.alwaysValidPValue),
                        .text(arm.verdict ?? ""),
                    ]
                }
            })
    }
}
