import TourCodec
import TourCore

// What a catalog uses of the declarations: the part its document carries.

extension FieldSpec.Kind {
    /// The kind of value a field of this kind holds.
    public var valueKind: ValueKind {
        switch self {
        case .text, .secret, .choice, .date: .text
        case .list: .list
        case .integer: .number
        }
    }
}

extension CatalogDeclarations {
    /// The part of these declarations `catalog` uses: the context keys its conditions, fields and
    /// effects read, the effect kinds it sends, the requests its gates make. This is what a catalog
    /// document carries: a binary whose declarations cover it can run the document.
    public func used(by catalog: TourCatalog) -> CatalogDeclarations {
        var keys: Set<String> = []
        var effects: Set<String> = []
        var requests: Set<String> = []
        func read(_ templates: [EffectTemplate]) {
            for template in templates {
                switch template {
                case .product(let name, let payload):
                    effects.insert(name)
                    for case .context(let key) in payload.values { keys.insert(key) }
                case .analytics(_, let properties):
                    for case .context(let key) in properties.values { keys.insert(key) }
                case .haptic: break
                }
            }
        }
        func read(_ fields: [FieldSpec]) {
            for field in fields {
                switch field.kind {
                case .integer(_, _, let key?), .date(let key?): keys.insert(key)
                default: break
                }
            }
        }
        read(catalog.freeFields)
        for action in catalog.freeActions { read(action.effects) }
        for flow in catalog.flows {
            read(flow.fields)
            read(flow.onComplete + flow.onSkip + flow.onReset)
            // A goal names an effect the product performs: the binary must declare it.
            if case .effect(let name)? = flow.experiment?.goal { effects.insert(name) }
            for trigger in flow.triggers { keys.formUnion(trigger.when.contextKeys) }
            for step in flow.steps {
                keys.formUnion(step.includedWhen.contextKeys)
                if let anchor = step.content.anchor { keys.formUnion(anchor.availableWhen.contextKeys) }
                for action in step.actions {
                    read(action.effects)
                    for case .condition(let condition, _) in action.preconditions {
                        keys.formUnion(condition.contextKeys)
                    }
                }
                for gate in step.gates {
                    read(gate.onGranted)
                    if case .request(let name) = gate.kind { requests.insert(name) }
                }
            }
        }
        return CatalogDeclarations(
            context: context.filter { keys.contains($0.name) },
            effects: self.effects.filter { effects.contains($0.name) },
            requests: self.requests.intersection(requests))
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
