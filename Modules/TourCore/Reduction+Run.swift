import TourCodec

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Starting, moving through and ending a flow's run, and firing timers.
extension Reduction {
    enum Ending { case completed, skipped, dismissed }

    /// Fires what is due at `now`: auto-advancing steps first, then the earliest pending start when
    /// no flow shows. Repeats until nothing more is due.
    mutating func fireDue() {
        holdTimedStepsForVoiceOver()
        for _ in 0..<64 {
            // The earliest deadline that has passed, then (with no flow showing) the earliest
            // pending start that has come; the first such flow in catalog order on a tie.
            let flows = catalog.flows
            if let index = earliestCome(in: flows, { $0.status == .active ? $0.deadline : nil }) {
                let flow = flows[index]
                notes.append("\(flow.id) \(state[flow: flow.id].currentStep?.rawValue ?? "") timed out")
                completeStep(flow)
                continue
            }
            if state.presentingFlow == nil, let index = earliestCome(in: flows, \.pendingStart) {
                let flow = flows[index]
                if spendBudget(on: flow) { startRun(flow, replayOf: nil) }
                continue
            }
            return
        }
    }

    /// The index of the flow whose `time` has come earliest (the first in catalog order on a tie).
    /// By index: a definition is copied only for the flow found (this runs on every event).
    private func earliestCome(in flows: [FlowDefinition], _ time: (FlowState) -> Date?) -> Int? {
        var earliest: (index: Int, time: Date)?
        for index in flows.indices {
            guard let flowState = state.flows[flows[index].id], let time = time(flowState), time <= now,
                earliest.map({ time < $0.time }) ?? true
            else { continue }
            earliest = (index, time)
        }
        return earliest?.index
    }

    /// Whether the display budget lets `flow` start by itself now; counts it when it does. A flow
    /// held back loses its pending start (its trigger stays eligible, so a later launch, visit or
    /// signal asks again) and the held fact says until when.
    private mutating func spendBudget(on flow: FlowDefinition) -> Bool {
        guard let limits = budget.budget else { return true }
        switch limits.verdict(for: flow.budget, ledger: budget.ledger, now: now) {
        case .free:
            if flow.budget != .exempt {
                budget.ledger.count(on: budget.device, at: now)
                facts.append(.budgetSpent(flow: flow.id))
            }
            return true
        case .held(let until, let reason):
            state[flow: flow.id] = FlowState()
            facts.append(.budgetHeld(flow: flow.id, until: until, reason: reason))
            notes.append("\(flow.id) held by the display budget: \(reason)")
            return false
        }
    }

    /// A step entered before VoiceOver came on keeps its timer no longer than the rules allow:
    /// one that waits for an action for a VoiceOver user stops its timer.
    private mutating func holdTimedStepsForVoiceOver() {
        let settings = accessibility
        guard settings.voiceOver else { return }
        for flow in catalog.flows {
            guard var run = state[run: flow.id], run.deadline != nil, let stepID = run.currentStep,
                let step = flow.step(stepID), flow.accessibility.autoAdvance(step, for: settings) == nil
            else { continue }
            run.deadline = nil
            state[run: flow.id] = run
            notes.append("\(flow.id) \(stepID) waits for an action (VoiceOver)")
        }
    }

    mutating func startRun(_ flow: FlowDefinition, replayOf: FlowRecord.Before?) {
        let variant = replayOf == nil ? assignVariant(flow) : nil
        if variant?.isHoldout == true {
            holdOut(flow)
            return
        }
        let plan = self.plan(of: flow, variant: variant)
        let run = FlowRun(
            plan: plan,
            fields: Dictionary(
                uniqueKeysWithValues: flow.fields.compactMap { field in field.initial.map { (field.name, $0) }
                }),
            activation: (state.flows.values.map({ $0.activation }).max() ?? 0) + 1,
            catalogVersion: catalog.version,
            catalogFingerprint: stamp.value, replayOf: replayOf)
        state[flow: flow.id] = .active(run)
        facts.append(
            .flowStarted(flow: flow.id, plan: plan, catalogVersion: catalog.version, replay: replayOf != nil))
        notes.append(
            "\(flow.id) started\(replayOf == nil ? "" : " as replay") at \(plan.first?.rawValue ?? "-")")
        effects.append(.presented(flow.id))
        analytics(flow.analytics.started, flow)
        if plan.isEmpty {
            finish(flow, .completed)
        } else {
            enterStep(flow)
        }
    }

    mutating func enterStep(_ flow: FlowDefinition) {
        guard var run = state[run: flow.id], let stepID = run.currentStep, let step = flow.step(stepID) else {
            return
        }
        run.performed = []
        run.deadline = flow.accessibility.autoAdvance(step, for: accessibility).map {
            now.addingTimeInterval($0)
        }
        state[run: flow.id] = run
        facts.append(.stepEntered(flow: flow.id, step: stepID, index: run.position + 1))
        if run.replayOf == nil { noteExposure(flow) }
        if let haptic = flow.haptics.stepEntered { effects.append(.haptic(haptic)) }
        checkGatesOnEntry(flow)
        recordCovered(by: step, in: flow)
    }

    /// The step shows another flow's content: that flow is recorded as seen (completed in this
    /// version), unless it has started or is about to.
    mutating func recordCovered(by step: StepDefinition, in flow: FlowDefinition) {
        guard state[flow: flow.id].replayOf == nil else { return }
        for covered in step.covers where covered != flow.id {
            let record = state[flow: covered]
            guard record.status == .notStarted, record.pendingStart == nil, catalog.has(flow: covered)
            else { continue }
            state[flow: covered] = .record(status: .completed, version: state.appVersion)
            facts.append(
                .flowEnded(flow: covered, ending: .completed, recorded: .completed, version: state.appVersion)
            )
            notes.append("\(covered) seen in \(flow.id) \(step.id)")
        }
    }

