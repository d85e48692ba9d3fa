#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One event being folded into the state. Holds the working copy, the effects gathered so far and
/// the notes that become the journal's outcome text. Thrown refusals discard all of it.
struct Reduction {
    let catalog: TourCatalog
    /// The fingerprint of the catalog's document, stamped on runs started or moved.
    let stamp: CatalogFingerprint
    var state: TourState
    let now: Date
    let context: TourContext
    /// Who the flows' experiments assign (none: a flow with an experiment runs its control).
    let subjects: ExperimentSubjects
    var effects: [TourEffect] = []
    var notes: [String] = []
    /// The user's accessibility settings, as the context reports them.
    let accessibility: AccessibilitySettings
    var facts: [TourFact] = []
    /// The family's display budget and what it has counted, raised by each start this event makes.
    var budget: BudgetInput

    init(
        catalog: TourCatalog, stamp: CatalogFingerprint, state: TourState, now: Date, context: TourContext,
        subjects: ExperimentSubjects = .none, budget: BudgetInput = .unlimited
    ) {
        self.budget = budget
        self.subjects = subjects
        self.catalog = catalog
        self.stamp = stamp
        self.state = state
        self.now = now
        self.context = context
        self.accessibility = AccessibilitySettings(context)
    }

    mutating func apply(_ event: TourEvent) throws(TourRefusal) {
        switch event {
        case .appLaunched(let version):
            if let version {
                guard AppVersion.isValid(version) else {
                    throw refusal(
                        "launch",
                        "app version '\(version.quotable)' is not \(AppVersion.rule)",
                        code: .invalidVersion)
                }
                state.appVersion = version
            }
            resumeInterruptedFlows()
            evaluateTriggers(.launch)
        case .signal(let name):
            guard catalog.signals.contains(name) else {
                throw refusal(
                    "signal \(name)", "unknown signal", code: .unknownSignal, allowed: catalog.signals,
                    listing: .init(label: "Signals", whenEmpty: "\(catalog.name) reports no signals"),
                    suggestion: NameSuggestion.nearest(to: name, in: catalog.signals))
            }
            evaluateTriggers(.signal(name))
        case .featureVisited(let place):
            guard catalog.features.contains(place) else {
                throw refusal(
                    "visit \(place)", "unknown feature", code: .unknownFeature, allowed: catalog.features,
                    listing: .init(label: "Features", whenEmpty: "\(catalog.name) has no features to visit"),
                    suggestion: NameSuggestion.nearest(to: place, in: catalog.features))
            }
            evaluateTriggers(.visit(place))
        case .actionPerformed(let name, let parameters):
            try perform(name, parameters)
        case .gateAnswered(let gate, let status):
            try answer(gate, status)
        case .clockAdvanced:
            break
        case .domainEvent(let name, let payload):
            notes.append("domain event \(name)")
            effects.append(.product(ProductEffect(name: name, payload: payload)))
        case .replayRequested(let id):
            try replay(id)
        case .resetRequested(let id):
            try reset(id)
        case .accountRecordLearned(let id, let record):
            try adopt(record, for: id)
        }
    }

    // MARK: - Triggers

    private mutating func evaluateTriggers(_ moment: Trigger.Moment) {
        for flow in catalog.flows {
            guard let trigger = flow.triggers.first(where: { $0.moment == moment }) else { continue }
            let run = state[flow: flow.id]
            guard run.status == .notStarted, run.pendingStart == nil,
                trigger.when.holds(context: context, state: state)
            else { continue }
            if trigger.whileAnotherFlowShows == .ignore, let showing = state.presentingFlow {
                notes.append("\(flow.id) not triggered: \(showing) is showing")
                continue
            }
            state[flow: flow.id] = .notStarted(pendingStart: now.addingTimeInterval(trigger.delay))
            notes.append(trigger.delay > 0 ? "\(flow.id) due in \(trigger.delay)s" : "\(flow.id) triggered")
        }
    }

