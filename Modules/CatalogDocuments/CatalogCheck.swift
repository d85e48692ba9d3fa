import TourCodec
import TourCore

extension TourCatalog {
    /// Every problem of the catalog against what the product's code declares, in catalog order;
    /// empty when it is coherent.
    public func problems(declaring declared: CatalogDeclarations) -> [CatalogProblem] {
        var check = CoherenceCheck(catalog: self, declared: declared)
        check.run()
        return check.problems + translationProblems.filter { $0.kind == .badTranslation }
    }
}

/// The walk behind ``TourCatalog/problems(declaring:)``: every reference in the catalog, with its
/// path in the document.
struct CoherenceCheck {
    let catalog: TourCatalog
    let declared: CatalogDeclarations
    var problems: [CatalogProblem] = []
    let flowIDs: Set<FlowID>
    let freeNames: Set<String>

    init(catalog: TourCatalog, declared: CatalogDeclarations) {
        self.catalog = catalog
        self.declared = declared
        flowIDs = Set(catalog.flows.map(\.id))
        freeNames = Set(catalog.freeActions.map(\.name))
    }

    /// Where a reference sits: its flow and step (for people) and its path (for the document).
    struct Place {
        var flow: FlowID?
        var step: StepID?
        var path: String
        func at(_ member: String) -> Place { Place(flow: flow, step: step, path: path + "." + member) }
        func at(_ member: String, _ key: String) -> Place {
            Place(flow: flow, step: step, path: path + ".\(member)[\(key)]")
        }
        /// The item `key` of the list or object here: `[0]`, `[saveMark]`.
        func item(_ key: String) -> Place { Place(flow: flow, step: step, path: path + "[\(key)]") }
    }

    mutating func add(_ kind: CatalogProblem.Kind, _ place: Place, _ detail: String) {
        problems.append(
            CatalogProblem(kind: kind, flow: place.flow, step: place.step, path: place.path, detail: detail))
    }

    mutating func run() {
        for id in duplicates(catalog.flows.map(\.id.rawValue)) {
            add(.duplicateID, Place(path: "flows"), "flow id \(id) is used twice")
        }
        for flow in catalog.flows where !WireName.isValid(flow.id.rawValue) {
            add(
                .badID, Place(flow: flow.id, path: "flows[\(flow.id.rawValue.prefix(80))]"),
                """
                flow id '\(flow.id.rawValue.prefix(80))' must be \(WireName.rule): the account server \
                refuses facts naming any other
                """
            )
        }
        checkFieldKinds(catalog.freeFields, Place(path: "freeFields"))
        let freeFields = Dictionary(catalog.freeFields.map { ($0.name, $0) }) { first, _ in first }
        for action in catalog.freeActions {
            let place = Place(path: "freeActions[\(action.name)]")
            for name in action.fills where freeFields[name] == nil {
                add(
                    .unknownField, place.at("fills"),
                    "free action \(action.name) fills '\(name)', which is not a free field")
            }
            checkEffects(
                action.effects, fields: [:], parameters: parameters(of: action, in: freeFields),
                place.at("effects"),
                "free action \(action.name)")
        }
        for flow in catalog.flows { check(flow) }
        var experimentIDs: [String: FlowID] = [:]
        for (flow, experiment) in catalog.experiments {
            if let other = experimentIDs[experiment.id] {
                add(
                    .duplicateID, Place(flow: flow.id, path: "flows[\(flow.id)].experiment.id"),
                    """
                    experiment id \(experiment.id) is also flow \(other)'s (an id is the assignment's salt, \
                    so each is unique)
                    """
                )
            }
            experimentIDs[experiment.id] = flow.id
            checkExperiment(experiment, of: flow)
        }
    }

    func parameters(of action: StepAction, in fields: [String: FieldSpec]) -> [String: FieldSpec?] {
        Dictionary(action.fills.map { ($0, fields[$0]) }) { first, _ in first }
    }

