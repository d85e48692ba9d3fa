/// One thing wrong with a catalog: a reference to something that does not exist, a step nobody
/// can reach or leave, a required gate nothing requests. Each would otherwise be accepted and
/// silently do nothing.
public struct CatalogProblem: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable, Codable {
        case duplicateID = "duplicate_id"
        case unknownGate = "unknown_gate"
        case unknownField = "unknown_field"
        case unknownFlow = "unknown_flow"
        case unknownAction = "unknown_action"
        case unknownPassThrough = "unknown_pass_through"
        case undeclaredContextKey = "undeclared_context_key"
        case undeclaredEffect = "undeclared_effect"
        case undeclaredRequest = "undeclared_request"
        case unreachableStep = "unreachable_step"
        case deadEnd = "dead_end"
        case unrequestableGate = "unrequestable_gate"
    }

    public var kind: Kind
    public var flow: FlowID?
    public var step: StepID?
    public var detail: String

    public var description: String {
        let place = [flow?.rawValue, step?.rawValue].compactMap { $0 }.joined(separator: " step ")
        return "\(kind.rawValue)\(place.isEmpty ? "" : " (\(place))"): \(detail)"
    }
}

/// One fact the flows' conditions and fields may read, as the product's code declares it: its
/// name, its kind, the value when nothing provides it, and where it comes from.
public struct ContextKey: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case flag, number, text

        /// The value `text` means for this kind, or nil when it does not fit.
        public func value(_ text: String) -> TourValue? {
            switch self {
            case .flag:
                switch text.lowercased() {
                case "true", "yes", "1", "on": return .bool(true)
                case "false", "no", "0", "off": return .bool(false)
                default: return nil
                }
            case .number: return Int(text).map(TourValue.int)
            case .text: return text.isEmpty ? nil : .string(text)
            }
        }

        /// `value` as it is written on a command line.
        public func text(_ value: TourValue) -> String {
            if case .bool(let flag) = value { return flag ? "true" : "false" }
            return value.displayText
        }

        /// What a value of the kind looks like, for messages.
        public var example: String {
            switch self {
            case .flag: "true or false"
            case .number: "a whole number"
            case .text: "some text"
            }
        }
    }

    public enum Source: String, Sendable, Equatable {
        /// Computed by the product's handler from its own state and the time (`hasPhases`).
        case productState = "product state"
        /// A fact about the device the app reports (network, headphones). The CLI takes it as
        /// `--context KEY=VALUE`; unreported, it has its default.
        case device
    }

    public var name: String
    public var kind: Kind
    public var defaultValue: TourValue
    public var source: Source
    public var summary: String

    public init(_ name: String, _ kind: Kind, default defaultValue: TourValue, source: Source, _ summary: String) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.source = source
        self.summary = summary
    }

    /// A key the handler computes from the product's state.
    public static func computed(_ name: String, _ kind: Kind, default value: TourValue, _ summary: String) -> ContextKey {
        ContextKey(name, kind, default: value, source: .productState, summary)
    }

    /// A fact the app reports about the device.
    public static func device(_ name: String, _ kind: Kind, default value: TourValue, _ summary: String) -> ContextKey {
        ContextKey(name, kind, default: value, source: .device, summary)
    }
}

/// What the code half of a product declares, for the catalog's references to be checked against:
/// the context keys it provides, the product effects it applies, the requests it performs.
public struct CatalogDeclarations: Sendable, Equatable {
    public var context: [ContextKey]
    public var productEffects: Set<String>
    public var requests: Set<String>

    public init(context: [ContextKey] = [], productEffects: Set<String> = [], requests: Set<String> = []) {
        self.context = context
        self.productEffects = productEffects
        self.requests = requests
    }

    public var contextKeys: Set<String> { Set(context.map(\.name)) }

    /// The device facts the app reports (and the CLI takes as `--context`).
    public var deviceKeys: [ContextKey] { context.filter { $0.source == .device } }

    /// Reads `KEY=VALUE` device facts against the declarations.
    /// - Throws: a message naming what is allowed when a key is unknown, computed, or its value
    ///   does not fit its kind.
    public func deviceFacts(_ given: [(key: String, value: String)], product: String = "this product") throws(DeclarationError) -> [String: TourValue] {
        var facts: [String: TourValue] = [:]
        let device = deviceKeys
        let allowed = device.map { "\($0.name) (\($0.kind.example))" }
        let listing = allowed.isEmpty ? "\(product) reads no device facts" : "device facts: \(allowed.joined(separator: ", "))"
        for (key, text) in given {
            guard let declared = context.first(where: { $0.name == key }) else {
                let near = NameSuggestion.nearest(to: key, in: device.map(\.name))
                throw DeclarationError(
                    "unknown context key '\(key.quotable)'\(near.map { " (did you mean '\($0)'?)" } ?? ""); \(listing)")
            }
            guard declared.source == .device else {
                throw DeclarationError(
                    "'\(key)' is computed from the product's state and cannot be set; \(listing)")
            }
            guard let value = declared.kind.value(text) else {
                throw DeclarationError("'\(key)' takes \(declared.kind.example), not '\(text.quotable)'")
            }
            facts[key] = value
        }
        return facts
    }
}

