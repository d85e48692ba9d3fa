import TourCodec
import TourCore

// Reading fields, triggers, conditions, migrations and declarations from a catalog document
// (the rest of CatalogDocument+Reading.swift).

extension FieldSpec {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        let name = try reader.string("name")
        let kind = try Kind(document: reader.required("kind"), at: "\(path).kind")
        let initial = reader.anyValue("initial")
        var rule: Rule?
        if let value = try reader.optional("rule") {
            let choice = try DocumentReader.tagged(value, at: "\(path).rule")
            switch choice.tag {
            case "required":
                try DocumentReader.none(choice, at: "\(path).rule")
                rule = .required
            case "minimumCount":
                rule = .minimumCount(
                    try DocumentReader.int(
                        DocumentReader.data(choice, at: "\(path).rule"), at: "\(path).rule.minimumCount"))
            default:
                throw DocumentReader.unknown(
                    choice.tag, among: ["required", "minimumCount"], at: "\(path).rule")
            }
        }
        let message = try reader.string("ruleMessage")
        try reader.finish()
        self.init(name, kind, initial: initial, rule: rule, ruleMessage: message)
    }
}

extension FieldSpec.Kind {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        let choice = try DocumentReader.tagged(value, at: path)
        switch choice.tag {
        case "text", "secret", "list":
            try DocumentReader.none(choice, at: path)
            self = choice.tag == "text" ? .text : choice.tag == "secret" ? .secret : .list
        case "choice":
            guard case .list(let items) = try DocumentReader.data(choice, at: path) else {
                throw CatalogDocumentError(path: "\(path).choice", "expected a list of options")
            }
            self = .choice(
                try items.enumerated().map { index, item throws(CatalogDocumentError) in
                    try DocumentReader.string(item, at: "\(path).choice[\(index)]")
                })
        case "integer":
            var reader = try DocumentReader(DocumentReader.data(choice, at: path), at: "\(path).integer")
            self = .integer(
                minimum: try reader.int("minimum"), maximum: try reader.optionalInt("maximum"),
                maximumKey: try reader.optionalString("maximumKey"))
            try reader.finish()
        case "date":
            var reader = try DocumentReader(DocumentReader.data(choice, at: path), at: "\(path).date")
            self = .date(latestKey: try reader.optionalString("latestKey"))
            try reader.finish()
        default:
            throw DocumentReader.unknown(choice.tag, among: Self.names, at: path)
        }
    }
}

extension Trigger {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        let choice = try DocumentReader.tagged(reader.required("moment"), at: "\(path).moment")
        let moment: Moment
        switch choice.tag {
        case "launch":
            try DocumentReader.none(choice, at: "\(path).moment")
            moment = .launch
        case "signal", "visit":
            let name = try DocumentReader.string(
                DocumentReader.data(choice, at: "\(path).moment"), at: "\(path).moment.\(choice.tag)")
            moment = choice.tag == "signal" ? .signal(name) : .visit(name)
        default:
            throw DocumentReader.unknown(
                choice.tag, among: ["launch", "signal", "visit"], at: "\(path).moment")
        }
        let when = try reader.condition("when")
        let delay = try reader.optionalDouble("delay") ?? 0
        let whileAnother = try reader.raw("whileAnotherFlowShows", WhileAnotherFlowShows.self)
        try reader.finish()
        self.init(moment, when: when, delay: delay, whileAnotherFlowShows: whileAnother)
    }
}

