import CatalogDocuments
import TourCodec
import TourCore
import TourRuntime

/// The catalog and its diffs as people read them in a terminal (`catalog`, `catalog diff`).
enum CatalogOutline {
    static func text(_ document: CatalogDocument, origin: String, releases: [Int]) throws -> String {
        let catalog = document.catalog
        let fingerprint = try document.fingerprint()
        let recorded = releases.contains(catalog.version) ? "recorded" : "not recorded"
        var lines = [
            """
            \(catalog.name) (\(catalog.app)) · catalog version \(catalog.version) (\(recorded)) · \
            fingerprint \(CatalogDocument.short(fingerprint)) · \(origin)
            """
        ]
        for flow in catalog.flows {
            lines.append("")
            lines.append(
                """
                \(flow.id) \"\(flow.name)\" · \(flow.scope.rawValue) · skip: \(flow.skip.rawValue) · \
                interrupted: \(flow.interruption.rawValue) · replay: \(flow.replay.rawValue) · unplaced \
                step: \(flow.unplacedStep.rawValue)
                """
            )
            for trigger in flow.triggers {
                let delay = trigger.delay > 0 ? " after \(Render.format(trigger.delay)) s" : ""
                let when = trigger.when == .always ? "" : " when \(trigger.when.summary)"
                lines.append(
                    """
                      trigger: \(trigger.moment.summary)\(delay)\(when) (while another shows: \
                    \(trigger.whileAnotherFlowShows.rawValue))
                    """
                )
            }
            if !flow.fields.isEmpty {
                lines.append("  fields: " + flow.fields.map(field).joined(separator: "; "))
            }
            let counted = flow.countsTerminalStep ? flow.steps.count : flow.steps.count - 1
            for (index, step) in flow.steps.enumerated() {
                let number = index < counted ? "\(index + 1)" : "done"
                lines.append("  \(number). \(step.id) \"\(step.content.title)\"")
                lines.append("       \(step.content.body.replacingNewlines)")
                if let hint = step.content.hint { lines.append("       hint: \(hint)") }
                for detail in step.content.details { lines.append("       · \(detail)") }
                for action in step.actions { lines.append("       \(self.action(action))") }
                for gate in step.gates {
                    let kind: String
                    switch gate.kind {
                    case .permission(let permission): kind = "permission \(permission)"
                    case .request(let name): kind = "request \(name)"
                    }
                    lines.append(
                        """
                               gate \(gate.id): \(kind)\(gate.required ? ", required" : "")\
                        \(gate.advancesWhenGranted ? ", advances when granted" : "")\
                        \(effects(gate.onGranted, " → "))
                        """
                    )
                }
                if step.includedWhen != .always {
                    lines.append("       only when \(step.includedWhen.summary)")
                }
                if let after = step.autoAdvanceAfter {
                    lines.append("       closes by itself after \(Render.format(after)) s")
                }
                if !step.passThrough.isEmpty {
                    lines.append("       lets through: \(step.passThrough.joined(separator: ", "))")
                }
                if !step.covers.isEmpty {
                    lines.append("       covers: \(step.covers.map(\.rawValue).joined(separator: ", "))")
                }
            }
            for (moment, templates) in [
                ("on complete", flow.onComplete), ("on skip", flow.onSkip), ("on reset", flow.onReset),
            ]
            where !templates.isEmpty {
                lines.append("  \(moment):\(effects(templates, " "))")
            }
        }
        if !catalog.freeActions.isEmpty {
            lines.append("")
            lines.append("free actions:")
            for action in catalog.freeActions { lines.append("  \(self.action(action))") }
        }
        lines.append("")
        if catalog.migrations.isEmpty {
            lines.append("migrations: none")
        } else {
            lines.append("migrations:")
            for migration in catalog.migrations {
                var parts: [String] = []
                for (flow, changes) in migration.flows.sorted(by: { $0.key < $1.key }) {
                    for (old, new) in changes.renamedSteps.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                        parts.append("\(flow): step \(old) → \(new)")
                    }
                    for (step, what) in changes.removedSteps.sorted(by: { $0.key.rawValue < $1.key.rawValue })
                    {
                        parts.append("\(flow): step \(step) removed (\(what.rawValue))")
                    }
                    for (old, new) in changes.renamedActions.sorted(by: { $0.key < $1.key }) {
                        parts.append("\(flow): action \(old) → \(new)")
                    }
                }
                for flow in migration.removedFlows.sorted() { parts.append("flow \(flow) removed") }
                lines.append(
                    """
                      from version \(migration.from): \
                    \(parts.isEmpty ? "nothing declared" : parts.joined(separator: "; "))
                    """
                )
            }
        }
        let vocabulary = document.vocabulary
        lines.append(
            "vocabulary: effects "
                + (vocabulary.effects.isEmpty
                    ? "none"
                    : vocabulary.effects.map { effect in
                        let fields = effect.payload.sorted { $0.key < $1.key }.map { field in
                            "\(field.key): \(field.value.kind.rawValue)\(field.value.required ? "" : "?")"
                        }
                        return "\(effect.name)(\(fields.joined(separator: ", ")))"
                    }.joined(separator: ", "))
                + "; context "
                + (vocabulary.context.isEmpty
                    ? "none"
                    : vocabulary.context.map { "\($0.name) (\($0.kind.rawValue))" }.joined(separator: ", "))
                + (vocabulary.requests.isEmpty
                    ? "" : "; requests \(vocabulary.requests.sorted().joined(separator: ", "))"))
        return lines.joined(separator: "\n")
    }

    static func diff(
        _ diff: CatalogDiff, from before: CatalogDocument, _ beforeOrigin: String, to after: CatalogDocument,
        _ afterOrigin: String
    ) throws -> String {
        var lines = [
            """
            \(after.catalog.name) catalog: version \(before.catalog.version) (\(beforeOrigin), \
            \(CatalogDocument.short(try before.fingerprint()))) → version \(after.catalog.version) (\
            \(afterOrigin), \(CatalogDocument.short(try after.fingerprint())))
            """
        ]
        if diff.isEmpty {
            lines.append("  no changes")
            return lines.joined(separator: "\n")
        }
        var section: FlowID?? = .none
        // The catalog's own changes first, then each flow's in the catalog's order.
        let ordered = diff.changes.filter { $0.flow == nil } + diff.changes.filter { $0.flow != nil }
        for change in ordered {
            if section != .some(change.flow) {
                section = .some(change.flow)
                lines.append(change.flow.map { "\($0)" } ?? "catalog")
            }
            // A change inside a step names it unless its detail already does (wording, actions).
            let step =
                change.step.map(\.rawValue).flatMap { change.detail.contains($0) ? nil : " (step \($0))" }
                ?? ""
            var line = "  \(label(change.kind))\(step): \(change.detail)"
            if let placement = change.placement {
                let unplaced = after.catalog.flow(change.flow ?? "")?.unplacedStep
                let wouldThey = unplaced == .goOnAtNext ? "go on at the next step" : "start again"
                line +=
                    placement == .notPlaced
                    ? """
                     — users on it: NOT placed by any declared migration (they would \(wouldThey) \
                    undeclared; declare a CatalogMigration)
                    """
                    : " — users on it: \(placement.rawValue)"
            }
            lines.append(line)
        }
        let unplaced = diff.unplaced.count
        lines.append(
            unplaced == 0
                ? "every removed or renamed step is placed by a declared migration"
                : """
                \(unplaced) removed step\(unplaced == 1 ? "" : "s") or flow\(unplaced == 1 ? "" : "s") \
                placed by no declared migration
                """
        )
        return lines.joined(separator: "\n")
    }

    static func label(_ kind: CatalogDiff.Kind) -> String {
        kind.rawValue.split(separator: "_").joined(separator: " ")
    }

    static func field(_ field: FieldSpec) -> String {
        let kind: String
        switch field.kind {
        case .text: kind = "text"
        case .secret: kind = "secret"
        case .list: kind = "list"
        case .choice(let options): kind = "one of \(options.joined(separator: "/"))"
        case .integer(let minimum, let maximum, let maximumKey):
            kind =
                """
                whole number ≥ \(minimum)\(maximum.map { " ≤ \($0)" } ?? "")\
                \(maximumKey.map { " ≤ \($0)" } ?? "")
                """
        case .date(let latestKey): kind = "date\(latestKey.map { " ≤ \($0)" } ?? "")"
        }
        var text = "\(field.name) (\(kind)"
        if let initial = field.initial { text += ", initially \(json(initial))" }
        switch field.rule {
        case .required?: text += ", required"
        case .minimumCount(let count)?: text += ", at least \(count)"
        case nil: break
        }
        return text + ")"
    }

    static func action(_ action: StepAction) -> String {
        var text = action.name
        if !action.fills.isEmpty {
            text +=
                "("
                + action.fills.map { action.requiredParameters.contains($0) ? $0 : "\($0)?" }.joined(
                    separator: ", ") + ")"
        }
        if let label = action.label { text += " [\(label)]" }
        if !action.aliases.isEmpty { text += " (also: \(action.aliases.joined(separator: ", ")))" }
        let outcome: String
        switch action.outcome {
        case .advance: outcome = "advance"
        case .stage: outcome = "stage"
        case .stay: outcome = "stay"
        case .dismissFlow: outcome = "dismiss the flow"
        case .skipFlow: outcome = "skip the flow"
        case .back: outcome = "back"
        case .request(let gate): outcome = "request \(gate)"
        }
        text += " → \(outcome)"
        if !action.preconditions.isEmpty {
            text +=
                """
                , needs \(action.preconditions.count) precondition\
                \(action.preconditions.count == 1 ? "" : "s")
                """
        }
        if action.celebrates { text += ", celebrates" }
        if let haptic = action.haptic { text += ", haptic \(haptic)" }
        return text + effects(action.effects, ", ")
    }

    static func effects(_ templates: [EffectTemplate], _ separator: String) -> String {
        guard !templates.isEmpty else { return "" }
        return separator
            + templates.map { template -> String in
                switch template {
                case .product(let name, let payload):
                    "effect \(name)(\(payload.keys.sorted().joined(separator: ", ")))"
                case .haptic(let haptic): "haptic \(haptic)"
                case .analytics(let name, _): "analytics \(name)"
                }
            }.joined(separator: ", ")
    }

    static func json(_ value: TourValue) -> String { (try? value.jsonText()) ?? value.displayText }
}

extension String {
    fileprivate var replacingNewlines: String {
        split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " / ")
    }
}