    /// A launch after a kill: every flow that was showing follows its interruption policy, a replay
    /// that was running is dropped, and starts that were pending are re-decided by the triggers.
    private mutating func resumeInterruptedFlows() {
        for flow in catalog.flows {
            if case .notStarted(.some) = state[flow: flow.id] { state[flow: flow.id] = FlowState() }
            guard var run = state[run: flow.id] else { continue }
            if run.replayOf != nil {
                endRun(flow, restoring: true)
                notes.append("\(flow.id) replay dropped at launch")
                continue
            }
            switch flow.interruption {
            case .resume:
                // What the killed process had open on the step is gone with it: a sheet opened by a
                // staged action (Finite's week sheet) and a request still waiting for its answer.
                run.performed = []
                run.gates = run.gates.filter { $0.value != .pending }
                state[run: flow.id] = run
                notes.append("\(flow.id) resumed at \(run.currentStep?.rawValue ?? "?")")
                effects.append(.presented(flow.id))
                checkGatesOnEntry(flow)
            case .restart:
                // A run this launch's catalog migration just restarted is already on its first step.
                let restartedByMigration = facts.contains {
                    if case .runMigrated(flow.id, _, _, _, _, _, .restarted, _) = $0 { true } else { false }
                }
                if restartedByMigration { continue }
                notes.append("\(flow.id) restarted from the first step")
                facts.append(.flowEnded(flow: flow.id, ending: .dropped, recorded: .notStarted, version: nil))
                startRun(flow, replayOf: nil)
            case .discard:
                state[flow: flow.id] = FlowState()
                facts.append(.flowEnded(flow: flow.id, ending: .dropped, recorded: .notStarted, version: nil))
                notes.append("\(flow.id) run discarded")
            }
        }
    }

    // MARK: - Replay and reset

    private mutating func replay(_ id: FlowID?) throws(TourRefusal) {
        let replayable = catalog.flows.filter { $0.replay != .notReplayable }
        let names = replayable.map({ $0.id.rawValue })
        let listing = TourRefusal.Listing(
            label: "Replayable", whenEmpty: "\(catalog.name) has no \(catalog.flowNoun) to replay")
        let attempted = id.map { "replay \($0)" } ?? "replay"
        if replayable.isEmpty {
            throw refusal(
                attempted, "nothing can be replayed", code: .notReplayable, allowed: [], listing: listing)
        }
        guard let flow = id.map({ id in catalog.flow(id) }) ?? replayable.first else {
            throw refusal(
                attempted, "unknown flow", code: .unknownFlow, allowed: names, listing: listing,
                suggestion: NameSuggestion.nearest(to: id?.rawValue ?? "", in: names))
        }
        guard flow.replay != .notReplayable else {
            throw refusal(
                attempted, "\(flow.id) cannot be replayed", code: .notReplayable, allowed: names,
                listing: listing)
        }
        guard state[flow: flow.id].status != .active else {
            throw refusal(
                attempted, "\(flow.id) is already showing", code: .notReplayable,
                allowed: replayable.filter { state[flow: $0.id].status != .active }.map({ $0.id.rawValue }),
                listing: listing)
        }
        let record = state[flow: flow.id]
        switch flow.replay {
        case .resetAndPresent:
            state[flow: flow.id] = FlowState()
            facts.append(.flowReset(flow: flow.id))
            notes.append("\(flow.id) reset for replay")
            startRun(flow, replayOf: nil)
        case .presentWithoutRecording:
            startRun(flow, replayOf: record.recordBefore)
        case .notReplayable:
            break
        }
        analytics(flow.analytics.replayed, flow)
    }

    private mutating func reset(_ id: FlowID?) throws(TourRefusal) {
        if let id, !catalog.has(flow: id) {
            let names = catalog.flows.map({ $0.id.rawValue })
            throw refusal(
                "reset \(id)", "unknown flow", code: .unknownFlow, allowed: names,
                listing: .init(label: "Flows", whenEmpty: "\(catalog.name) has no flows"),
                suggestion: NameSuggestion.nearest(to: id.rawValue, in: names))
        }
        for flow in catalog.flows where id == nil || flow.id == id {
            if state[flow: flow.id].status == .active {
                effects.append(.dismissed(flow.id))
                facts.append(.flowEnded(flow: flow.id, ending: .dropped, recorded: .notStarted, version: nil))
            }
            if state.flows[flow.id] != nil { facts.append(.flowReset(flow: flow.id)) }
            state.flows[flow.id] = nil
            effects += flow.onReset.map { resolve($0, fields: [:], parameters: [:]) }
        }
        notes.append("reset \(id?.rawValue ?? "all flows")")
    }

    // MARK: - Refusals

    /// A refusal at the state now. Without `allowed`, it lists the actions the card accepts.
    func refusal(
        _ attempted: String, _ reason: String, code: TourRefusal.Code = .notAllowedNow,
        allowed: [String]? = nil,
        listing: TourRefusal.Listing = .actionsNow, suggestion: String? = nil
    ) -> TourRefusal {
        let flow = state.presentingFlow
        return TourRefusal(
            code: code, flow: flow, step: flow.flatMap { state[flow: $0].currentStep }, attempted: attempted,
            reason: reason, allowed: allowed ?? allowedActions().map({ $0.name }), listing: listing,
            suggestion: suggestion, noun: catalog.flowNoun)
    }
}
