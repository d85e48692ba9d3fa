import TourCodec

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// User actions on the card showing, the product's free actions, and answers to gates.
extension Reduction {
    private var showing: (flow: FlowDefinition, step: StepDefinition)? {
        guard let id = state.presentingFlow, let flow = catalog.flow(id),
            let stepID = state[flow: id].currentStep, let step = flow.step(stepID)
        else { return nil }
        return (flow, step)
    }

    mutating func perform(_ name: String, _ parameters: [String: String]) throws(TourRefusal) {
        guard let (flow, step) = showing else {
            guard let free = catalog.freeActions.first(where: { $0.answers(to: name) }) else {
                throw unknownOrNotNow(name, "no \(catalog.flowNoun) is showing", code: .nothingShowing)
            }
            try performFree(free, parameters)
            return
        }
        if let action = step.action(named: name) {
            try performStepAction(action, flow: flow, step: step, parameters: parameters)
        } else if let free = catalog.freeActions.first(where: { $0.answers(to: name) }),
            step.passThrough.contains(free.name)
        {
            try performFree(free, parameters)
        } else if let elsewhere = catalog.flows.lazy.flatMap({ $0.steps }).flatMap({ $0.actions }).first(
            where: { $0.name == name }),
            elsewhere.outcome == .back || elsewhere.outcome.endsFlow
        {
            // A way out other steps offer: say which kind is not allowed here.
            throw refusal(
                name,
                elsewhere.outcome == .back
                    ? "going back is not allowed on this step" : "skipping is not allowed on this step")
        } else {
            throw unknownOrNotNow(name, "this step does not accept '\(name.quotable)'", code: .notAllowedNow)
        }
    }

    /// The refusal of an action the card does not take: "unknown action" (with the nearest name)
    /// when no step of the product has it, else `reason`.
    private func unknownOrNotNow(_ name: String, _ reason: String, code: TourRefusal.Code) -> TourRefusal {
        if catalog.hasActionName(name) { return refusal(name, reason, code: code) }
        let known = catalog.actionNames
        let now = allowedActions().map({ $0.name })
        let suggestion =
            NameSuggestion.nearest(to: name, in: now) ?? NameSuggestion.nearest(to: name, in: known)
        return refusal(name, "unknown action", code: .unknownAction, suggestion: suggestion)
    }

    /// The name the journal records for `name`: the action's own name when `name` is an alias.
    func canonicalName(of given: String) -> String {
        // A name from an earlier catalog version (an action renamed since) still works.
        var name = given
        let showingStep = showing?.step
        if let step = showingStep, step.action(named: name) == nil,
            let renamed = catalog.currentActionName(name)
        {
            name = renamed
        }
        guard let step = showingStep else {
            return catalog.freeActions.first { $0.answers(to: name) }?.name ?? name
        }
        if let action = step.action(named: name) { return action.name }
        let free = catalog.freeActions.first { $0.answers(to: name) && step.passThrough.contains($0.name) }
        return free?.name ?? name
    }

    private mutating func performStepAction(
        _ action: StepAction, flow: FlowDefinition, step: StepDefinition, parameters: [String: String]
    ) throws(TourRefusal) {
        guard var run = state[run: flow.id] else { return }
        if action.outcome == .back, run.position == 0 {
            throw refusal(action.name, "going back is not allowed on this step")
        }
        let parsed = try parse(parameters, for: action, fields: flow.fields)
        for (key, value) in parsed { run.fields[key] = value }
        if let failure = firstFailing(action.preconditions, step: step, flow: flow, run: run) {
            throw refusal(action.name, failure)
        }
        run.performed.append(action.name)
        state[run: flow.id] = run
        notes.append("\(flow.id) \(step.id): \(action.name)")
        effects += action.effects.map { resolve($0, fields: run.fields, parameters: parsed) }
        playFeedback(of: action, flow: flow, step: step.id)
        switch action.outcome {
        case .advance:
            completeStep(flow)
        case .stage, .stay:
            break
        case .back:
            state[run: flow.id]?.position -= 1
            notes.append("\(flow.id) back to \(state[flow: flow.id].plan[run.position - 1])")
            enterStep(flow)
        case .dismissFlow:
            finish(flow, .dismissed)
        case .skipFlow:
            finish(flow, .skipped)
        case .request(let gateID):
            guard let gate = step.gate(gateID) else { break }
            state[run: flow.id]?.gates[gateID] = .pending
            switch gate.kind {
            case .permission(let permission):
                effects.append(.requestPermission(gate: gateID, permission))
            case .request(let name):
                let secretNames = Set(flow.fields.filter { $0.kind == .secret }.map({ $0.name }))
                let payload = run.fields.filter { !secretNames.contains($0.key) }
                let secrets = parameters.filter { secretNames.contains($0.key) }.mapValues(Secret.init)
                effects.append(.request(gate: gateID, name: name, payload: payload, secrets: secrets))
            }
        }
    }

    private mutating func performFree(_ action: StepAction, _ parameters: [String: String])
        throws(TourRefusal)
    {
        let fields = catalog.freeFields + catalog.flows.flatMap({ $0.fields })
        let parsed = try parse(parameters, for: action, fields: fields)
        notes.append("free action \(action.name)")
        effects += action.effects.map { resolve($0, fields: [:], parameters: parsed) }
        if let haptic = action.haptic { effects.append(.haptic(haptic)) }
    }

