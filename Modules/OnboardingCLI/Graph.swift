import ArgumentParser
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `graph`: the flows as diagrams, generated from their definitions.
struct Graph: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract:
            "Each flow (or --flow F) as a diagram generated from its definition: Mermaid or Graphviz DOT.",
        discussion:
            """
            With --json: {\"format\": ..., \"flows\": [{\"flow\": ..., \"diagram\": TEXT}]}, \
            one diagram per flow.
            """
    )
    @Option(
        help: "One flow\(ProductHelp.suffix(ProductHelp.flowNames(replayable: false))).",
        completion: .list(ProductHelp.flowNames(replayable: false)))
    var flow: String?
    @Option(help: "mermaid or dot.", completion: .list(FlowDiagram.Format.allNames)) var format: String =
        "mermaid"
    /// `--json` is the root's option (every command's); a flag of its own here would be shadowed.
    @ParentCommand var root: RootCommand
    var json: Bool { root.options.json }

    func run() async throws {
        let catalog = CLIEnvironment.current.catalog
        guard let format = FlowDiagram.Format(rawValue: format) else {
            throw CLIFailure.usage(
                """
                --format is \(FlowDiagram.Format.allNames.joined(separator: " or ")); \
                got '\(format.quotable)'
                """,
                allowed: FlowDiagram.Format.allNames,
                suggestion: NameSuggestion.nearest(to: format, in: FlowDiagram.Format.allNames))
        }
        var flows = catalog.flows
        if let flow {
            flows = flows.filter { $0.id.rawValue == flow }
            guard !flows.isEmpty else { throw unknownFlow(flow, in: catalog) }
        }
        if json {
            struct Body: Encodable {
                var app: String
                var format: String
                var flows: [Diagram]
            }
            struct Diagram: Encodable {
                var flow: String
                var name: String
                var diagram: String
            }
            let body = Body(
                app: catalog.app, format: format.rawValue,
                flows: flows.map {
                    Diagram(flow: $0.id.rawValue, name: $0.name, diagram: FlowDiagram($0).render(format))
                })
            Output.document(try Render.json(body))
            return
        }
        Output.line(flows.map { FlowDiagram($0).render(format) }.joined(separator: "\n\n"))
    }
}

/// The refusal of a flow name the product does not have, with the nearest one.
func unknownFlow(_ name: String, in catalog: TourCatalog) -> CLIFailure {
    let names = catalog.flows.map(\.id.rawValue)
    let suggestion = NameSuggestion.nearest(to: name, in: names)
    return CLIFailure(
        code: TourRefusal.Code.unknownFlow.rawValue,
        message:
            """
            unknown \(catalog.flowNoun) '\(name.quotable)'.\
            \(suggestion.map { " Did you mean '\($0)'?" } ?? "") Flows: \(names.joined(separator: ", ")).
            """,
        allowed: names, suggestion: suggestion, exitCode: CLIFailure.refusedStatus)
}

extension FlowDiagram.Format {
    static var allNames: [String] { allCases.map(\.rawValue) }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
