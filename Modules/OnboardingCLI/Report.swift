import ArgumentParser
import InsightsPages
import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `report`: the funnel of every flow across users, from the journal.
struct Report: ScriptableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract:
            """
            Per flow, across users, from the journal: started, completed, skipped, drop-off and median time \
            per step.
            """
    )
    @OptionGroup var options: CommonOptions
    @Option(help: "Count only runs started on or after this day, YYYY-MM-DD (UTC).") var since: String?
    @Option(
        help:
            """
            flow (the funnel of each flow, the default), variant (each experiment's variants against its \
            control) or accessibility (each flow's funnel per the accessibility settings its runs started \
            with).
            """
    )
    var by: String = "flow"
    @Option(
        name: .customLong("html"),
        help:
            """
            Write the report as one self-contained HTML page to FILE: charts, each with the table of its \
            numbers; no script, nothing loaded from a network.
            """
    )
    var htmlFile: String?

    func validate() throws {
        _ = try sinceDate()
        if let htmlFile {
            func isFolder(_ path: String) -> Bool {
                (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
                    == .typeDirectory
            }
            let parent = URL(fileURLWithPath: htmlFile).deletingLastPathComponent().path
            guard !htmlFile.isEmpty, !htmlFile.hasSuffix("/") else {
                throw ValidationError("--html takes the path of the page to write, such as report.html")
            }
            if isFolder(htmlFile) {
                throw ValidationError("--html takes a file to write; '\(htmlFile.quotable)' is a folder")
            }
            guard isFolder(parent) else {
                throw ValidationError("--html: the folder '\(parent.quotable)' does not exist")
            }
        }
        guard ["flow", "variant", "accessibility"].contains(by) else {
            throw ValidationError("--by takes flow, variant or accessibility; got '\(by.quotable)'")
        }
        if by == "accessibility", htmlFile != nil {
            throw ValidationError(
                """
                --html draws the funnel (--by flow) or the experiments (--by variant); \
                --by accessibility is text or --json
                """
            )
        }
        if by == "variant", since != nil {
            throw ValidationError(
                """
                --since applies to the funnel; --by variant counts every subject an experiment assigned, \
                so it takes no --since
                """
            )
        }
    }

    func sinceDate() throws -> Date? {
        guard let since else { return nil }
        guard let seconds = ISOTime.secondsSince1970(day: since) else {
            throw ValidationError("--since takes a day written YYYY-MM-DD; got '\(since.quotable)'")
        }
        return Date(timeIntervalSince1970: seconds)
    }

    func execute(_ runner: Runner) async throws {
        let app = runner.product.catalog.app
        if htmlFile != nil, runner.json {
            throw CLIFailure.usage("--html writes a page and --json prints JSON: give one of them")
        }
        let rows = try runner.journalWithFacts()
        if let htmlFile {
            try writePage(htmlFile, rows: rows, runner: runner)
            return
        }
        if by == "variant" {
            try ExperimentReportView.show(
                ExperimentTally.reports(app: app, catalog: runner.product.catalog, rows: rows),
                rows: rows.count,
                runner: runner)
            return
        }
        if by == "accessibility" {
            try showByAccessibility(rows, runner: runner)
            return
        }
        let funnels = try FlowFunnel.compute(
            app: app, engine: runner.product.engine, rows: rows, since: try sinceDate())
        let users = Set(rows.map(\.user)).count
        if runner.json {
            struct Body: Encodable {
                var app: String
                var since: String?
                var users: Int
                var journalRows: Int
                var flows: [FlowFunnel]
            }
            let body = Body(app: app, since: since, users: users, journalRows: rows.count, flows: funnels)
            Output.document(try Render.json(body))
            return
        }
        Output.line(
            """
            \(runner.cli.displayName) · funnel from \(rows.count) journal rows of \(users) users\
            \(since.map { " · runs since \($0)" } ?? "")
            """
        )
        show(funnels, runner: runner)
    }

    /// Each flow's funnel per the accessibility settings its runs started with (a run whose
    /// settings changed midway counts under those it started with).
    func showByAccessibility(_ rows: [JournalEntry], runner: Runner) throws {
        let groups = FlowFunnel.compute(
            app: runner.product.catalog.app, engine: runner.product.engine, rows: rows,
            since: try sinceDate(),
            groupedBy: { $0.accessibility.summary })
        if runner.json {
            struct Group: Encodable {
                var settings: String
                var flows: [FlowFunnel]
            }
            struct Body: Encodable {
                var app: String
                var since: String?
                var journalRows: Int
                var groups: [Group]
            }
            let body = Body(
                app: runner.product.catalog.app, since: since, journalRows: rows.count,
                groups: groups.map { Group(settings: $0.group, flows: $0.funnels) })
            Output.document(try Render.json(body))
            return
        }
        Output.line(
            """
            \(runner.cli.displayName) · funnel by accessibility settings from \(rows.count) journal rows\
            \(since.map { " · runs since \($0)" } ?? "")
            """
        )
        if groups.isEmpty { Output.line("No run has started yet.") }
        for group in groups {
            Output.line("")
            Output.line("── \(group.group) ──")
            show(group.funnels.filter { $0.started > 0 }, runner: runner)
        }
    }

    func show(_ funnels: [FlowFunnel], runner: Runner) {
        for funnel in funnels {
            Output.line(
                """
                \(funnel.flow) (\(funnel.name)): started \(funnel.started), completed \(funnel.completed)\
                \(Self.percent(funnel.completionRate)), 
                """
                    + """
                    skipped \(funnel.skipped)\(Self.percent(funnel.skipRate)), in progress \
                    \(funnel.inProgress)
                    """
                    + (funnel.deferredByBudget.map { ", deferred by the display budget \($0)" } ?? "")
            )
            guard funnel.started > 0 else { continue }
            Output.line(
                "  " + "step".padded(to: 22)
                    + "reached  in progress  dropped off  median time")
            let flow = runner.product.catalog.flow(funnel.flow)
            for (index, step) in funnel.steps.enumerated() {
                let median = step.medianSeconds.map { Render.format($0) + " s" } ?? "-"
                // Numbered as the card counts them: a terminal step left out of the count is "done".
                let counted = flow.map { $0.countsTerminalStep ? $0.steps.count : $0.steps.count - 1 } ?? 0
                // A step the catalog no longer has (runs of an older catalog reached it) is "removed".
                let number =
                    step.removed == true ? "removed" : index < counted ? "\(index + 1)/\(counted)" : "done"
                Output.line(
                    "  " + "\(number) \(step.step.rawValue)".padded(to: 22)
                        + String(step.reached).leftPadded(7) + String(step.inProgress).leftPadded(13)
                        + String(step.droppedOff).leftPadded(13) + median.leftPadded(13))
            }
        }
    }

    /// Why a page could not be written, in a few words.
    static func writeFailure(_ error: any Error) -> String {
        switch (error as? CocoaError)?.code {
        case .fileWriteNoPermission?: "permission denied"
        case .fileWriteVolumeReadOnly?: "the file system is read-only"
        case .fileWriteOutOfSpace?: "the disk is full"
        case .fileNoSuchFile?, .fileWriteInvalidFileName?: "the file cannot be made there"
        default: "the system refused it"
        }
    }

    static func percent(_ rate: Double?) -> String {
        rate.map { " (\(Int(($0 * 100).rounded()))%)" } ?? ""
    }

    /// The page `--html` writes: the same charts and tables as the account server's dashboard,
    /// of this device's journal.
    func writePage(_ path: String, rows: [JournalEntry], runner: Runner) throws {
        let product = runner.product
        let app = product.catalog.app
        let users = Set(rows.map(\.user)).count
        var sections: [InsightsPage.Section] = []
        var subtitle = "\(rows.count) journal rows of \(users) users on this device"
        if by == "variant" {
            let reports = ExperimentTally.reports(app: app, catalog: product.catalog, rows: rows)
            sections = reports.map { .arms(ArmFigures($0)) }
            if reports.isEmpty {
                sections = [
                    .text(
                        "No experiments: no flow of this catalog declares one and the journal assigns none.")
                ]
            }
        } else {
            if let since { subtitle += " · runs started since \(since)" }
            let funnels = try FlowFunnel.compute(
                app: app, engine: product.engine, rows: rows, since: try sinceDate())
            sections.append(
                .table(
                    .init(
                        caption: "Runs of each flow",
                        columns: ["Flow", "Started", "Completed", "Skipped", "In progress"],
                        rows: funnels.map { funnel in
                            [
                                .init("\(funnel.flow.rawValue) (\(funnel.name))"), .number(funnel.started),
                                .number(funnel.completed),
                                .number(funnel.skipped), .number(funnel.inProgress),
                            ]
                        })))
            for funnel in funnels where funnel.started > 0 {
                sections.append(
                    .funnel(
                        FunnelFigures(
                            title: "\(funnel.flow.rawValue) (\(funnel.name))", started: funnel.started,
                            steps: funnel.steps.map {
                                ($0.step.rawValue + ($0.removed == true ? " (removed)" : ""), $0.reached)
                            },
                            completed: funnel.completed)))
            }
        }
        let page = InsightsPage(
            title: "\(runner.cli.displayName) onboarding report", subtitle: subtitle, sections: sections,
            footer:
                """
                \(runner.cli.executable) \(OnboardingVersion.current) · written \
                \(ISOTime.string(secondsSince1970: Date().timeIntervalSince1970))
                """
        )
        do {
            try Data(page.render().utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CLIFailure.usage(
                """
                --html could not write '\(path.quotable)' (\(Self.writeFailure(error))); \
                give a FILE in a folder you can write to
                """
            )
        }
        Output.line(
            "wrote \(path) (\(by == "variant" ? "experiments" : "funnels") of \(rows.count) journal rows)")
    }
}
