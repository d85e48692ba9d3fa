#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Moving runs started under an older catalog version to this one, by the catalog's declared
/// ``CatalogMigration``s. Runs on the next event (and for every view), never strands a user on a
/// step that no longer exists, and journals each move as a ``TourFact/runMigrated`` fact.
extension Reduction {
    mutating func migrateRuns() {
        for flow in catalog.flows {
            guard let run = state[run: flow.id], run.catalogVersion != catalog.version else { continue }
            migrate(run, of: flow)
        }
    }

    private mutating func migrate(_ old: FlowRun, of flow: FlowDefinition) {
        let from = old.catalogVersion
        let fromStep = old.currentStep
        // Where the run goes: its step now, or the next step of its plan that still exists.
        var target: StepID?
        var restart = false
        if let fromStep {
            switch catalog.place(fromStep, of: flow.id, since: from) {
            case .step(let id):
                target = id
            case .removed(.goOnAtNext):
                let catalog = catalog
                target = old.plan.dropFirst(old.position + 1).lazy.compactMap { step -> StepID? in
                    if case .step(let id) = catalog.place(step, of: flow.id, since: from) { return id }
                    return nil
                }.first
            case .removed(.restart), .unknown:
                restart = true
            }
        } else {
            restart = true
        }
        // A run written by a newer build (a downgrade) is kept when its step exists here.
        if from > catalog.version, let fromStep, flow.step(fromStep) != nil { target = fromStep; restart = false }

        if restart {
            notes.append("\(flow.id) run from catalog v\(from) could not be placed at \(fromStep?.rawValue ?? "-"); restarted")
            facts.append(
                .runMigrated(
                    flow: flow.id, fromVersion: from, toVersion: catalog.version, fromStep: fromStep, toStep: nil,
                    plan: [], outcome: .restarted))
            facts.append(.flowEnded(flow: flow.id, ending: .dropped, recorded: .notStarted, version: nil))
            state[flow: flow.id] = old.replayOf?.state ?? FlowState()
            startRun(flow, replayOf: old.replayOf)
            return
        }
        guard let target else {
            // The removed step was the last the user had left: the flow is done.
            notes.append("\(flow.id) run from catalog v\(from): \(fromStep?.rawValue ?? "-") removed, nothing after it; completed")
            facts.append(
                .runMigrated(
                    flow: flow.id, fromVersion: from, toVersion: catalog.version, fromStep: fromStep, toStep: nil,
                    plan: [], outcome: .finished))
            finish(flow, .completed)
            return
        }
        let plan = flow.steps.filter { $0.id == target || $0.includedWhen.holds(context: context, state: state) }
            .map({ $0.id })
        let sameStep = catalog.place(fromStep ?? target, of: flow.id, since: from) == .step(target)
        let renames = catalog.migrations(after: from).compactMap { $0.flows[flow.id]?.renamedActions }
        func currentName(_ name: String) -> String { renames.reduce(name) { $1[$0] ?? $0 } }
        let step = flow.step(target)
        var run = old
        run.plan = plan
        run.position = plan.firstIndex(of: target) ?? 0
        run.catalogVersion = catalog.version
        // Values of fields the flow still declares, and the initial value of fields it added.
        let declared = Set(flow.fields.map({ $0.name }))
        run.fields = old.fields.filter { declared.contains($0.key) }
        for field in flow.fields where run.fields[field.name] == nil {
            if let initial = field.initial { run.fields[field.name] = initial }
        }
        if sameStep {
            let gates = Set(step?.gates.map({ $0.id }) ?? [])
            run.gates = old.gates.filter { gates.contains($0.key) }
            run.performed = old.performed.map(currentName).filter { step?.action(named: $0) != nil }
        } else {
            run.gates = [:]
            run.performed = []
        }
        state[flow: flow.id] = .active(run)
        notes.append("\(flow.id) run moved from catalog v\(from) \(fromStep?.rawValue ?? "-") to v\(catalog.version) \(target)")
        facts.append(
            .runMigrated(
                flow: flow.id, fromVersion: from, toVersion: catalog.version, fromStep: fromStep, toStep: target,
                plan: plan, outcome: .moved))
        if !sameStep { enterStep(flow) }
    }
}
