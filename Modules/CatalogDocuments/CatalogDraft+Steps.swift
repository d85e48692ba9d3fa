import TourCodec
import TourCore

/// A draft's changes to a flow's steps (the studio's forms, a product's `catalog edit`): order,
/// removal (asking where its users go) and renaming, each writing the migration a release needs
/// (from the version before the draft's), as `CatalogHistory` asks of a compiled release.
extension CatalogDraft {
    public enum StepChange: Equatable {
        case moveUp, moveDown
        case remove(FlowChanges.RemovedStep)
        case rename(StepID)
        /// Moves on by itself after so many seconds (nil: only when the user acts).
        case timer(Double?)
        /// The flow's skip policy.
        case skip(SkipPolicy)
        /// A new step after this one, shaped like `template` (a step of a catalog the app's
        /// binaries declare: its actions, gates and effects), with its texts to edit.
        case add(template: StepDefinition, id: StepID)
    }

    /// The longest timer the studio sets (an hour: a card that waits longer is not a timer).
    public static let maximumTimer = 3_600.0

    /// The change a form asks for (`op` = up, down, remove with `users` = goOnAtNext or restart,
    /// rename with `to`), or a refusal saying what is taken.
    public static func stepChange(_ fields: [String: String], templates: [StepDefinition] = [])
        throws(Refusal) -> StepChange
    {
        switch fields["op"] {
        case "timer":
            let text = String(
                (fields["seconds"] ?? "").drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace)
                    .reversed())
            if text.isEmpty { return .timer(nil) }
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= maximumTimer else {
                throw Refusal(
                    message:
                        """
                        A step's timer is a number of seconds above 0 and at most \(Int(maximumTimer)), \
                        or empty for none.
                        """
                )
            }
            return .timer(seconds)
        case "skip":
            guard let policy = fields["policy"].flatMap(SkipPolicy.init(rawValue:)) else {
                throw Refusal(
                    message:
                        """
                        A skip policy is one of \
                        \(SkipPolicy.allCases.map(\.rawValue).joined(separator: ", ")).
                        """
                )
            }
            return .skip(policy)
        case "add":
            guard let like = fields["like"], let template = templates.first(where: { $0.id.rawValue == like })
            else {
                throw Refusal(
                    message:
                        """
                        A new step is like one of the steps the app's binaries declare: \
                        \(templates.map(\.id.rawValue).joined(separator: ", ")).
                        """
                )
            }
            guard let id = fields["id"], WireName.isValid(id) else {
                throw Refusal(message: "A new step's id is \(WireName.rule).")
            }
            return .add(template: template, id: StepID(id))
        case "up": return .moveUp
        case "down": return .moveDown
        case "remove":
            guard let users = fields["users"].flatMap(FlowChanges.RemovedStep.init(rawValue:)) else {
                throw Refusal(
                    message:
                        """
                        Say where the users on the step go: goOnAtNext (on at the next step) or restart (the \
                        flow again).
                        """
                )
            }
            return .remove(users)
        case "rename":
            guard let to = fields["to"], WireName.isValid(to) else {
                throw Refusal(message: "A step's new id is \(WireName.rule).")
            }
            return .rename(StepID(to))
        default: throw Refusal(message: "A step change is up, down, remove, rename, timer, skip or add.")
        }
    }

    /// The draft with `change` made to `step` of `flow`, and the change in words.
    /// - Parameter base: the version before the draft's (what its migration starts from): a step
    ///   that is not in it was added in this draft and needs no migration.
    public func changing(
        _ flowID: FlowID, _ stepID: StepID, _ change: StepChange, base: TourCatalog?
    ) throws(Refusal) -> (document: CatalogDocument, note: String) {
        var catalog = self.catalog
        guard let flowIndex = catalog.flows.firstIndex(where: { $0.id == flowID }) else {
            throw Refusal(message: "The draft has no flow \(flowID).")
        }
        guard let index = catalog.flows[flowIndex].steps.firstIndex(where: { $0.id == stepID }) else {
            throw Refusal(message: "\(flowID) has no step \(stepID).")
        }
        let count = catalog.flows[flowIndex].steps.count
        let from = catalog.version - 1
        func migrate(_ edit: (inout FlowChanges) -> Void) {
            var migration = catalog.migrations.first { $0.from == from } ?? CatalogMigration(from: from)
            var changes = migration.flows[flowID] ?? FlowChanges()
            edit(&changes)
            migration.flows[flowID] =
                changes.renamedSteps.isEmpty && changes.removedSteps.isEmpty && changes.renamedActions.isEmpty
                ? nil : changes
            catalog.migrations.removeAll { $0.from == from }
            if !migration.flows.isEmpty || !migration.removedFlows.isEmpty {
                catalog.migrations.append(migration)
            }
            catalog.migrations.sort { $0.from < $1.from }
        }
        // The step's id in the version before the draft's: through a rename made in this draft; nil
        // when this draft added it (its users exist only once the draft is published).
        let renamedHere = catalog.migrations.first { $0.from == from }?.flows[flowID]?.renamedSteps ?? [:]
        let original: StepID? =
            renamedHere.first { $0.value == stepID }?.key
            ?? (base.map { $0.flow(flowID)?.step(stepID) != nil } ?? true ? stepID : nil)
        let note: String
        switch change {
        case .moveUp, .moveDown:
            let other = change == .moveUp ? index - 1 : index + 1
            guard catalog.flows[flowIndex].steps.indices.contains(other) else {
                throw Refusal(
                    message:
                        "\(stepID) is already the \(change == .moveUp ? "first" : "last") step of \(flowID).")
            }
            catalog.flows[flowIndex].steps.swapAt(index, other)
            note = "\(flowID).\(stepID) moved \(change == .moveUp ? "up" : "down")"
        case .remove(let users):
            guard count > 1 else {
                throw Refusal(message: "\(stepID) is the only step of \(flowID); a flow keeps at least one.")
            }
            catalog.flows[flowIndex].steps.remove(at: index)
            if let original {
                migrate {
                    $0.renamedSteps[original] = nil
                    $0.removedSteps[original] = users
                }
            }
            // Its texts' translations go with it: a later version's check refuses translations of
            // texts the catalog no longer has.
            let gone = "\(flowID).\(stepID)."
            for locale in Array(catalog.strings.tables.keys) {
                catalog.strings.tables[locale] = catalog.strings.tables[locale]?.filter {
                    !$0.key.hasPrefix(gone)
                }
            }
            note =
                """
                \(flowID).\(stepID) removed (its users: \
                \(users == .goOnAtNext ? "on at the next step" : "the flow again"))
                """
        case .rename(let new):
            guard catalog.flows[flowIndex].step(new) == nil else {
                throw Refusal(message: "\(flowID) has a step \(new) already.")
            }
            catalog.flows[flowIndex].steps[index].id = new
            if let original { migrate { $0.renamedSteps[original] = new == original ? nil : new } }
            // Its texts' translations follow it (their ids are made of the step's).
            let old = "\(flowID).\(stepID).", renamed = "\(flowID).\(new)."
            for locale in Array(catalog.strings.tables.keys) {
                guard var table = catalog.strings.tables[locale] else { continue }
                for key in table.keys where key.hasPrefix(old) {
                    table[renamed + key.dropFirst(old.count)] = table.removeValue(forKey: key)
                }
                catalog.strings.tables[locale] = table
            }
            note = "\(flowID).\(stepID) renamed \(new)"
        case .timer(let seconds):
            catalog.flows[flowIndex].steps[index].autoAdvanceAfter = seconds
            note =
                "\(flowID).\(stepID) "
                + (seconds.map {
                    "moves on by itself after \($0.rounded() == $0 ? String(Int($0)) : String($0)) s"
                } ?? "waits for the user")
        case .skip(let policy):
            catalog.flows[flowIndex].skip = policy
            note = "\(flowID) skip policy \(policy.rawValue)"
        case .add(let template, let new):
            guard catalog.flows[flowIndex].step(new) == nil else {
                throw Refusal(message: "\(flowID) has a step \(new) already.")
            }
            var step = template
            step.id = new
            catalog.flows[flowIndex].steps.insert(step, at: index + 1)
            note = "\(flowID).\(new) added after \(stepID), like \(template.id)"
        }
        return (CatalogDocument(catalog, declarations: document.vocabulary), note)
    }
}
