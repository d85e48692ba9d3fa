import Foundation

/// One event being folded into the state. Holds the working copy, the effects gathered so far and
/// the notes that become the journal's outcome text. Thrown refusals discard all of it.
struct Reduction {
    let catalog: TourCatalog
    var state: TourState
    let now: Date
    let context: TourContext
    var effects: [TourEffect] = []
    var notes: [String] = []

    init(catalog: TourCatalog, state: TourState, now: Date, context: TourContext) {
        self.catalog = catalog
        self.state = state
        self.now = now
        self.context = context
    }

    mutating func apply(_ event: TourEvent) throws(TourRefusal) {
        switch event {
        case .appLaunched(let version):
            if let version {
                guard AppVersion.isValid(version) else {
                    throw refusal(
                        "launch",
                        "app version '\(version.quotable)' is not a dotted version number such as 2.5")
                }
                state.appVersion = version
            }
            resumeInterruptedFlows()
            evaluateTriggers(.launch)
        case .signal(let name):
            guard knownMoments.contains(.signal(name)) else {
                throw refusal(
                    "signal \(name)",
                    "unknown signal; known signals: \(names(of: knownMoments, signals: true))")
            }
            evaluateTriggers(.signal(name))
        case .featureVisited(let place):
            guard knownMoments.contains(.visit(place)) else {
                throw refusal(
                    "visit \(place)", "unknown feature; features: \(names(of: knownMoments, signals: false))")
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
        }
    }

    // MARK: - Triggers

    private var knownMoments: [Trigger.Moment] { catalog.flows.flatMap(\.triggers).map(\.moment) }

    private func names(of moments: [Trigger.Moment], signals: Bool) -> String {
        let names = moments.compactMap { moment -> String? in
            switch moment {
            case .signal(let name): signals ? name : nil
            case .visit(let place): signals ? nil : place
            case .launch: nil
            }
        }
        return Array(Set(names)).sorted().joined(separator: ", ")
    }

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
            state[flow: flow.id].pendingStart = now.addingTimeInterval(trigger.delay)
            notes.append(trigger.delay > 0 ? "\(flow.id) due in \(trigger.delay)s" : "\(flow.id) triggered")
        }
    }

    /// A launch after a kill: every flow that was showing follows its interruption policy, a replay
    /// that was running is dropped, and starts that were pending are re-decided by the triggers.
    private mutating func resumeInterruptedFlows() {
        for flow in catalog.flows {
            var run = state[flow: flow.id]
            if run.pendingStart != nil {
                run.pendingStart = nil
                state[flow: flow.id] = run
            }
            guard run.status == .active else { continue }
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
                state[flow: flow.id] = run
                notes.append("\(flow.id) resumed at \(run.currentStep?.rawValue ?? "?")")
                effects.append(.presented(flow.id))
                checkGatesOnEntry(flow)
            case .restart:
                notes.append("\(flow.id) restarted from the first step")
                startRun(flow, replayOf: nil)
            case .discard:
                state[flow: flow.id] = FlowState.record(status: .notStarted, version: run.finishedInVersion)
                notes.append("\(flow.id) run discarded")
            }
        }
    }

    // MARK: - Replay and reset

    private mutating func replay(_ id: FlowID?) throws(TourRefusal) {
        let replayable = catalog.flows.filter { $0.replay != .notReplayable }
        if replayable.isEmpty {
            throw refusal("replay", "no flow of \(catalog.app) can be replayed")
        }
        guard let flow = id.map({ id in catalog.flow(id) }) ?? replayable.first else {
            throw refusal(
                "replay",
                "unknown flow '\((id?.rawValue ?? "").quotable)'; replayable: \(replayable.map(\.id.rawValue).joined(separator: ", "))"
            )
        }
        guard flow.replay != .notReplayable else {
            throw refusal(
                "replay",
                "\(flow.id) cannot be replayed; replayable: \(replayable.map(\.id.rawValue).joined(separator: ", "))"
            )
        }
        guard state[flow: flow.id].status != .active else {
            throw refusal("replay", "\(flow.id) is already showing")
        }
        let record = state[flow: flow.id]
        switch flow.replay {
        case .resetAndPresent:
            state[flow: flow.id] = FlowState()
            notes.append("\(flow.id) reset for replay")
            startRun(flow, replayOf: nil)
        case .presentWithoutRecording:
            startRun(
                flow,
                replayOf: RecordSnapshot(status: record.status, finishedInVersion: record.finishedInVersion))
        case .notReplayable:
            break
        }
        analytics(flow.analytics.replayed, flow)
    }

    private mutating func reset(_ id: FlowID?) throws(TourRefusal) {
        if let id, catalog.flow(id) == nil {
            throw refusal(
                "reset",
                "unknown flow '\(id.rawValue.quotable)'; flows: \(catalog.flows.map(\.id.rawValue).joined(separator: ", "))"
            )
        }
        for flow in catalog.flows where id == nil || flow.id == id {
            if state[flow: flow.id].status == .active { effects.append(.dismissed(flow.id)) }
            state.flows[flow.id] = nil
            effects += flow.onReset.map { resolve($0, fields: [:], parameters: [:]) }
        }
        notes.append("reset \(id?.rawValue ?? "all flows")")
    }

    // MARK: - Refusals

    func refusal(_ attempted: String, _ reason: String) -> TourRefusal {
        let flow = state.presentingFlow
        return TourRefusal(
            flow: flow, step: flow.flatMap { state[flow: $0].currentStep }, attempted: attempted,
            reason: reason,
            allowed: allowedActions().map(\.name))
    }
}

extension FlowState {
    /// A state holding only a record: no run.
    static func record(status: FlowStatus, version: String?) -> FlowState {
        var state = FlowState()
        state.status = status
        state.finishedInVersion = version
        return state
    }
}
