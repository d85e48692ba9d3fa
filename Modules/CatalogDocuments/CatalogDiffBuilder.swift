import TourCodec
import TourCore

/// The walk behind ``CatalogDiff``.
struct CatalogDiffBuilder {
    let old: CatalogDocument
    let new: CatalogDocument
    var changes: [CatalogDiff.Change] = []

    mutating func add(
        _ kind: CatalogDiff.Kind, _ flow: FlowID?, _ step: StepID?, _ detail: String,
        placement: CatalogDiff.Placement? = nil
    ) {
        changes.append(.init(kind: kind, flow: flow, step: step, detail: detail, placement: placement))
    }

    /// A change to the catalog as a whole.
    mutating func add(_ kind: CatalogDiff.Kind, _ detail: String) { add(kind, nil, nil, detail) }

    mutating func run() {
        let catalog = new.catalog
        if old.catalog.version != catalog.version {
            add(.versionChanged, "version \(old.catalog.version) → \(catalog.version)")
        }
        for (name, before, after) in [
            ("app", old.catalog.app, catalog.app), ("name", old.catalog.name, catalog.name),
            ("flowNoun", old.catalog.flowNoun, catalog.flowNoun),
        ] where before != after {
            add(.catalogChanged, "\(name): \(quote(before)) → \(quote(after))")
        }
        if old.catalog.stateScopes != catalog.stateScopes {
            add(
                .catalogChanged,
                """
                stateScopes: \(json(old.catalog.stateScopes.documentValue)) → \
                \(json(catalog.stateScopes.documentValue))
                """
            )
        }
        let oldIDs = old.catalog.flows.map(\.id)
        let newIDs = catalog.flows.map(\.id)
        for flow in old.catalog.flows where catalog.flow(flow.id) == nil {
            let declared = catalog.migrations(after: old.catalog.version).contains {
                $0.removedFlows.contains(flow.id)
            }
            add(
                .flowRemoved, flow.id, nil, "flow \(flow.id) (\(flow.steps.count) steps) removed",
                placement: declared ? .flowEnds : .notPlaced)
        }
        for flow in catalog.flows where old.catalog.flow(flow.id) == nil {
            add(
                .flowAdded, flow.id, nil,
                "flow \(flow.id) added (\(flow.steps.map(\.id.rawValue).joined(separator: ", ")))")
        }
        let kept = newIDs.filter(oldIDs.contains)
        if oldIDs.filter(newIDs.contains) != kept {
            add(
                .policyChanged,
                """
                flow priority order: \
                \(oldIDs.filter(newIDs.contains).map(\.rawValue).joined(separator: ", ")) → \
                \(kept.map(\.rawValue).joined(separator: ", "))
                """
            )
        }
        for id in kept {
            if let before = old.catalog.flow(id), let after = catalog.flow(id) { compare(before, after) }
        }
        compareActions(
            old.catalog.freeActions, catalog.freeActions, flow: nil, step: nil, renames: [:],
            kind: .freeActionsChanged)
        if old.catalog.freeFields != catalog.freeFields {
            add(
                .freeActionsChanged,
                """
                free fields: \(json(.list(old.catalog.freeFields.map(\.documentValue)))) → \
                \(json(.list(catalog.freeFields.map(\.documentValue))))
                """
            )
        }
        for migration in catalog.migrations where !old.catalog.migrations.contains(migration) {
            add(
                .migrationsChanged,
                "migration from version \(migration.from): \(json(migration.documentValue))")
        }
        for migration in old.catalog.migrations where !catalog.migrations.contains(migration) {
            add(
                .migrationsChanged,
                """
                migration from version \(migration.from) no longer declared (was \
                \(json(migration.documentValue)))
                """
            )
        }
        if old.vocabulary.documentValue != new.vocabulary.documentValue {
            add(
                .vocabularyChanged,
                "\(json(old.vocabulary.documentValue)) → \(json(new.vocabulary.documentValue))")
        }
    }