/// A `--context` value that does not fit the declarations.
public struct DeclarationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension TourCatalog {
    /// Every problem of the catalog, in catalog order; empty when it is coherent.
    public func problems(declaring declared: CatalogDeclarations) -> [CatalogProblem] {
        var problems: [CatalogProblem] = []
        func add(_ kind: CatalogProblem.Kind, _ flow: FlowID?, _ step: StepID?, _ detail: String) {
            problems.append(CatalogProblem(kind: kind, flow: flow, step: step, detail: detail))
        }
        let flowIDs = Set(flows.map(\.id))
        let freeNames = Set(freeActions.map(\.name))
        for id in duplicates(flows.map(\.id.rawValue)) { add(.duplicateID, nil, nil, "flow id \(id) is used twice") }

        func checkCondition(_ condition: Condition, _ flow: FlowID?, _ step: StepID?, _ where_: String) {
            for key in condition.contextKeys where !declared.contextKeys.contains(key) {
                add(.undeclaredContextKey, flow, step, "\(where_) reads '\(key)', which the handler does not declare")
            }
            for id in condition.flowReferences where !flowIDs.contains(id) {
                add(.unknownFlow, flow, step, "\(where_) names flow '\(id)', which does not exist")
            }
        }
        func checkEffects(_ effects: [EffectTemplate], fields: Set<String>, _ flow: FlowID?, _ step: StepID?, _ where_: String) {
            for effect in effects {
                let sources: [ValueSource]
                switch effect {
                case .product(let name, let payload):
                    if !declared.productEffects.contains(name) {
                        add(.undeclaredEffect, flow, step, "\(where_) sends product effect '\(name)', which the handler does not declare")
                    }
                    sources = Array(payload.values)
                case .analytics(_, let properties): sources = Array(properties.values)
                case .haptic: sources = []
                }
                for source in sources {
                    switch source {
                    case .field(let name) where !fields.contains(name):
                        add(.unknownField, flow, step, "\(where_) reads field '\(name)', which is not declared")
                    case .context(let key) where !declared.contextKeys.contains(key):
                        add(.undeclaredContextKey, flow, step, "\(where_) reads '\(key)', which the handler does not declare")
                    default: break
                    }
                }
            }
        }
        func checkFieldKinds(_ fields: [FieldSpec], _ flow: FlowID?) {
            for field in fields {
                let key: String?
                switch field.kind {
                case .integer(_, let maximumKey): key = maximumKey
                case .date(let latestKey): key = latestKey
                default: key = nil
                }
                if let key, !declared.contextKeys.contains(key) {
                    add(.undeclaredContextKey, flow, nil, "field '\(field.name)' is bounded by '\(key)', which the handler does not declare")
                }
            }
        }
        checkFieldKinds(freeFields, nil)
        let freeFieldNames = Set(freeFields.map(\.name))
        for action in freeActions {
            for name in action.fills where !freeFieldNames.contains(name) {
                add(.unknownField, nil, nil, "free action \(action.name) fills '\(name)', which is not a free field")
            }
            checkEffects(action.effects, fields: freeFieldNames, nil, nil, "free action \(action.name)")
        }

        for flow in flows {
            let fields = Set(flow.fields.map(\.name))
            checkFieldKinds(flow.fields, flow.id)
            for id in duplicates(flow.steps.map(\.id.rawValue)) { add(.duplicateID, flow.id, nil, "step id \(id) is used twice") }
            for id in duplicates(flow.fields.map(\.name)) { add(.duplicateID, flow.id, nil, "field \(id) is declared twice") }
            for trigger in flow.triggers {
                checkCondition(trigger.when, flow.id, nil, "trigger \(trigger.moment.summary)")
            }
            checkEffects(flow.onComplete + flow.onSkip + flow.onReset, fields: fields, flow.id, nil, "the flow's end")
            var reachable = true
            for (index, step) in flow.steps.enumerated() {
                if !reachable {
                    add(.unreachableStep, flow.id, step.id, "no step before it moves on, so it never shows")
                }
                if step.includedWhen == .never {
                    add(.unreachableStep, flow.id, step.id, "it is included when 'never'")
                }
                checkCondition(step.includedWhen, flow.id, step.id, "its inclusion")
                for id in step.covers where !flowIDs.contains(id) {
                    add(.unknownFlow, flow.id, step.id, "it covers flow '\(id)', which does not exist")
                }
                for name in step.validates where !fields.contains(name) {
                    add(.unknownField, flow.id, step.id, "it validates field '\(name)', which is not declared")
                }
                for name in step.passThrough where !freeNames.contains(name) {
                    add(.unknownPassThrough, flow.id, step.id, "it lets '\(name)' through, which is not a free action")
                }
                for name in duplicates(step.actions.flatMap { [$0.name] + $0.aliases }) {
                    add(.duplicateID, flow.id, step.id, "action name \(name) is used twice")
                }
                let gateIDs = Set(step.gates.map(\.id))
                var requested: Set<String> = []
                for action in step.actions {
                    for name in action.fills where !fields.contains(name) {
                        add(.unknownField, flow.id, step.id, "\(action.name) fills '\(name)', which is not declared")
                    }
                    for name in action.requiredParameters where !action.fills.contains(name) {
                        add(.unknownField, flow.id, step.id, "\(action.name) requires '\(name)', which it does not fill")
                    }
                    if case .request(let gate) = action.outcome {
                        requested.insert(gate)
                        if !gateIDs.contains(gate) {
                            add(.unknownGate, flow.id, step.id, "\(action.name) requests gate '\(gate)', which the step does not have")
                        }
                    }
                    for precondition in action.preconditions {
                        switch precondition {
                        case .gate(let id, _, _) where !gateIDs.contains(id):
                            add(.unknownGate, flow.id, step.id, "\(action.name) waits for gate '\(id)', which the step does not have")
                        case .performed(let name, _) where !step.actions.contains(where: { $0.name == name }):
                            add(.unknownAction, flow.id, step.id, "\(action.name) needs '\(name)' first, which the step does not have")
                        case .condition(let condition, _):
                            checkCondition(condition, flow.id, step.id, "\(action.name)'s precondition")
                        default: break
                        }
                    }
                    checkEffects(action.effects, fields: fields, flow.id, step.id, action.name)
                }
                for gate in step.gates {
                    if case .request(let name) = gate.kind, !declared.requests.contains(name) {
                        add(.undeclaredRequest, flow.id, step.id, "gate \(gate.id) asks the handler for '\(name)', which it does not declare")
                    }
                    if gate.required, !requested.contains(gate.id) {
                        add(.unrequestableGate, flow.id, step.id, "gate \(gate.id) is required but no action of the step requests it")
                    }
                    checkEffects(gate.onGranted, fields: fields, flow.id, step.id, "gate \(gate.id)")
                }
                // The step lets the user on: an action advances, a gate advances when granted, or it
                // closes by itself. The last step of a flow needs a way on too, or it never finishes.
                let movesOn =
                    step.actions.contains { $0.outcome == .advance }
                    || step.gates.contains { $0.advancesWhenGranted } || step.autoAdvanceAfter != nil
                if !movesOn {
                    let leaves = step.actions.contains { $0.outcome.endsFlow }
                    if index == flow.steps.count - 1 || !leaves {
                        add(.deadEnd, flow.id, step.id, "nothing moves the user on from it (no advancing action or gate, no auto-advance)")
                    }
                    reachable = false
                } else {
                    reachable = true
                }
            }
        }
        return problems
    }

    private func duplicates(_ names: [String]) -> [String] {
        var seen: Set<String> = []
        var twice: [String] = []
        for name in names where !seen.insert(name).inserted && !twice.contains(name) { twice.append(name) }
        return twice
    }
}

extension Condition {
    /// The context keys the condition reads.
    public var contextKeys: [String] {
        switch self {
        case .flag(let key), .atLeast(let key, _): [key]
        case .not(let condition): condition.contextKeys
        case .all(let conditions), .any(let conditions): conditions.flatMap(\.contextKeys)
        default: []
        }
    }

    /// The flows the condition names.
    var flowReferences: [FlowID] {
        switch self {
        case .flowCompleted(let flow), .flowFinished(let flow): [flow]
        case .upgradedInto(_, let flows), .lastTourOlder(_, let flows): flows
        case .not(let condition): condition.flowReferences
        case .all(let conditions), .any(let conditions): conditions.flatMap(\.flowReferences)
        default: []
        }
    }
}