    mutating func checkGatesOnEntry(_ flow: FlowDefinition) {
        let run = state[flow: flow.id]
        guard let stepID = run.currentStep, let step = flow.step(stepID) else { return }
        for gate in step.gates where gate.checksOnEntry {
            if case .permission(let permission) = gate.kind {
                effects.append(.checkPermission(gate: gate.id, permission))
            }
        }
    }

    /// The current step is done: move to the next included step, or finish the flow.
    mutating func completeStep(_ flow: FlowDefinition) {
        guard var run = state[run: flow.id], let stepID = run.currentStep else { return }
        analytics(flow.analytics.stepCompleted, flow)
        facts.append(.stepCompleted(flow: flow.id, step: stepID))
        if run.position + 1 < run.plan.count {
            run.position += 1
            run.deadline = nil
            state[run: flow.id] = run
            notes.append("\(flow.id) \(stepID) -> \(run.plan[run.position])")
            enterStep(flow)
        } else {
            finish(flow, .completed)
        }
    }

    /// The flow ends: its record follows the ending and the flow's policies (or, for a replay that
    /// must not record, goes back to what it was).
    mutating func finish(_ flow: FlowDefinition, _ ending: Ending) {
        let run = state[flow: flow.id]
        let templates = ending == .completed ? flow.onComplete : flow.onSkip
        if run.replayOf == nil {
            effects += templates.map { resolve($0, fields: run.fields, parameters: [:]) }
            if ending == .completed, flow.experiment?.goal == .completion { noteGoal(of: flow) }
        }
        switch ending {
        case .completed:
            if let haptic = flow.haptics.completed { effects.append(.haptic(haptic)) }
            analytics(flow.analytics.completed, flow)
        case .skipped, .dismissed:
            if let haptic = flow.haptics.skipped { effects.append(.haptic(haptic)) }
            analytics(flow.analytics.skipped, flow)
        }
        endRun(flow, restoring: run.replayOf != nil, ending: ending)
    }

    /// Clears the run and writes the record.
    /// - Parameter ending: how it ended; nil when it was dropped (a replay dropped at launch).
    mutating func endRun(_ flow: FlowDefinition, restoring: Bool, ending: Ending? = nil) {
        let run = state[flow: flow.id]
        let next: FlowState
        if restoring, let before = run.replayOf {
            next = before.state
            notes.append("\(flow.id) replay ended, record unchanged")
        } else {
            let status: FlowStatus
            switch (ending ?? .skipped, flow.skip) {
            case (.completed, _), (.skipped, .countsAsCompleted), (.dismissed, .countsAsCompleted):
                status = .completed
            case (.skipped, .recordSkipped), (.dismissed, .recordSkipped): status = .skipped
            case (.skipped, .recordsNothing), (.dismissed, .recordsNothing): status = .notStarted
            }
            next = .record(status: status, version: state.appVersion ?? run.finishedInVersion)
            notes.append(
                "\(flow.id) \(ending == .completed ? "completed" : "skipped"), recorded \(status.rawValue)")
        }
        state[flow: flow.id] = next
        let factEnding: TourFact.Ending =
            switch ending {
            case .completed?: .completed
            case .skipped?: .skipped
            case .dismissed?: .dismissed
            case nil: .dropped
            }
        facts.append(
            .flowEnded(
                flow: flow.id, ending: factEnding, recorded: next.status, version: next.finishedInVersion))
        effects.append(.dismissed(flow.id))
    }

    mutating func analytics(_ name: String?, _ flow: FlowDefinition) {
        guard let name else { return }
        let run = state[flow: flow.id]
        var properties: [String: TourValue] = ["flow": .string(flow.id.rawValue)]
        if let step = run.currentStep {
            let progress = TourEngine.progress(position: run.position, planCount: run.plan.count, flow: flow)
            properties["step"] = .string(step.rawValue)
            properties["stepIndex"] = .int(progress.step)
            properties["stepCount"] = .int(progress.total)
        }
        if run.replayOf != nil { properties["replay"] = true }
        effects.append(.analytics(AnalyticsEvent(name: name, properties: properties)))
    }

    func resolve(_ template: EffectTemplate, fields: [String: TourValue], parameters: [String: TourValue])
        -> TourEffect
    {
        func value(_ source: ValueSource) -> TourValue {
            switch source {
            case .literal(let value): value
            case .field(let name): fields[name] ?? .null
            case .parameter(let name): parameters[name] ?? .null
            case .context(let key): context[key] ?? .null
            case .now: .double(now.timeIntervalSince1970)
            }
        }
        switch template {
        case .product(let name, let payload):
            return .product(ProductEffect(name: name, payload: payload.mapValues(value)))
        case .haptic(let haptic):
            return .haptic(haptic)
        case .analytics(let name, let properties):
            return .analytics(AnalyticsEvent(name: name, properties: properties.mapValues(value)))
        }
    }
}

extension Reduction {
    /// With haptics off on the device, the event plays none: each is left out, and the journal's
    /// outcome says so.
    mutating func muteHapticsIfOff() {
        guard !accessibility.hapticsEnabled else { return }
        let before = effects.count
        effects.removeAll { if case .haptic = $0 { true } else { false } }
        if effects.count < before { notes.append("haptics off: \(before - effects.count) not played") }
    }
}
