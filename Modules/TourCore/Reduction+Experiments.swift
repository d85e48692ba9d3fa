/// A flow's experiment inside a reduction: which variant a run shows, the holdout, and the
/// `assigned`, `exposed` and `goalReached` facts, each journalled once per subject (the
/// ``ExperimentMark`` in the state remembers which were).
extension Reduction {
    /// The variant a new (not replayed) run of `flow` shows: the subject's kept assignment, else a
    /// new one (journalled), else the control when there is no subject to assign. Nil for a flow
    /// without an experiment.
    mutating func assignVariant(_ flow: FlowDefinition) -> Experiment.Variant? {
        guard let experiment = flow.experiment else { return nil }
        if let kept = assignedVariant(of: flow) { return kept }
        guard let subject = subjects.subject(for: flow.scope), let variant = experiment.assign(subject) else {
            return experiment.variant(experiment.control)
        }
        state.experiments[experiment.id] = ExperimentMark(
            flow: flow.id, variant: variant.name, subject: subject)
        facts.append(
            .assigned(
                flow: flow.id, .init(experiment: experiment.id, variant: variant.name, subject: subject)))
        notes.append("\(flow.id) experiment \(experiment.id): \(subject) assigned \(variant.name)")
        return variant
    }

    /// The variant the subject's runs of `flow` show now (its kept assignment), for a run being
    /// moved to another catalog. Nil without an experiment or an assignment.
    func assignedVariant(of flow: FlowDefinition) -> Experiment.Variant? {
        guard let experiment = flow.experiment, let mark = state.experiments[experiment.id] else {
            return nil
        }
        // A variant a later catalog dropped: its subjects see the control.
        return experiment.variant(mark.variant) ?? experiment.variant(experiment.control)
    }

    /// The steps a run of `flow` includes: those included now, of the variant's when it names
    /// some; `keeping` is included whatever (the step a moved run is on).
    func plan(of flow: FlowDefinition, variant: Experiment.Variant?, keeping: StepID? = nil) -> [StepID] {
        var shown: Set<StepID>?
        if case .steps(let steps)? = variant?.shows { shown = Set(steps) }
        return flow.steps.filter { step in
            step.id == keeping
                || (shown?.contains(step.id) ?? true)
                    && step.includedWhen.holds(context: context, state: state)
        }.map(\.id)
    }

    /// The subject is in the holdout: the flow ends before any card shows, as a skip would (its
    /// skip effects run), and is recorded so it is not offered again.
    mutating func holdOut(_ flow: FlowDefinition) {
        let fields = Dictionary(
            uniqueKeysWithValues: flow.fields.compactMap { field in field.initial.map { (field.name, $0) } })
        effects += flow.onSkip.map { resolve($0, fields: fields, parameters: [:]) }
        let status: FlowStatus = flow.skip == .countsAsCompleted ? .completed : .skipped
        state[flow: flow.id] = .record(status: status, version: state.appVersion)
        facts.append(.flowEnded(flow: flow.id, ending: .heldOut, recorded: status, version: state.appVersion))
        notes.append(
            "\(flow.id) held out (experiment \(flow.experiment?.id ?? "-")), recorded \(status.rawValue)")
    }

    /// The run of `flow` shows a card: its subject is exposed, once.
    mutating func noteExposure(_ flow: FlowDefinition) {
        guard let experiment = flow.experiment, var mark = state.experiments[experiment.id],
            mark.flow == flow.id,
            !mark.exposed
        else { return }
        mark.exposed = true
        state.experiments[experiment.id] = mark
        facts.append(
            .exposed(
                flow: flow.id, .init(experiment: experiment.id, variant: mark.variant, subject: mark.subject))
        )
    }

    /// The goal of `flow`'s experiment was reached: journalled once, for an assigned subject.
    mutating func noteGoal(of flow: FlowDefinition) {
        guard let experiment = flow.experiment, var mark = state.experiments[experiment.id], !mark.goalReached
        else { return }
        mark.goalReached = true
        state.experiments[experiment.id] = mark
        facts.append(
            .goalReached(
                flow: flow.id, .init(experiment: experiment.id, variant: mark.variant, subject: mark.subject))
        )
        notes.append("\(flow.id) experiment \(experiment.id): goal reached (\(experiment.goal.summary))")
    }

    /// Experiments whose goal is a product effect this event performed (from any flow or action).
    mutating func noteEffectGoals() {
        guard !state.experiments.isEmpty else { return }
        let performed = Set(
            effects.compactMap { effect -> String? in
                if case .product(let product) = effect { return product.name }
                return nil
            })
        guard !performed.isEmpty else { return }
        for (flow, experiment) in catalog.experiments {
            if case .effect(let name) = experiment.goal, performed.contains(name) { noteGoal(of: flow) }
        }
    }
}
