import TourCore

extension JourneyFigures {
    /// One row per stage: reached, conversions, skipped, abandoned, and the times in milliseconds.
    public var csv: CSVTable {
        CSVTable(
            header: [
                "stage", "step_title", "reached", "from_first", "from_previous", "skipped", "abandoned",
                "median_ms", "p75_ms",
            ],
            rows: stages.map { stage in
                [
                    .text(stage.label), .text(stage.title ?? ""), .number(stage.reached),
                    .decimal(stage.fromFirst),
                    .decimal(stage.fromPrevious), .number(stage.skipped), .number(stage.abandoned),
                    stage.medianMillis.map(CSVTable.Field.number) ?? .text(""),
                    stage.p75Millis.map(CSVTable.Field.number) ?? .text(""),
                ]
            })
    }
}

extension SplitFigures {
    /// One row per (value, stage): started, reached, the share and its 95% interval.
    public var csv: CSVTable {
        CSVTable(
            header: ["split", "value", "stage", "started", "reached", "rate", "rate_low", "rate_high"],
            rows: groups.flatMap { group in
                stages.enumerated().map { index, stage in
                    let proportion = group.conversion(index)
                    let wilson = proportion.wilson()
                    return [
                        .text(split), .text(group.value), .text(stage), .number(proportion.trials),
                        .number(proportion.successes),
                        .decimal(proportion.rate), .decimal(wilson?.lowerBound), .decimal(wilson?.upperBound),
                    ]
                }
            })
    }
}

extension CohortTrendFigures {
    /// One row per period of start: started, completed, the rate and its 95% interval.
    public var csv: CSVTable {
        CSVTable(
            header: [period, "started", "completed", "rate", "rate_low", "rate_high"],
            rows: periods.map { period in
                let wilson = period.rate.wilson()
                return [
                    .text(period.start), .number(period.started), .number(period.completed),
                    .decimal(period.rate.rate),
                    .decimal(wilson?.lowerBound), .decimal(wilson?.upperBound),
                ]
            })
    }
}