    /// The action's own haptic (Finite's medium impact on phase save) plays first; an action that
    /// completes the step's task then celebrates with the flow's "action completed" haptic, whichever
    /// way it was completed (save or "Skip for now" both complete Finite's step 5).
    private mutating func playFeedback(of action: StepAction, flow: FlowDefinition, step: StepID) {
        if let haptic = action.haptic { effects.append(.haptic(haptic)) }
        if action.celebrates {
            effects.append(
                .celebration(flow: flow.id, step: step, reducedMotion: accessibility.reducedMotion))
            if let haptic = flow.haptics.actionCompleted { effects.append(.haptic(haptic)) }
        }
    }

    /// Checks the parameters against the action and the fields they fill.
    private func parse(
        _ parameters: [String: String], for action: StepAction, fields: [FieldSpec]
    ) throws(TourRefusal) -> [String: TourValue] {
        let usage =
            action.fills.isEmpty
            ? "it takes no parameters" : "its parameters: \(action.fills.joined(separator: ", "))"
        for key in parameters.keys.sorted() where !action.fills.contains(key) {
            // `passwordX=...`: a key that begins with a secret field's name may hold its value.
            let shown = SecretRedactor(secretFields: fields.filter { $0.kind == .secret }.map(\.name))
                .redactWord(key)
            throw refusal(
                action.name, "'\(shown.quotable)' is not a parameter of \(action.name); \(usage)",
                code: .invalidParameter,
                suggestion: NameSuggestion.nearest(to: key, in: action.fills).map { "\($0)=" })
        }
        for key in action.requiredParameters where (parameters[key] ?? "").isEmpty {
            throw refusal(action.name, "\(action.name) needs \(key)=VALUE; \(usage)", code: .invalidParameter)
        }
        var parsed: [String: TourValue] = [:]
        for (key, text) in parameters {
            guard let field = fields.first(where: { $0.name == key }) else {
                parsed[key] = .string(text)
                continue
            }
            switch field.parse(text, context: context) {
            case .success(let value): parsed[key] = value
            case .failure(let error): throw refusal(action.name, error.message, code: .invalidParameter)
            }
        }
        return parsed
    }

    /// The message of the first precondition that does not hold, if any.
    private func firstFailing(
        _ preconditions: [Precondition], step: StepDefinition, flow: FlowDefinition, run: FlowRun
    ) -> String? {
        for precondition in preconditions {
            switch precondition {
            case .fieldsValid:
                for name in step.validates {
                    guard let field = flow.field(name) else { continue }
                    if !field.satisfiesRule(run.fields[name]) { return field.ruleMessage }
                }
            case .requiredGatesGranted:
                for gate in step.gates where gate.required && run.gates[gate.id] != .granted {
                    let status = run.gates[gate.id] ?? .notDetermined
                    return status == .denied || status == .restricted
                        ? gate.deniedMessage : "\(gate.id) must be granted first"
                }
            case .performed(let action, let message):
                if !run.performed.contains(action) { return message }
            case .gate(let id, let statuses, let message):
                if !statuses.contains(run.gates[id] ?? .notDetermined) { return message }
            case .condition(let condition, let message):
                if !condition.holds(context: context, state: state) { return message }
            }
        }
        return nil
    }

    mutating func answer(_ gateID: String, _ status: GateStatus) throws(TourRefusal) {
        guard status != .pending else {
            throw refusal("answer \(gateID)", "an answer cannot be 'pending'", code: .notWaiting)
        }
        let waiting = catalog.flows.filter { flow in
            guard let step = state[flow: flow.id].currentStep.flatMap(flow.step) else { return false }
            return step.gate(gateID) != nil
        }.sorted { state[flow: $0.id].activation > state[flow: $1.id].activation }
        guard let flow = waiting.first, let step = state[flow: flow.id].currentStep.flatMap(flow.step),
            let gate = step.gate(gateID)
        else {
            throw refusal("answer \(gateID)", "no step showing now waits for \(gateID)", code: .notWaiting)
        }
        state[run: flow.id]?.gates[gateID] = status
        notes.append("\(flow.id) \(step.id): \(gateID) \(status.rawValue)")
        facts.append(.gateAnswered(flow: flow.id, step: step.id, gate: gateID, answer: status))
        if status == .granted {
            let fields = state[flow: flow.id].fields
            effects += gate.onGranted.map { resolve($0, fields: fields, parameters: [:]) }
        }
        if status == .granted && gate.advancesWhenGranted {
            completeStep(flow)
        }
    }

    /// The actions the showing card accepts now: its actions whose preconditions hold (Back not on
    /// the run's first step), pass-through free actions before the ways out (Back, Skip, Dismiss).
    /// With no card: the free actions.
    func allowedActions() -> [CardAction] {
        guard let (flow, step) = showing else {
            return catalog.freeActions.map { CardAction(name: $0.name, label: $0.label) }
        }
        guard let run = state[run: flow.id] else { return [] }
        let available = step.actions.filter {
            !($0.outcome == .back && run.position == 0)
                && firstFailing($0.preconditions, step: step, flow: flow, run: run) == nil
        }
        let passThrough = catalog.freeActions.filter { step.passThrough.contains($0.name) }
        return (available.filter { !$0.isWayOut } + passThrough + available.filter({ $0.isWayOut }))
            .map { CardAction(name: $0.name, label: $0.label) }
    }
}
