import CatalogDocuments
import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Text and JSON renderings of a snapshot.
enum Render {
    /// One JSON object on one line, keys sorted: every `--json` output.
    static func json<T: Encodable>(_ value: T) throws -> String {
        try TourValueEncoder().jsonText(value)
    }

    /// The snapshot's JSON with the effects performed (each as the journal stores it), the time in
    /// ISO 8601 beside the number, the next-move hint when nothing shows, and the database file:
    /// built as one ``TourValue`` and written once.
    static func json(
        _ snapshot: TourSnapshot, effects: [TourEffect], hint: String?, database: String?,
        sync: AccountSyncStatus? = nil,
        catalog: CatalogChoice? = nil
    ) throws -> String {
        guard case .object(var document) = snapshot.tourValue else { return try snapshot.jsonText() }
        document["effects"] = effects.tourValue
        document["nowISO"] = .string(iso(snapshot.now))
        if let hint { document["hint"] = .string(hint) }
        if let database { document["database"] = .string(database) }
        if let catalog { document["catalog"] = catalog.tourValue }
        if let sync {
            func time(_ date: Date?) -> TourValue? { date.map { .string(iso($0.timeIntervalSince1970)) } }
            document["sync"] = .members([
                "device": .string(sync.device), "waiting": .int(sync.waiting),
                "failures": .int(sync.failures),
                "oldestWaiting": time(sync.oldestWaiting), "retryAt": time(sync.retryAt),
                "lastError": sync.lastError.map(TourValue.string), "lastPush": time(sync.lastPush),
                "lastPull": time(sync.lastPull), "setAside": .int(sync.setAside),
                "lastSetAsideReason": sync.lastSetAsideReason.map(TourValue.string),
            ])
        }
        return try TourValue.object(document).jsonText()
    }

    /// `catalog: published version 2 (rollout 20%): …`: which catalog runs, and why.
    static func catalog(_ choice: CatalogChoice) -> String {
        var line = "catalog: \(choice.source.rawValue) version \(choice.version)"
        if let fingerprint = choice.fingerprint { line += " (\(CatalogDocument.short(fingerprint)))" }
        line += ": " + choice.reason
        for refused in choice.refused {
            line +=
                """
                \n  published version \(refused.version) refused: \(refused.reason); \
                runs \(choice.summary) instead
                """
        }
        return line
    }

    static func card(_ snapshot: TourSnapshot, product: TourCatalog, hint: String?) -> String {
        guard let card = snapshot.card else {
            var text = "No \(product.flowNoun) is showing."
            if let hint { text += " " + hint }
            return text
        }
        let flowName = snapshot.flows.first { $0.id == card.flow }?.name ?? card.flow.rawValue
        var header = "── \(product.name) · \(flowName)"
        if let progress = card.progress { header += " · \(card.progressText ?? progress.description)" }
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

    /// The account sync lines of `status`: what waits to be pushed, and the last failure.
    static func sync(_ sync: AccountSyncStatus) -> String {
        var lines = [
            sync.waiting == 0
                ? "sync: nothing waiting to be pushed"
                : "sync: \(sync.waiting) journal row\(sync.waiting == 1 ? "" : "s") waiting to be pushed"
                    + (sync.oldestWaiting.map { " (oldest \(iso($0.timeIntervalSince1970)))" } ?? "")
        ]
        var times: [String] = []
        if let push = sync.lastPush { times.append("last push \(iso(push.timeIntervalSince1970))") }
        if let pull = sync.lastPull { times.append("last pull \(iso(pull.timeIntervalSince1970))") }
        if !times.isEmpty { lines.append("  " + times.joined(separator: ", ")) }
        if let error = sync.lastError, sync.failures > 0 {
            lines.append(
                "  \(sync.failures) failed attempt\(sync.failures == 1 ? "" : "s"): \(error)"
                    + (sync.retryAt.map { "; next try after \(iso($0.timeIntervalSince1970.rounded()))" }
                        ?? ""))
        }
        if sync.setAside > 0 {
            lines.append(
                """
                  \(sync.setAside) journal row\(sync.setAside == 1 ? "" : "s") set aside, \
                refused by the server
                """
                    + (sync.lastSetAsideReason.map { " (latest: \($0))" } ?? "")
                    + "; sync --retry-set-aside sends them again")
        }
        lines.append("  device \(sync.device)")
        return lines.joined(separator: "\n")
    }

    static func status(_ snapshot: TourSnapshot, product: TourCatalog, database: String) -> String {
        var lines = [
            """
            \(product.name) · user \(snapshot.user) · app version \(snapshot.appVersion ?? "-") · \
            \(iso(snapshot.now))
            """,
            "database: \(database)",
        ]
        let width = snapshot.flows.map(\.id.rawValue.count).max() ?? 0
        for flow in snapshot.flows {
            var line =
                "  " + flow.id.rawValue.padded(to: width)
                + "  " + flow.status.rawValue
            if let step = flow.step, let progress = flow.progress {
                line += "  step \(step) (\(progress.short))"
            }
            if let startsAt = flow.startsAt {
                line += "  due in \(format(max(0, startsAt - snapshot.now))) s (at \(iso(startsAt)))"
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

    /// A time as ISO 8601 in UTC: `2026-01-05T09:00:00Z`, with milliseconds when it has a fraction.
    static func iso(_ seconds: Double) -> String { ISOTime.string(secondsSince1970: seconds) }

    /// A time span in seconds: whole seconds as an integer, others with one decimal.
    static func format(_ seconds: Double) -> String {
        if seconds == seconds.rounded() { return String(Int(seconds)) }
        // One decimal, as "%.1f" prints it (ties to even), without Foundation's `String(format:)`.
        let tenths = Int((seconds * 10).rounded(.toNearestOrEven))
        return (tenths < 0 ? "-" : "") + "\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }
}

extension String {
    /// The noun with its indefinite article: "a tour", "an onboarding" (by its first letter; a
    /// catalog's flow noun is a common English word).
    var withArticle: String {
        guard let first = lowercased().first else { return self }
        return ("aeiou".contains(first) ? "an " : "a ") + self
    }

    /// The text cut or padded with spaces to `width` characters, for columns.
    func padded(to width: Int) -> String {
        count >= width ? String(prefix(width)) : self + String(repeating: " ", count: width - count)
    }
}
