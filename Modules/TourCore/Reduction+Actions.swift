import Foundation

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
            guard let free = catalog.freeActions.first(where: { $0.name == name }) else {
                throw refusal(name, "no tour is showing")
            }
            try performFree(free, parameters)
            return
        }
        let run = state[flow: flow.id]
        switch name {
        case "back":
            guard step.canGoBack, run.position > 0 else {
                throw refusal(name, "going back is not allowed on this step")
            }
            state[flow: flow.id].position -= 1
            notes.append("\(flow.id) back to \(state[flow: flow.id].plan[run.position - 1])")
            enterStep(flow)
        case "skip":
            guard step.canSkip else { throw refusal(name, "skipping is not allowed on this step") }
            finish(flow, .skipped)
        default:
            if let action = step.action(named: name) {
                try performStepAction(action, flow: flow, step: step, parameters: parameters)
            } else if step.passThrough.contains(name),
                let free = catalog.freeActions.first(where: { $0.name == name })
            {
                try performFree(free, parameters)
            } else {
                throw refusal(name, "this step does not accept '\(name.quotable)'")
            }
        }
    }

    private mutating func performStepAction(
        _ action: StepAction, flow: FlowDefinition, step: StepDefinition, parameters: [String: String]
    ) throws(TourRefusal) {
        let parsed = try parse(parameters, for: action, fields: flow.fields)
        var run = state[flow: flow.id]
        for (key, value) in parsed { run.fields[key] = value }
        if let failure = firstFailing(action.preconditions, step: step, flow: flow, run: run) {
            throw refusal(action.name, failure)
        }
        run.performed.append(action.name)
        state[flow: flow.id] = run
        notes.append("\(flow.id) \(step.id): \(action.name)")
        effects += action.effects.map { resolve($0, fields: run.fields, parameters: parsed) }
        playFeedback(of: action, flow: flow, step: step.id)
        switch action.outcome {
        case .advance:
            completeStep(flow)
        case .stage, .stay:
            break
        case .dismissFlow:
            finish(flow, .skipped)
        case .request(let gateID):
            guard let gate = step.gate(gateID) else { break }
            state[flow: flow.id].gates[gateID] = .pending
            switch gate.kind {
            case .permission(let permission):
                effects.append(.requestPermission(gate: gateID, permission))
            case .request(let name):
                let secretNames = Set(flow.fields.filter { $0.kind == .secret }.map(\.name))
                let payload = run.fields.filter { !secretNames.contains($0.key) }
                let secrets = parameters.filter { secretNames.contains($0.key) }.mapValues(Secret.init)
                effects.append(.request(gate: gateID, name: name, payload: payload, secrets: secrets))
            }
        }
    }

    private mutating func performFree(_ action: StepAction, _ parameters: [String: String])
        throws(TourRefusal)
    {
        let fields = catalog.freeFields + catalog.flows.flatMap(\.fields)
        let parsed = try parse(parameters, for: action, fields: fields)
        notes.append("free action \(action.name)")
        effects += action.effects.map { resolve($0, fields: [:], parameters: parsed) }
        if let haptic = action.haptic { effects.append(.haptic(haptic)) }
    }

    private mutating func playFeedback(of action: StepAction, flow: FlowDefinition, step: StepID) {
        if action.celebrates {
            effects.append(.celebration(flow: flow.id, step: step))
            if let haptic = action.haptic ?? flow.haptics.actionCompleted { effects.append(.haptic(haptic)) }
        } else if let haptic = action.haptic {
            effects.append(.haptic(haptic))
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
            throw refusal(action.name, "'\(key.quotable)' is not a parameter of \(action.name); \(usage)")
        }
        for key in action.requiredParameters where (parameters[key] ?? "").isEmpty {
            throw refusal(action.name, "\(action.name) needs \(key)=VALUE; \(usage)")
        }
        var parsed: [String: TourValue] = [:]
        for (key, text) in parameters {
            guard let field = fields.first(where: { $0.name == key }) else {
                parsed[key] = .string(text)
                continue
            }
            switch field.parse(text, context: context) {
            case .success(let value): parsed[key] = value
            case .failure(let error): throw refusal(action.name, error.message)
            }
        }
        return parsed
    }

    /// The message of the first precondition that does not hold, if any.
    private func firstFailing(
        _ preconditions: [Precondition], step: StepDefinition, flow: FlowDefinition, run: FlowState
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
        guard status != .pending else { throw refusal("answer \(gateID)", "an answer cannot be 'pending'") }
        let waiting = catalog.flows.filter { flow in
            guard let step = state[flow: flow.id].currentStep.flatMap(flow.step) else { return false }
            return step.gate(gateID) != nil
        }.sorted { state[flow: $0.id].activation > state[flow: $1.id].activation }
        guard let flow = waiting.first, let step = state[flow: flow.id].currentStep.flatMap(flow.step),
            let gate = step.gate(gateID)
        else {
            throw refusal("answer \(gateID)", "no step showing now waits for \(gateID)")
        }
        state[flow: flow.id].gates[gateID] = status
        notes.append("\(flow.id) \(step.id): \(gateID) \(status.rawValue)")
        if status == .granted {
            let fields = state[flow: flow.id].fields
            effects += gate.onGranted.map { resolve($0, fields: fields, parameters: [:]) }
        }
        if status == .granted && gate.advancesWhenGranted {
            completeStep(flow)
        }
    }

    /// The actions the showing card accepts now: its actions whose preconditions hold, Back and
    /// Skip where allowed, and pass-through free actions. With no card: the free actions.
    func allowedActions() -> [CardAction] {
        guard let (flow, step) = showing else {
            return catalog.freeActions.map { CardAction(name: $0.name, label: $0.label) }
        }
        let run = state[flow: flow.id]
        var actions = step.actions.filter {
            firstFailing($0.preconditions, step: step, flow: flow, run: run) == nil
        }
        .map { CardAction(name: $0.name, label: $0.label) }
        actions += catalog.freeActions.filter { step.passThrough.contains($0.name) }
            .map { CardAction(name: $0.name, label: $0.label) }
        if step.canGoBack && run.position > 0 {
            actions.append(CardAction(name: "back", label: step.backLabel))
        }
        if step.canSkip { actions.append(CardAction(name: "skip", label: step.skipLabel)) }
        return actions
    }
}
