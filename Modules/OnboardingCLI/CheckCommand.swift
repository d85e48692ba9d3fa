import ArgumentParser
import CatalogDocuments
import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `check`: the catalog's problems against what the product's code declares and against its
/// release history, and with `--against` what this build's catalog will do to the runs stored in a
/// database written by an earlier one.
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract:
            """
            Check the catalog: references that name nothing (gates, fields, flows, actions, context keys, \
            effects, payload keys, requests), unreachable steps, dead ends, and its release history (a \
            change without a new version, a step of any shipped version nothing places).
            """,
        discussion: """
            With --catalog FILE, check that document as if it were this build's catalog (against this \
            binary's vocabulary and history). With --published FILE (the server's list, as `GET \
            /v1/apps/APP/catalogs` answers it), the versions published but not compiled in are history \
            too. With --against DB, also forecast the release: per flow and \
            step, how many users (or installs) stored in DB stay, move, restart or finish. Files are only \
            read. Exit status 0 when the catalog is coherent, 1 when it has problems (each on its own line, \
            with its place in the catalog document).
            """)
    @ParentCommand var root: RootCommand

    @Option(
        name: .customLong("against"),
        help: ArgumentHelp("A database written by an earlier release.", valueName: "file"),
        completion: .file(extensions: ["sqlite", "db"]))
    var against: String?

    @Option(
        name: .customLong("catalog"),
        help: ArgumentHelp("A catalog document to check instead of this build's.", valueName: "file"),
        completion: .file(extensions: ["json"]))
    var catalogFile: String?

    @Option(
        name: .customLong("published"),
        help: ArgumentHelp(
            """
            The server's published catalogs (the JSON of GET /v1/apps/APP/catalogs): \
            their versions are history too.
            """,
            valueName: "file"),
        completion: .file(extensions: ["json"]))
    var publishedFile: String?

    func run() async throws {
        let cli = CLIEnvironment.current
        let catalogs = CatalogSources(cli)
        var product = catalogs.product
        var problems: [CatalogProblem]
        let document: CatalogDocument
        if let catalogFile {
            // The document as given (its own vocabulary), so its fingerprint is the file's.
            document = try CatalogSources.read(catalogFile)
            problems = Self.problems(of: document, against: product)
            product.catalog = document.catalog
        } else {
            problems = product.problems
            document = product.document
        }
        let published = try publishedFile.map { try catalogs.published($0) }
        let history = published.map(\.history) ?? catalogs.history
        // The live list leaves withdrawn versions out: a version missing below the newest published
        // one may be one (the server, which keeps every version, checks them when it publishes).
        problems += Self.historyAndTranslationProblems(
            of: document, history: history, allowingGapsBelow: published?.newest)
        let fingerprint = try document.fingerprint()
        let catalog = product.catalog
        let steps = catalog.flows.map(\.steps.count).reduce(0, +)
        let forecast = try against.map { path in
            ReleaseForecast(engine: product.engine, stored: try Self.storedFlows(in: path, app: catalog.app))
        }
        let versions = history.versions
        if root.options.json {
            var body: [String: TourValue] = [
                "app": .string(catalog.app), "catalogVersion": .int(catalog.version),
                "fingerprint": .string(fingerprint),
                "flows": .int(catalog.flows.count), "steps": .int(steps),
                "recordedVersions": .list(versions.map(TourValue.int)),
                "problems": .list(
                    problems.map { problem in
                        var object: [String: TourValue] = [
                            "kind": .string(problem.kind.rawValue), "detail": .string(problem.detail),
                            "path": .string(problem.path),
                        ]
                        if let flow = problem.flow { object["flow"] = .string(flow.rawValue) }
                        if let step = problem.step { object["step"] = .string(step.rawValue) }
                        return .object(object)
                    }),
            ]
            if let catalogFile { body["document"] = .string(catalogFile) }
            if let published { body["publishedVersions"] = .list(published.versions.map(TourValue.int)) }
            if let against, let forecast {
                body["against"] = [
                    "database": .string(against), "forecast": try TourValueEncoder().encode(forecast),
                ]
            }
            Output.document(try TourValue.object(body).jsonText())
        } else {
            var recorded =
                versions.isEmpty
                ? "no version recorded"
                : """
                recorded \(versions.count == 1 ? "version" : "versions") \
                \(versions.map(String.init).joined(separator: ", "))
                """
            if let published {
                recorded +=
                    published.versions.isEmpty
                    ? " (none published)"
                    : " (published: \(published.versions.map(String.init).joined(separator: ", ")))"
            }
            let version =
                """
                catalog version \(catalog.version), fingerprint \(CatalogDocument.short(fingerprint)); \
                \(recorded)
                """
            let name =
                catalogFile.map { "\(cli.displayName)'s catalog document \($0)" }
                ?? "\(cli.displayName)'s catalog"
            if problems.isEmpty {
                Output.line(
                    """
                    \(name): no problems (\(Self.count(catalog.flows.count, "flow")), \
                    \(Self.count(steps, "step")); \(version)).
                    """
                )
            } else {
                Output.line(
                    "\(name): \(problems.count) problem\(problems.count == 1 ? "" : "s") (\(version))")
                for problem in problems { Output.line("  \(problem)") }
            }
            if let against, let forecast { Output.line(Self.describe(forecast, of: catalog, in: against)) }
        }
        if !problems.isEmpty { throw ExitCode(CLIFailure.refusedStatus) }
    }

    /// A document's problems as this binary would run it: coherent against its own vocabulary, and
    /// that vocabulary declared by this binary exactly as the document says.
    /// `document`'s problems beyond its catalog's own: against the release history, and its
    /// translations that still run (by fallback; bad translations are among the catalog's already).
    static func historyAndTranslationProblems(
        of document: CatalogDocument, history: CatalogHistory, allowingGapsBelow newest: Int?
    ) -> [CatalogProblem] {
        history.problems(today: document, allowingGapsBelow: newest)
            + document.catalog.translationProblems.filter { $0.kind != .badTranslation }
    }

    static func problems(of document: CatalogDocument, against product: Product) -> [CatalogProblem] {
        var problems: [CatalogProblem] = []
        let name = product.catalog.name
        if document.catalog.app != product.catalog.app {
            problems.append(
                CatalogProblem(
                    kind: .vocabularyMismatch, flow: nil, step: nil, path: "app",
                    detail: "the document is \(document.catalog.app)'s catalog, not \(product.catalog.app)'s")
            )
        }
        let binary = product.handler.vocabulary
        for effect in document.vocabulary.effects {
            guard let declared = binary.effect(effect.name) else {
                problems.append(
                    CatalogProblem(
                        kind: .vocabularyMismatch, flow: nil, step: nil,
                        path: "vocabulary.effects.\(effect.name)",
                        detail:
                            """
                            the document sends effect '\(effect.name)', which \(name)'s handler does not \
                            declare
                            """
                    ))
                continue
            }
            if declared.payload != effect.payload {
                problems.append(
                    CatalogProblem(
                        kind: .vocabularyMismatch, flow: nil, step: nil,
                        path: "vocabulary.effects.\(effect.name).payload",
                        detail:
                            """
                            the document's effect '\(effect.name)' takes another payload than \(name)'s \
                            handler declares
                            """
                    ))
            }
        }
        for key in document.vocabulary.context {
            let declared = binary.contextKey(key.name)
            if declared?.kind != key.kind || declared?.source != key.source {
                problems.append(
                    CatalogProblem(
                        kind: .vocabularyMismatch, flow: nil, step: nil,
                        path: "vocabulary.context.\(key.name)",
                        detail: declared == nil
                            ? """
                            the document reads context key '\(key.name)', which \(name)'s handler does \
                            not declare
                            """
                            : """
                            the document reads '\(key.name)' as \(key.kind.rawValue) from \
                            \(key.source.rawValue); \(name)'s handler declares it otherwise
                            """
                    ))
            }
        }
        for request in document.vocabulary.requests.sorted() where !binary.requests.contains(request) {
            problems.append(
                CatalogProblem(
                    kind: .vocabularyMismatch, flow: nil, step: nil, path: "vocabulary.requests",
                    detail:
                        "the document makes request '\(request)', which \(name)'s handler does not perform"))
        }
        return problems + document.catalog.problems(declaring: binary)
    }

    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }

    /// The stored flows of `app` in the file at `path`, which must exist (it is never created).
    static func storedFlows(in path: String, app: String) throws -> [String: [FlowID: FlowState]] {
        guard !path.isEmpty, DeviceStore.kind(of: path) == .file else {
            throw CLIFailure.usage(
                "--against names no database file: '\(path.quotable)'. Give the path of a .sqlite file.")
        }
        // Opening a file migrates its schema: the forecast reads a snapshot taken with SQLite's
        // backup API, in memory, so FILE stays as it was.
        do {
            return try DeviceStore.storedFlows(inCopyOf: path, app: app)
        } catch let error as StoreError {
            throw CLIFailure.usage("--against: \(error)")
        }
    }

    static func describe(_ forecast: ReleaseForecast, of catalog: TourCatalog, in path: String) -> String {
        var lines = ["Against \(path) (this build's catalog is version \(forecast.catalogVersion)):"]
        let noun = { (count: Int) in count == 1 ? "1 run" : "\(count) runs" }
        // The catalog's flows in its order, then flows stored runs have that it no longer has.
        var flows = catalog.flows.map(\.id)
        for group in forecast.groups where !flows.contains(group.flow) { flows.append(group.flow) }
        for id in flows {
            let flow = catalog.flow(id)
            let groups = forecast.groups.filter { $0.flow == id }
            let records = forecast.records.filter { $0.flow == id }
            if groups.isEmpty && records.isEmpty { continue }
            lines.append("  \(id)\(flow == nil ? " (not in this catalog)" : "")")
            for group in groups {
                let step = group.fromStep?.rawValue ?? "-"
                let from = "\(step) (v\(group.fromVersion))"
                // Why an undeclared move happens: its step is gone, or the catalog changed under it.
                let stepHere = group.fromStep.flatMap { flow?.step($0) } != nil
                let undeclared =
                    !group.undeclared
                    ? ""
                    : stepHere
                        ? " (not declared: the catalog changed without a new version)"
                        : ": step \(step) not in this catalog, not declared"
                let what =
                    switch group.outcome {
                    case .stays: "stays"
                    case .moved where group.toStep == group.fromStep:
                        "stays on \(step), moved to this catalog's version\(undeclared)"
                    case .moved: "moves to \(group.toStep?.rawValue ?? "-")\(undeclared)"
                    case .restarted: "restarts at \(flow?.steps.first?.id.rawValue ?? "-")\(undeclared)"
                    case .finished: "finishes (completed)\(undeclared)"
                    case .ended:
                        "ends: the flow is not in this catalog\(group.undeclared ? ", not declared" : "")"
                    }
                lines.append("    \(noun(group.subjects)) on \(from): \(what)")
            }
            for record in records {
                lines.append("    \(noun(record.subjects)) \(record.status.rawValue): unchanged")
            }
        }
        if lines.count == 1 { lines.append("  no stored runs of \(catalog.name)") }
        return lines.joined(separator: "\n")
    }
}