    mutating func compare(_ before: FlowDefinition, _ after: FlowDefinition) {
        let flow = after.id
        let since = old.catalog.version
        // Where each old step is now.
        var placedOn: [StepID: StepID] = [:]
        var gone: [(StepID, CatalogDiff.Placement)] = []
        for step in before.steps {
            switch new.catalog.place(step.id, of: flow, since: since) {
            case .step(let id) where after.step(id) != nil: placedOn[step.id] = id
            case .step: gone.append((step.id, .notPlaced))
            case .removed(.goOnAtNext): gone.append((step.id, .goesOnAtNext))
            case .removed(.restart): gone.append((step.id, .restarts))
            case .flowRemoved: gone.append((step.id, .flowEnds))
            case .unknown: gone.append((step.id, .notPlaced))
            }
        }
        let targets = Set(placedOn.values)
        let added = after.steps.filter { !targets.contains($0.id) }
        for (id, placement) in gone {
            var detail = "step \(id) removed"
            if placement == .notPlaced, let step = before.step(id),
                let twin = added.first(where: { Self.readsAlike(step, $0) })
            {
                detail +=
                    """
                    ; it reads like the added step \(twin.id): a rename is declared as renamedSteps: \
                    [\"\(id)\": \"\(twin.id)\"]
                    """
            }
            add(.stepRemoved, flow, id, detail, placement: placement)
        }
        for step in before.steps {
            guard let id = placedOn[step.id], id != step.id else { continue }
            add(.stepRenamed, flow, id, "step \(step.id) renamed \(id)", placement: .staysOnRenamed)
        }
        for step in added {
            let index = after.steps.firstIndex { $0.id == step.id } ?? 0
            let next = after.steps.dropFirst(index + 1).first.map { " before \($0.id)" } ?? " at the end"
            add(.stepAdded, flow, step.id, "step \(step.id) added\(next)")
        }
        let oldOrder = before.steps.compactMap { placedOn[$0.id] }
        let newOrder = after.steps.map(\.id).filter(targets.contains)
        if oldOrder != newOrder {
            // Named by the first step that is not where it was.
            let moved = zip(oldOrder, newOrder).first { $0 != $1 }?.1
            add(
                .stepsReordered, flow, moved,
                """
                steps reordered: \(oldOrder.map(\.rawValue).joined(separator: ", ")) → \
                \(newOrder.map(\.rawValue).joined(separator: ", "))
                """
            )
        }
        let renames = actionRenames(flow)
        for step in before.steps {
            guard let id = placedOn[step.id], let now = after.step(id) else { continue }
            compare(step, now, flow: flow, renames: renames)
        }
        compareFlowParts(before, after)
    }

    /// Old action name → new, chained over the migrations between the two versions.
    func actionRenames(_ flow: FlowID) -> [String: String] {
        var renames: [String: String] = [:]
        for migration in new.catalog.migrations(after: old.catalog.version) {
            for (from, to) in migration.flows[flow]?.renamedActions ?? [:] {
                for (original, current) in renames where current == from { renames[original] = to }
                if renames[from] == nil { renames[from] = to }
            }
        }
        return renames
    }

    mutating func compare(
        _ before: StepDefinition, _ after: StepDefinition, flow: FlowID, renames: [String: String]
    ) {
        let step = after.id
        let a = before.content
        let b = after.content
        var wording: [String] = []
        if a.title != b.title { wording.append("title \(quote(a.title)) → \(quote(b.title))") }
        if a.body != b.body { wording.append("body \(quote(a.body)) → \(quote(b.body))") }
        if a.hint != b.hint { wording.append("hint \(quote(a.hint)) → \(quote(b.hint))") }
        if a.details != b.details {
            wording.append("details \(a.details.map(quote)) → \(b.details.map(quote))")
        }
        if a.anchor != b.anchor {
            let (old, new) = (a.documentValue.member("anchor"), b.documentValue.member("anchor"))
            wording.append("anchor \(json(old)) → \(json(new))")
        }
        for line in wording { add(.wordingChanged, flow, step, line) }
        compareActions(
            before.actions, after.actions, flow: flow, step: step, renames: renames, kind: .actionChanged)
        if before.gates != after.gates {
            add(
                .stepChanged, flow, step,
                """
                gates: \(json(.list(before.gates.map(\.documentValue)))) → \
                \(json(.list(after.gates.map(\.documentValue))))
                """
            )
        }
        for (name, x, y) in [
            ("includedWhen", before.includedWhen.documentValue, after.includedWhen.documentValue),
            (
                "autoAdvanceAfter", before.autoAdvanceAfter.map(DocumentWriter.number) ?? .null,
                after.autoAdvanceAfter.map(DocumentWriter.number) ?? .null
            ),
            ("validates", .strings(before.validates), .strings(after.validates)),
            ("passThrough", .strings(before.passThrough), .strings(after.passThrough)),
            ("covers", .strings(before.covers.map(\.rawValue)), .strings(after.covers.map(\.rawValue))),
        ] where x != y {
            add(.stepChanged, flow, step, "\(name): \(json(x)) → \(json(y))")
        }
    }

