#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension FlowRun {
    /// Whether this run was written under another catalog than `catalog` (another version, or the
    /// same version with another known fingerprint), or cannot be followed in `flow`.
    func needsMigration(to flow: FlowDefinition, of catalog: TourCatalog, stamp: CatalogFingerprint) -> Bool {
        if catalogVersion != catalog.version || !canBeFollowed(in: flow) { return true }
        guard let written = catalogFingerprint, let current = stamp.value else { return false }
        return written != current
    }
}

/// Moving runs written under another catalog to this one: by the catalog's declared
/// ``CatalogMigration``s when it is a newer version, and by each flow's ``FlowDefinition/unplacedStep``
/// policy when a run's step is placed by nothing (a change that reached users undeclared, whatever
/// the version says). Runs on the next event (and for every view), never leaves a user on a step or
/// in a flow that no longer exists, and journals each move as a ``TourFact/runMigrated`` fact.
extension Reduction {
    mutating func migrateRuns() {
        // Runs of flows this catalog does not have end first, so one of them never presents (in
        // the order of their ids; sorted only when there is one, which is rare).
        if state.flows.keys.contains(where: { !catalog.has(flow: $0) }) {
            for (id, flowState) in state.flows.sorted(by: { $0.key < $1.key }) where !catalog.has(flow: id) {
                if let run = flowState.run { drop(run, of: id) }
            }
        }
        for flow in catalog.flows {
            guard let run = state[run: flow.id] else { continue }
            if run.needsMigration(to: flow, of: catalog, stamp: stamp) { migrate(run, of: flow) }
        }
    }

    /// A run of a flow the catalog no longer has: ended, as if never started.
    private mutating func drop(_ run: FlowRun, of flow: FlowID) {
        let declared = catalog.migrations(after: run.catalogVersion).contains {
            $0.removedFlows.contains(flow)
        }
        notes.append(
            """
            \(flow) run from catalog v\(run.catalogVersion) ended: the flow is not in this catalog\
            \(declared ? "" : " (not declared)")
            """
        )
        facts.append(
            .runMigrated(
                flow: flow, fromVersion: run.catalogVersion, toVersion: catalog.version,
                fromStep: run.currentStep,
                toStep: nil, plan: [], outcome: .dropped, undeclared: !declared))
        facts.append(.flowEnded(flow: flow, ending: .dropped, recorded: .notStarted, version: nil))
        effects.append(.dismissed(flow))
        state[flow: flow] = run.replayOf?.state ?? FlowState()
    }

    private mutating func migrate(_ old: FlowRun, of flow: FlowDefinition) {
        let from = old.catalogVersion
        let fromStep = old.currentStep
        // Where the run goes: its step now, or the next step of its plan that still exists.
        var target: StepID?
        var restart = false
        // The run's step is placed by nothing: neither here nor in a declared migration.
        var unplaced = false
        let catalog = catalog
        func nextPlaced() -> StepID? {
            old.plan.dropFirst(old.position + 1).lazy.compactMap { step -> StepID? in
                if case .step(let id) = catalog.place(step, of: flow.id, since: from) { return id }
                return nil
            }.first
        }
        if let fromStep {
            switch catalog.place(fromStep, of: flow.id, since: from) {
            case .step(let id):
                target = id
            case .removed(.goOnAtNext):
                target = nextPlaced()
            case .removed(.restart), .flowRemoved:
                restart = true
            case .unknown:
                // Neither here nor declared: the flow's own policy decides, and the journal says so.
                unplaced = true
                switch flow.unplacedStep {
                case .restart: restart = true
                case .goOnAtNext: target = nextPlaced()
                }
            }
        } else {
            restart = true
        }
        // A run written by a newer build (a downgrade) is kept when its step exists here.
        if from > catalog.version, let fromStep, flow.step(fromStep) != nil {
            (target, restart, unplaced) = (fromStep, false, false)
        }
        // A run of this version that moves at all moves without a declaration: the catalog changed
        // under it without a new version.
        let undeclared = unplaced || from == catalog.version
        let at = fromStep?.rawValue ?? "-"
        let why =
            unplaced
            ? "\(at) is not in this catalog and no migration declares it"
            : undeclared ? "the catalog changed without a new version" : "\(at) was removed"

        if restart {
            notes.append("\(flow.id) run from catalog v\(from) at \(at) restarted (\(why))")
            facts.append(
                .runMigrated(
                    flow: flow.id, fromVersion: from, toVersion: catalog.version, fromStep: fromStep,
                    toStep: nil,
                    plan: [], outcome: .restarted, undeclared: undeclared))
            facts.append(.flowEnded(flow: flow.id, ending: .dropped, recorded: .notStarted, version: nil))
            state[flow: flow.id] = old.replayOf?.state ?? FlowState()
            startRun(flow, replayOf: old.replayOf)
            return
        }
        guard let target else {
            // The removed step was the last the user had left: the flow is done.
            notes.append("\(flow.id) run from catalog v\(from) at \(at) completed (\(why), nothing after it)")
            facts.append(
                .runMigrated(
                    flow: flow.id, fromVersion: from, toVersion: catalog.version, fromStep: fromStep,
                    toStep: nil,
                    plan: [], outcome: .finished, undeclared: undeclared))
            finish(flow, .completed)
            return
        }
        // An experiment's variant keeps showing its steps (a replay shows the whole flow).
        let plan = self.plan(
            of: flow, variant: old.replayOf == nil ? assignedVariant(of: flow) : nil, keeping: target)
        let sameStep = catalog.place(fromStep ?? target, of: flow.id, since: from) == .step(target)
        let renames = catalog.migrations(after: from).compactMap { $0.flows[flow.id]?.renamedActions }
        func currentName(_ name: String) -> String { renames.reduce(name) { $1[$0] ?? $0 } }
        let step = flow.step(target)
        var run = old
        run.plan = plan
        run.position = plan.firstIndex(of: target) ?? 0
        run.catalogVersion = catalog.version
        run.catalogFingerprint = stamp.value
        // Values of fields the flow still declares, and the initial value of fields it added.
        let declaredFields = Set(flow.fields.map({ $0.name }))
        run.fields = old.fields.filter { declaredFields.contains($0.key) }
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
        notes.append(
            """
            \(flow.id) run moved from catalog v\(from) \(at) to v\(catalog.version) \(target)\
            \(undeclared ? " (\(why))" : "")
            """
        )
        facts.append(
            .runMigrated(
                flow: flow.id, fromVersion: from, toVersion: catalog.version, fromStep: fromStep,
                toStep: target,
                plan: plan, outcome: .moved, undeclared: undeclared))
        if !sameStep { enterStep(flow) }
    }
}

extension FlowRun {
    /// Whether every step of the run's plan is a step of `flow`: a run that can go on as it is.
    public func canBeFollowed(in flow: FlowDefinition) -> Bool {
        // Without copying each step out of the flow: this runs for every run on every event.
        plan.allSatisfy { id in flow.steps.contains { $0.id == id } }
    }
}