extension Condition {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        let choice = try DocumentReader.tagged(value, at: path)
        let here = "\(path).\(choice.tag)"
        func data() throws(CatalogDocumentError) -> TourValue { try DocumentReader.data(choice, at: path) }
        func flows(_ reader: inout DocumentReader) throws(CatalogDocumentError) -> [FlowID] {
            try reader.strings("tourFlows").map(FlowID.init(rawValue:))
        }
        func list() throws(CatalogDocumentError) -> [Condition] {
            guard case .list(let items) = try data() else {
                throw CatalogDocumentError(path: here, "expected a list of conditions")
            }
            return try items.enumerated().map { index, item throws(CatalogDocumentError) in
                try Condition(document: item, at: "\(here)[\(index)]")
            }
        }
        switch choice.tag {
        case "always", "never":
            try DocumentReader.none(choice, at: path)
            self = choice.tag == "always" ? .always : .never
        case "flag": self = .flag(try DocumentReader.string(data(), at: here))
        case "atLeast":
            var reader = try DocumentReader(data(), at: here)
            self = .atLeast(try reader.string("key"), try reader.int("minimum"))
            try reader.finish()
        case "flowCompleted": self = .flowCompleted(FlowID(try DocumentReader.string(data(), at: here)))
        case "flowFinished": self = .flowFinished(FlowID(try DocumentReader.string(data(), at: here)))
        case "upgradedInto":
            var reader = try DocumentReader(data(), at: here)
            self = .upgradedInto(try reader.string("version"), tourFlows: try flows(&reader))
            try reader.finish()
        case "lastTourOlder":
            var reader = try DocumentReader(data(), at: here)
            self = .lastTourOlder(than: try reader.string("than"), tourFlows: try flows(&reader))
            try reader.finish()
        case "not": self = .not(try Condition(document: data(), at: here))
        case "all": self = .all(try list())
        case "any": self = .any(try list())
        default: throw DocumentReader.unknown(choice.tag, among: Self.names, at: path)
        }
    }
}

extension CatalogMigration {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        let from = try reader.int("from")
        var flows: [FlowID: FlowChanges] = [:]
        for (flow, changes) in try reader.object("flows") {
            flows[FlowID(flow)] = try FlowChanges(document: changes, at: "\(path).flows.\(flow)")
        }
        let removed = try reader.strings("removedFlows").map(FlowID.init(rawValue:))
        try reader.finish()
        self.init(from: from, flows, removedFlows: Set(removed))
    }
}

extension FlowChanges {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        var renamed: [StepID: StepID] = [:]
        for (old, new) in try reader.stringMap("renamedSteps") { renamed[StepID(old)] = StepID(new) }
        var removed: [StepID: RemovedStep] = [:]
        for (step, what) in try reader.object("removedSteps") {
            removed[StepID(step)] = try DocumentReader.raw(
                what, RemovedStep.self, at: "\(path).removedSteps.\(step)")
        }
        let actions = try reader.stringMap("renamedActions")
        try reader.finish()
        self.init(renamedSteps: renamed, removedSteps: removed, renamedActions: actions)
    }
}

extension CatalogDeclarations {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        var context: [ContextKey] = []
        for (name, value) in try reader.object("context").sorted(by: { $0.key < $1.key }) {
            var key = try DocumentReader(value, at: "\(path).context.\(name)")
            guard let defaultValue = key.anyValue("default") else {
                throw CatalogDocumentError(path: key.path, "missing 'default'")
            }
            context.append(
                ContextKey(
                    name, try key.raw("kind", ContextKey.Kind.self), default: defaultValue,
                    source: try key.raw("source", ContextKey.Source.self), ""))
            try key.finish()
        }
        var effects: [EffectKind] = []
        for (name, value) in try reader.object("effects").sorted(by: { $0.key < $1.key }) {
            var effect = try DocumentReader(value, at: "\(path).effects.\(name)")
            var payload: [String: PayloadSpec] = [:]
            for (key, spec) in try effect.object("payload") {
                var specReader = try DocumentReader(spec, at: "\(path).effects.\(name).payload.\(key)")
                payload[key] = PayloadSpec(
                    try specReader.raw("kind", ValueKind.self), required: !(try specReader.flag("optional")))
                try specReader.finish()
            }
            try effect.finish()
            effects.append(EffectKind(name, payload: payload))
        }
        let requests = try reader.strings("requests")
        try reader.finish()
        self.init(context: context, effects: effects, requests: Set(requests))
    }
}
