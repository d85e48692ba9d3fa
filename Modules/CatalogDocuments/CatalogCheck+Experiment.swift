import TourCodec
import TourCore

extension CoherenceCheck {
    /// An experiment that can run and be measured: named variants with usable weights, a control
    /// among them, steps of its flow, and a goal the catalog can reach.
    mutating func checkExperiment(_ experiment: Experiment, of flow: FlowDefinition) {
        let place = Place(flow: flow.id, path: "flows[\(flow.id)].experiment")
        if !Experiment.isValidName(experiment.id) {
            add(
                .experiment, place.at("id"), "experiment id '\(experiment.id)' must be \(Experiment.nameRule)"
            )
        }
        if experiment.variants.count < 2 {
            add(
                .experiment, place.at("variants"),
                "an experiment compares at least two variants (it has \(experiment.variants.count))")
        }
        for name in duplicates(experiment.variants.map(\.name)) {
            add(.duplicateID, place.at("variants"), "variant \(name) is declared twice")
        }
        if experiment.variant(experiment.control) == nil {
            add(
                .experiment, place.at("control"),
                """
                the control '\(experiment.control)' is not one of its variants (\
                \(experiment.variants.map(\.name).joined(separator: ", ")))
                """
            )
        }
        for variant in experiment.variants {
            let here = place.at("variants", variant.name)
            if !Experiment.isValidName(variant.name) {
                add(
                    .experiment, here.at("name"),
                    "variant name '\(variant.name)' must be \(Experiment.nameRule)")
            }
            if !(0...Rollout.buckets).contains(variant.weight) {
                add(
                    .experiment, here.at("weight"),
                    "a weight is 0 to \(Rollout.buckets) (it is \(variant.weight))")
            }
            guard case .steps(let steps) = variant.shows else { continue }
            if steps.isEmpty {
                add(
                    .experiment, here.at("steps"),
                    "variant \(variant.name) shows no step; a variant that shows nothing is a holdout")
            }
            for step in steps where flow.step(step) == nil {
                add(
                    .experiment, here.at("steps"),
                    """
                    variant \(variant.name) shows step '\(step)', which the flow does not have\
                    \(suggest(step.rawValue, in: flow.steps.map(\.id.rawValue)))
                    """
                )
            }
            for step in duplicates(steps.map(\.rawValue)) {
                add(.duplicateID, here.at("steps"), "variant \(variant.name) lists step \(step) twice")
            }
        }
        if experiment.variants.reduce(0, { $0 + max(0, $1.weight) }) == 0 {
            add(
                .experiment, place.at("variants"),
                "no variant has a positive weight, so nobody could be assigned")
        }
        switch experiment.goal {
        case .completion:
            if experiment.variants.contains(where: \.isHoldout) {
                add(
                    .experiment, place.at("goal"),
                    """
                    a holdout never completes the flow, so its goal must be a product effect ({\"effect\": \
                    NAME}), not completion
                    """
                )
            }
        case .effect(let name):
            if declared.effect(name) == nil {
                add(
                    .undeclaredEffect, place.at("goal"),
                    """
                    the goal is product effect '\(name)', which the handler does not declare\
                    \(suggest(name, in: declared.effectNames))
                    """
                )
            } else if !catalog.sendsEffect(named: name) {
                add(
                    .experiment, place.at("goal"),
                    """
                    the goal is product effect '\(name)', which no flow, step or action of the catalog \
                    sends, so it is never reached
                    """
                )
            }
        }
    }
}

extension TourCatalog {
    /// Whether any template of the catalog sends the product effect `name`.
    func sendsEffect(named name: String) -> Bool {
        var templates = freeActions.flatMap(\.effects)
        for flow in flows {
            templates += flow.onComplete + flow.onSkip + flow.onReset
            for step in flow.steps {
                templates += step.actions.flatMap(\.effects) + step.gates.flatMap(\.onGranted)
            }
        }
        return templates.contains { if case .product(name, _) = $0 { true } else { false } }
    }
}
