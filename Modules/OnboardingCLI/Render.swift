import Foundation
import TourRuntime

/// Text and JSON renderings of a snapshot.
enum Render {
    /// One JSON object on one line, keys sorted: every `--json` output.
    static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func json(_ snapshot: TourSnapshot, effects: [String]) throws -> String {
        let data = Data(try json(snapshot).utf8)
        guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return String(decoding: data, as: UTF8.self)
        }
        object["effects"] = effects
        let output = try JSONSerialization.data(
            withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: output, as: UTF8.self)
    }

    static func card(_ snapshot: TourSnapshot, product: CLIProduct) -> String {
        guard let card = snapshot.card else {
            var lines = ["No tour is showing."]
            for flow in snapshot.flows {
                if let startsAt = flow.startsAt {
                    let seconds = max(0, startsAt - snapshot.now)
                    lines.append(
                        "\(flow.id) is due in \(format(seconds)) s (wait \(format(seconds)) to see it).")
                }
            }
            return lines.joined(separator: "\n")
        }
        let flowName = snapshot.flows.first { $0.id == card.flow }?.name ?? card.flow.rawValue
        var header = "── \(product.displayName) · \(flowName)"
        if let progress = card.progress { header += " · \(progress)" }
        if card.isReplay { header += " · replay" }
        var lines = [header + " ──", card.title]
        if !card.body.isEmpty { lines.append(card.body) }
        lines += card.details.map { "  \($0)" }
        if let hint = card.hint { lines.append("  hint: \(hint)") }
        if let anchor = card.anchor {
            var spotlight = "  spotlight: \(anchor)"
            if let padding = card.highlightPadding { spotlight += ", padding \(format(padding))" }
            if let popover = card.popover { spotlight += ", popover \(popover.rawValue)" }
            lines.append(spotlight)
        }
        lines += card.notices.map { "  ! \($0)" }
        if let at = card.autoAdvanceAt {
            lines.append("  closes by itself in \(format(max(0, at - snapshot.now))) s")
        }
        let actions = card.actions.map { action in
            action.label.map { "\(action.name) [\($0)]" } ?? action.name
        }
        lines.append("  actions: \(actions.isEmpty ? "none (wait)" : actions.joined(separator: ", "))")
        return lines.joined(separator: "\n")
    }

    static func status(_ snapshot: TourSnapshot, product: CLIProduct) -> String {
        var lines = [
            "\(product.displayName) · user \(snapshot.user) · app version \(snapshot.appVersion ?? "-")"
        ]
        let width = snapshot.flows.map(\.id.rawValue.count).max() ?? 0
        for flow in snapshot.flows {
            var line =
                "  " + flow.id.rawValue.padding(toLength: width, withPad: " ", startingAt: 0)
                + "  " + flow.status.rawValue
            if let step = flow.step, let progress = flow.progress {
                line += "  step \(step) (\(progress.short))"
            }
            if let startsAt = flow.startsAt {
                line += "  due in \(format(max(0, startsAt - snapshot.now))) s"
            }
            if !flow.actions.isEmpty { line += "  actions: \(flow.actions.joined(separator: ", "))" }
            lines.append(line)
        }
        lines.append("state:")
        if snapshot.state.isEmpty { lines.append("  (empty)") }
        for key in snapshot.state.keys.sorted() {
            lines.append("  \(key): \(snapshot.state[key]?.displayText ?? "")")
        }
        return lines.joined(separator: "\n")
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }
}