    mutating func compareActions(
        _ before: [StepAction], _ after: [StepAction], flow: FlowID?, step: StepID?,
        renames: [String: String],
        kind: CatalogDiff.Kind
    ) {
        let where_ = step.map { " on \($0)" } ?? (flow == nil ? " (free)" : "")
        var matched: Set<String> = []
        for action in before {
            let name = renames[action.name] ?? action.name
            guard let now = after.first(where: { $0.name == name }) else {
                add(
                    kind == .freeActionsChanged ? kind : .actionRemoved, flow, step,
                    "action \(action.name) removed\(where_)")
                continue
            }
            matched.insert(name)
            if name != action.name {
                add(
                    kind == .freeActionsChanged ? kind : .actionRenamed, flow, step,
                    "action \(action.name) renamed \(name)\(where_)")
            }
            var renamed = action
            renamed.name = name
            if renamed.effects != now.effects {
                add(
                    .effectsChanged, flow, step,
                    """
                    \(name)'s effects: \(json(.list(action.effects.map(\.documentValue)))) → \
                    \(json(.list(now.effects.map(\.documentValue))))
                    """
                )
                renamed.effects = now.effects
            }
            if renamed != now {
                add(
                    kind, flow, step,
                    "action \(name)\(where_): \(json(renamed.documentValue)) → \(json(now.documentValue))")
            }
        }
        for action in after where !matched.contains(action.name) {
            add(
                kind == .freeActionsChanged ? kind : .actionAdded, flow, step,
                "action \(action.name) added\(where_)")
        }
    }

    mutating func compareFlowParts(_ before: FlowDefinition, _ after: FlowDefinition) {
        let flow = after.id
        if before.fields != after.fields {
            let names = Set(before.fields.map(\.name)).union(after.fields.map(\.name)).sorted()
            for name in names {
                let x = before.fields.first { $0.name == name }
                let y = after.fields.first { $0.name == name }
                guard x != y else { continue }
                add(
                    .fieldsChanged, flow, nil,
                    x == nil
                        ? "field \(name) added"
                        : y == nil
                            ? "field \(name) removed"
                            : """
                            field \(name): \(json(x?.documentValue ?? .null)) → \
                            \(json(y?.documentValue ?? .null))
                            """
                )
            }
        }
        if before.triggers != after.triggers {
            add(
                .triggersChanged, flow, nil,
                """
                \(json(.list(before.triggers.map(\.documentValue)))) → \
                \(json(.list(after.triggers.map(\.documentValue))))
                """
            )
        }
        let a = before.documentValue
        let b = after.documentValue
        // Every other member of the flow's document is a policy (skip, replay, accessibility,
        // budget, ...): one a later release adds is diffed without a change here.
        let comparedApart: Set<String> = [
            "id", "steps", "fields", "triggers", "onComplete", "onSkip", "onReset",
        ]
        let policies = Set((a.objectValue ?? [:]).keys).union((b.objectValue ?? [:]).keys).subtracting(
            comparedApart)
        for key in policies.sorted() {
            let x = a.member(key)
            let y = b.member(key)
            if x != y { add(.policyChanged, flow, nil, "\(key): \(json(x)) → \(json(y))") }
        }
        for key in ["onComplete", "onSkip", "onReset"] {
            let x = a.member(key)
            let y = b.member(key)
            if x != y { add(.effectsChanged, flow, nil, "\(key): \(json(x)) → \(json(y))") }
        }
    }

    /// Two steps that say the same thing (the same title, or the same body), or have the same
    /// actions: probably one renamed.
    static func readsAlike(_ a: StepDefinition, _ b: StepDefinition) -> Bool {
        a.content.title == b.content.title || a.content.body == b.content.body
            || (!a.actions.isEmpty && a.actions == b.actions && a.content.anchor == b.content.anchor
                && a.content.anchor != nil)
    }

    func quote(_ text: String?) -> String {
        guard let text else { return "(none)" }
        return (try? TourValue.string(text).jsonText()) ?? "\"\(text)\""
    }

    func json(_ value: TourValue) -> String {
        if value == .null { return "(none)" }
        return (try? value.jsonText()) ?? "\(value)"
    }
}
