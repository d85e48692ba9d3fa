/// A flow drawn from its definition: steps, how each completes, skip and back edges, inclusion
/// conditions, timers and triggers. Mermaid for the docs, DOT for Graphviz.
public struct FlowDiagram: Sendable {
    public enum Format: String, CaseIterable, Sendable {
        case mermaid, dot
    }

    struct Node {
        var id: String
        var label: String
        var terminal: Bool
    }

    struct Edge {
        var from: String
        var to: String
        var label: String
        var dashed: Bool
    }

    let flow: FlowDefinition
    var nodes: [Node] = []
    var edges: [Edge] = []

    public init(_ flow: FlowDefinition) {
        self.flow = flow
        let start = "start"
        let triggers = flow.triggers.map { trigger -> String in
            var text = trigger.moment.summary
            if trigger.when != .always { text += " when \(trigger.when.summary)" }
            if trigger.delay > 0 { text += " after \(Self.seconds(trigger.delay))" }
            return text
        }
        nodes.append(
            Node(
                id: start, label: triggers.isEmpty ? "replay only" : triggers.joined(separator: "\nor "),
                terminal: true))
        for step in flow.steps {
            var label = "\(step.id)\n\(step.content.title)"
            if step.includedWhen != .always { label += "\nonly when \(step.includedWhen.summary)" }
            if !step.gates.isEmpty {
                label +=
                    "\nasks "
                    + step.gates.map { "\($0.id)\($0.required ? "" : " (optional)")" }.joined(separator: ", ")
            }
            nodes.append(Node(id: step.id.rawValue, label: label, terminal: false))
        }
        let completed = "completed"
        let skipped = "skipped"
        nodes.append(Node(id: completed, label: "completed", terminal: true))
        let skipRecord: String =
            switch flow.skip {
            case .recordSkipped: "skipped"
            case .countsAsCompleted: "skipped (recorded completed)"
            case .recordsNothing: "skipped (shows again)"
            }
        if flow.steps.contains(where: \.canSkip) {
            nodes.append(Node(id: skipped, label: skipRecord, terminal: true))
        }
        if let first = flow.steps.first {
            edges.append(Edge(from: start, to: first.id.rawValue, label: "", dashed: false))
        }
        for (index, step) in flow.steps.enumerated() {
            let next = index + 1 < flow.steps.count ? flow.steps[index + 1].id.rawValue : completed
            // An action that waits for the step's required gates says which; a gate's answer moves
            // the step on only where the gate says so (asking alone does not, and an optional
            // gate's answer never holds the step back).
            let required = step.gates.filter(\.required).map(\.id)
            var advancing = step.actions.filter { $0.outcome == .advance }.map { action in
                let waits = action.preconditions.contains {
                    if case .requiredGatesGranted = $0 { true } else { false }
                }
                return waits && !required.isEmpty
                    ? "\(action.name) once \(required.joined(separator: " and ")) granted" : action.name
            }
            advancing += step.gates.filter(\.advancesWhenGranted).map { "\($0.id) granted" }
            if let after = step.autoAdvanceAfter { advancing.append("after \(Self.seconds(after))") }
            let label = Self.unique(advancing).joined(separator: ", ")
            edges.append(Edge(from: step.id.rawValue, to: next, label: label, dashed: false))
            let dismissals = step.actions.filter { $0.outcome.endsFlow }.map(\.name)
            if !dismissals.isEmpty {
                edges.append(
                    Edge(
                        from: step.id.rawValue, to: skipped, label: dismissals.joined(separator: ", "),
                        dashed: true))
            }
            if step.includedWhen != .always {
                // Left out of a run whose device or state does not meet its condition: the step
                // before goes straight to the one after.
                let before = index > 0 ? flow.steps[index - 1].id.rawValue : start
                edges.append(
                    Edge(
                        from: before, to: next,
                        label: "\(step.id) left out \(Self.unless(step.includedWhen))",
                        dashed: true))
            }
            if step.canGoBack, index > 0 {
                edges.append(
                    Edge(
                        from: step.id.rawValue, to: flow.steps[index - 1].id.rawValue, label: "back",
                        dashed: true))
            }
        }
    }

    /// The diagram in `format`.
    public func render(_ format: Format) -> String {
        switch format {
        case .mermaid: mermaid
        case .dot: dot
        }
    }

    var mermaid: String {
        var lines = ["flowchart TD"]
        for node in nodes {
            let text = Self.escape(node.label).replacing("\n", with: "<br/>")
            lines.append(
                node.terminal ? "    \(id(node.id))([\"\(text)\"])" : "    \(id(node.id))[\"\(text)\"]")
        }
        for edge in edges {
            let arrow = edge.dashed ? "-.->" : "-->"
            let label = edge.label.isEmpty ? "" : "|\"\(Self.escape(edge.label))\"|"
            lines.append("    \(id(edge.from)) \(arrow)\(label) \(id(edge.to))")
        }
        return lines.joined(separator: "\n")
    }

    var dot: String {
        var lines = ["digraph \"\(flow.id)\" {", "    rankdir=TB;", "    node [shape=box];"]
        for node in nodes {
            let text = node.label.replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
            lines.append("    \"\(node.id)\" [label=\"\(text)\"\(node.terminal ? ", shape=oval" : "")];")
        }
        for edge in edges {
            var attributes = ["label=\"\(edge.label.replacing("\"", with: "\\\""))\""]
            if edge.dashed { attributes.append("style=dashed") }
            lines.append("    \"\(edge.from)\" -> \"\(edge.to)\" [\(attributes.joined(separator: ", "))];")
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    private func id(_ name: String) -> String { "\(flow.id)_\(name)" }

    private static func escape(_ text: String) -> String {
        text.replacing("\"", with: "#quot;")
    }

    /// When a step with this inclusion condition is left out, in words.
    private static func unless(_ condition: Condition) -> String {
        if case .not(let inner) = condition { return "when \(inner.summary)" }
        return "unless \(condition.summary)"
    }

    /// The elements in order, each once.
    private static func unique(_ items: [String]) -> [String] {
        var seen: Set<String> = []
        return items.filter { seen.insert($0).inserted }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