    mutating func check(_ flow: FlowDefinition) {
        let place = Place(flow: flow.id, path: "flows[\(flow.id)]")
        let fields = Dictionary(flow.fields.map { ($0.name, $0) }) { first, _ in first }
        checkFieldKinds(flow.fields, place.at("fields"))
        if !AccessibilityRules.timeScales.contains(flow.accessibility.voiceOverTimeScale) {
            add(
                .unwritable, place.at("accessibility").at("voiceOverTimeScale"),
                """
                the VoiceOver time scale is \(flow.accessibility.voiceOverTimeScale); \
                it must be from 1 to 100
                """
            )
        }
        for id in duplicates(flow.steps.map(\.id.rawValue)) {
            add(.duplicateID, place.at("steps"), "step id \(id) is used twice")
        }
        for id in duplicates(flow.fields.map(\.name)) {
            add(.duplicateID, place.at("fields"), "field \(id) is declared twice")
        }
        for (index, trigger) in flow.triggers.enumerated() {
            checkCondition(
                trigger.when, place.at("triggers[\(index)].when"), "trigger \(trigger.moment.summary)")
            if trigger.when != .always, !ContextReach.canHold(trigger.when, declarations: declared) {
                add(
                    .neverShown, place.at("triggers[\(index)].when"),
                    """
                    trigger \(trigger.moment.summary) never fires: no value of what its condition reads \
                    makes \(trigger.when.summary) true
                    """
                )
            }
        }
        for step in flow.steps where step.includedWhen != .always {
            guard !ContextReach.canHold(step.includedWhen, declarations: declared) else { continue }
            add(
                .neverShown,
                Place(flow: flow.id, step: step.id, path: "flows[\(flow.id)].steps[\(step.id)].includedWhen"),
                """
                step \(step.id) of \(flow.id) is never shown: no value of what its condition reads makes \
                \(step.includedWhen.summary) true
                """
            )
        }
        for (member, templates) in [
            ("onComplete", flow.onComplete), ("onSkip", flow.onSkip), ("onReset", flow.onReset),
        ] {
            checkEffects(templates, fields: fields, parameters: [:], place.at(member), "the flow's \(member)")
        }
        var reachable = true
        for (index, step) in flow.steps.enumerated() {
            let here = Place(flow: flow.id, step: step.id, path: place.path + ".steps[\(step.id)]")
            if !reachable {
                add(.unreachableStep, here, "no step before it moves on, so it never shows")
            }
            if step.includedWhen == .never {
                add(.unreachableStep, here.at("includedWhen"), "it is included when 'never'")
            }
            checkCondition(step.includedWhen, here.at("includedWhen"), "its inclusion")
            if let anchor = step.content.anchor {
                checkCondition(anchor.availableWhen, here.at("content.anchor.availableWhen"), "its anchor")
            }
            for id in step.covers where !flowIDs.contains(id) {
                add(.unknownFlow, here.at("covers"), "it covers flow '\(id)', which does not exist")
            }
            for name in step.validates where fields[name] == nil {
                add(
                    .unknownField, here.at("validates"), "it validates field '\(name)', which is not declared"
                )
            }
            for name in step.passThrough where !freeNames.contains(name) {
                add(
                    .unknownPassThrough, here.at("passThrough"),
                    """
                    it lets '\(name)' through, which is not a free action\
                    \(suggest(name, in: Array(freeNames)))
                    """
                )
            }
            for name in duplicates(step.actions.flatMap { [$0.name] + $0.aliases }) {
                add(.duplicateID, here.at("actions"), "action name \(name) is used twice")
            }
            let gateIDs = Set(step.gates.map(\.id))
            var requested: Set<String> = []
            for action in step.actions {
                let at = here.at("actions", action.name)
                for name in action.fills where fields[name] == nil {
                    add(
                        .unknownField, at.at("fills"),
                        """
                        \(action.name) fills '\(name)', which is not declared\
                        \(suggest(name, in: Array(fields.keys)))
                        """
                    )
                }
                for name in action.requiredParameters where !action.fills.contains(name) {
                    add(
                        .unknownField, at.at("requiredParameters"),
                        "\(action.name) requires '\(name)', which it does not fill")
                }
                if case .request(let gate) = action.outcome {
                    requested.insert(gate)
                    if !gateIDs.contains(gate) {
                        add(
                            .unknownGate, at.at("outcome"),
                            """
                            \(action.name) requests gate '\(gate)', which the step does not have\
                            \(suggest(gate, in: Array(gateIDs)))
                            """
                        )
                    }
                }
                for (number, precondition) in action.preconditions.enumerated() {
                    let pre = at.at("preconditions[\(number)]")
                    switch precondition {
                    case .gate(let id, _, _) where !gateIDs.contains(id):
                        add(
                            .unknownGate, pre,
                            """
                            \(action.name) waits for gate '\(id)', which the step does not have\
                            \(suggest(id, in: Array(gateIDs)))
                            """
                        )
                    case .performed(let name, _) where !step.actions.contains(where: { $0.name == name }):
                        add(
                            .unknownAction, pre,
                            """
                            \(action.name) needs '\(name)' first, which the step does not have\
                            \(suggest(name, in: step.actions.map(\.name)))
                            """
                        )
                    case .condition(let condition, _):
                        checkCondition(condition, pre.at("condition"), "\(action.name)'s precondition")
                    default: break
                    }
                }
                checkEffects(
                    action.effects, fields: fields, parameters: parameters(of: action, in: fields),
                    at.at("effects"), action.name)
            }
            for gate in step.gates {
                let at = here.at("gates", gate.id)
                if case .request(let name) = gate.kind, !declared.requests.contains(name) {
                    add(
                        .undeclaredRequest, at.at("request"),
                        """
                        gate \(gate.id) asks the handler for '\(name)', which it does not declare\
                        \(suggest(name, in: Array(declared.requests)))
                        """
                    )
                }
                if gate.required, !requested.contains(gate.id) {
                    add(
                        .unrequestableGate, at,
                        "gate \(gate.id) is required but no action of the step requests it")
                }
                checkEffects(
                    gate.onGranted, fields: fields, parameters: [:], at.at("onGranted"), "gate \(gate.id)")
            }
            // The step lets the user on: an action advances, a gate advances when granted, or it
            // closes by itself. The last step of a flow needs a way on too, or it never finishes.
            let movesOn =
                step.actions.contains { $0.outcome == .advance }
                || step.gates.contains { $0.advancesWhenGranted } || step.autoAdvanceAfter != nil
            if !movesOn {
                let leaves = step.actions.contains { $0.outcome.endsFlow }
                if index == flow.steps.count - 1 || !leaves {
                    add(
                        .deadEnd, here,
                        "nothing moves the user on from it (no advancing action or gate, no auto-advance)")
                }
                reachable = false
            } else {
                reachable = true
            }
        }
    }

    func suggest(_ name: String, in names: [String]) -> String {
        NameSuggestion.nearest(to: name, in: names.sorted()).map { " (did you mean '\($0)'?)" } ?? ""
    }

    func listing(_ names: [String]) -> String { names.isEmpty ? "none" : names.joined(separator: ", ") }

    func duplicates(_ names: [String]) -> [String] {
        var seen: Set<String> = []
        var twice: [String] = []
        for name in names where !seen.insert(name).inserted && !twice.contains(name) { twice.append(name) }
        return twice
    }
}
