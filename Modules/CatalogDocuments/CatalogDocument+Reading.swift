import TourCodec
import TourCore

/// How each part of a catalog is read from its document: exactly the forms
/// `CatalogDocument+Writing.swift` writes, strictly (see ``DocumentReader``).
extension TourCatalog {
    init(document reader: inout DocumentReader) throws(CatalogDocumentError) {
        let app = try reader.string("app")
        let name = try reader.string("name")
        let flowNoun = try reader.string("flowNoun")
        let version = try reader.int("version")
        let flows = try reader.list("flows").enumerated().map { index, flow throws(CatalogDocumentError) in
            try FlowDefinition(document: flow, in: "flows", index)
        }
        let freeActions = try reader.list("freeActions").enumerated().map {
            index, action throws(CatalogDocumentError) in
            try StepAction(document: action, in: "freeActions", index)
        }
        let freeFields = try reader.list("freeFields").enumerated().map {
            index, field throws(CatalogDocumentError) in
            try FieldSpec(document: field, at: "freeFields[\(index)]")
        }
        let scopes = try StateScopes(document: reader.required("stateScopes"), at: "stateScopes")
        let migrations = try reader.list("migrations").enumerated().map {
            index, migration throws(CatalogDocumentError) in
            try CatalogMigration(document: migration, at: "migrations[\(index)]")
        }
        let strings = try reader.optional("strings").map { value throws(CatalogDocumentError) in
            try CatalogStrings(document: value, at: "strings")
        }
        self.init(
            app: app, name: name, flowNoun: flowNoun, version: version, flows: flows,
            freeActions: freeActions,
            freeFields: freeFields, stateScopes: scopes, migrations: migrations)
        if let strings {
            guard !strings.isStandard else {
                throw CatalogDocumentError(
                    path: "strings",
                    "English texts without tables are written without 'strings'; leave the member out")
            }
            self.strings = strings
        }
    }
}

extension StateScopes {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        let defaultScope = try reader.raw("default", FlowScope.self)
        var exceptions: [String: FlowScope] = [:]
        for (key, scope) in try reader.object("exceptions") {
            exceptions[key] = try DocumentReader.raw(scope, FlowScope.self, at: "\(path).exceptions.\(key)")
        }
        try reader.finish()
        self.init(defaultScope, except: exceptions)
    }
}

extension FlowDefinition {
    /// Item `index` of the list at `list`; its path names it by its id once the id is read.
    init(document value: TourValue, in list: String, _ index: Int) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: "\(list)[\(index)]")
        let id = FlowID(try reader.string("id"))
        reader = try DocumentReader(value, at: "\(list)[\(id)]")
        _ = try reader.string("id")
        let path = reader.path
        let name = try reader.string("name")
        let steps = try reader.list("steps").enumerated().map { index, step throws(CatalogDocumentError) in
            try StepDefinition(document: step, in: "\(path).steps", index)
        }
        let fields = try reader.list("fields").enumerated().map { index, field throws(CatalogDocumentError) in
            try FieldSpec(document: field, at: "\(path).fields[\(index)]")
        }
        let triggers = try reader.list("triggers").enumerated().map {
            index, trigger throws(CatalogDocumentError) in
            try Trigger(document: trigger, at: "\(path).triggers[\(index)]")
        }
        let skip = try reader.raw("skip", SkipPolicy.self)
        let interruption = try reader.raw("interruption", InterruptionPolicy.self)
        let replay = try reader.raw("replay", ReplayPolicy.self)
        let scope = try reader.raw("scope", FlowScope.self)
        let countsTerminalStep =
            try reader.optional("countsTerminalStep").map { value throws(CatalogDocumentError) in
                guard case .bool(let flag) = value else {
                    throw CatalogDocumentError(path: "\(path).countsTerminalStep", "expected true or false")
                }
                return flag
            } ?? true
        let haptics = try HapticMap(
            document: reader.optional("haptics") ?? .object([:]), at: "\(path).haptics")
        let analytics = try AnalyticsNames(
            document: reader.optional("analytics") ?? .object([:]), at: "\(path).analytics")
        func effects(_ key: String) throws(CatalogDocumentError) -> [EffectTemplate] {
            try reader.list(key).enumerated().map { index, effect throws(CatalogDocumentError) in
                try EffectTemplate(document: effect, at: "\(path).\(key)[\(index)]")
            }
        }
        let onComplete = try effects("onComplete")
        let onSkip = try effects("onSkip")
        let onReset = try effects("onReset")
        let unplacedStep = try reader.raw("unplacedStep", FlowChanges.RemovedStep.self)
        let experiment = try reader.optional("experiment").map { value throws(CatalogDocumentError) in
            try Experiment(document: value, at: "\(path).experiment")
        }
        let accessibility = try AccessibilityRules(
            document: reader.optional("accessibility") ?? .object([:]), at: "\(path).accessibility")
        let budget = try reader.optionalRaw("budget", BudgetPriority.self) ?? .normal
        try reader.finish()
        self.init(
            id, name: name, steps: steps, fields: fields, triggers: triggers, skip: skip,
            interruption: interruption,
            replay: replay, scope: scope, countsTerminalStep: countsTerminalStep, haptics: haptics,
            analytics: analytics, onComplete: onComplete, onSkip: onSkip, onReset: onReset,
            unplacedStep: unplacedStep, experiment: experiment, accessibility: accessibility,
            budget: budget)
    }
}

extension AccessibilityRules {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        let timedSteps =
            try reader.optionalRaw("voiceOverTimedSteps", TimedSteps.self)
            ?? Self.standard.voiceOverTimedSteps
        let scale = try reader.optionalDouble("voiceOverTimeScale") ?? Self.standard.voiceOverTimeScale
        guard Self.timeScales.contains(scale) else {
            throw CatalogDocumentError(
                path: "\(path).voiceOverTimeScale", "expected a number from 1 to 100, found \(scale)")
        }
        try reader.finish()
        self.init(voiceOverTimedSteps: timedSteps, voiceOverTimeScale: scale)
    }
}

extension HapticMap {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        self.init(
            stepEntered: try reader.optionalRaw("stepEntered", HapticFeedback.self),
            actionCompleted: try reader.optionalRaw("actionCompleted", HapticFeedback.self),
            skipped: try reader.optionalRaw("skipped", HapticFeedback.self),
            completed: try reader.optionalRaw("completed", HapticFeedback.self),
            refused: try reader.optionalRaw("refused", HapticFeedback.self))
        try reader.finish()
    }
}

extension AnalyticsNames {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        self.init(
            started: try reader.optionalString("started"),
            stepCompleted: try reader.optionalString("stepCompleted"),
            skipped: try reader.optionalString("skipped"), completed: try reader.optionalString("completed"),
            replayed: try reader.optionalString("replayed"))
        try reader.finish()
    }
}

extension StepDefinition {
    init(document value: TourValue, in list: String, _ index: Int) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: "\(list)[\(index)]")
        let id = StepID(try reader.string("id"))
        reader = try DocumentReader(value, at: "\(list)[\(id)]")
        _ = try reader.string("id")
        let path = reader.path
        let content = try StepContent(document: reader.required("content"), at: "\(path).content")
        let actions = try reader.list("actions").enumerated().map {
            index, action throws(CatalogDocumentError) in
            try StepAction(document: action, in: "\(path).actions", index)
        }
        let gates = try reader.list("gates").enumerated().map { index, gate throws(CatalogDocumentError) in
            try Gate(document: gate, in: "\(path).gates", index)
        }
        let validates = try reader.strings("validates")
        let includedWhen = try reader.condition("includedWhen")
        let autoAdvanceAfter = try reader.optionalDouble("autoAdvanceAfter")
        let passThrough = try reader.strings("passThrough")
        let covers = try reader.strings("covers").map(FlowID.init(rawValue:))
        try reader.finish()
        self.init(
            id, content, gates: gates, validates: validates, includedWhen: includedWhen,
            autoAdvanceAfter: autoAdvanceAfter, passThrough: passThrough, covers: covers)
        // Back and Skip are in the list as written, not added by the initializer's flags.
        self.actions = actions
    }
}

extension StepContent {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        let title = try reader.string("title")
        let body = try reader.string("body")
        let hint = try reader.optionalString("hint")
        let details = try reader.strings("details")
        var anchor: Anchor?
        if let value = try reader.optional("anchor") {
            var anchorReader = try DocumentReader(value, at: "\(path).anchor")
            anchor = Anchor(
                try anchorReader.string("target"), fallback: try anchorReader.optionalString("fallback"),
                availableWhen: try anchorReader.condition("availableWhen"),
                highlightPadding: try anchorReader.optionalDouble("highlightPadding"),
                popover: try anchorReader.optionalRaw("popover", PopoverPosition.self))
            try anchorReader.finish()
        }
        try reader.finish()
        self.init(title: title, body: body, hint: hint, details: details, anchor: anchor)
    }
}

extension StepAction {
    init(document value: TourValue, in list: String, _ index: Int) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: "\(list)[\(index)]")
        let name = try reader.string("name")
        reader = try DocumentReader(value, at: "\(list)[\(name)]")
        _ = try reader.string("name")
        let path = reader.path
        let label = try reader.optionalString("label")
        let aliases = try reader.strings("aliases")
        let fills = try reader.strings("fills")
        let required = try reader.strings("requiredParameters")
        let outcome = try Outcome(document: reader.required("outcome"), at: "\(path).outcome")
        let preconditions = try reader.list("preconditions").enumerated().map {
            index, item throws(CatalogDocumentError) in
            try Precondition(document: item, at: "\(path).preconditions[\(index)]")
        }
        let effects = try reader.list("effects").enumerated().map {
            index, item throws(CatalogDocumentError) in
            try EffectTemplate(document: item, at: "\(path).effects[\(index)]")
        }
        let celebrates = try reader.flag("celebrates")
        let haptic = try reader.optionalRaw("haptic", HapticFeedback.self)
        try reader.finish()
        self.init(
            name, label: label, aliases: aliases, fills: fills, requiredParameters: required,
            outcome: outcome,
            preconditions: preconditions, effects: effects, celebrates: celebrates, haptic: haptic)
    }
}

extension StepAction.Outcome {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        let choice = try DocumentReader.tagged(value, at: path)
        switch choice.tag {
        case "request":
            self = .request(
                gate: try DocumentReader.string(DocumentReader.data(choice, at: path), at: "\(path).request"))
            return
        case "advance": self = .advance
        case "stage": self = .stage
        case "stay": self = .stay
        case "dismissFlow": self = .dismissFlow
        case "skipFlow": self = .skipFlow
        case "back": self = .back
        default: throw DocumentReader.unknown(choice.tag, among: Self.names, at: path)
        }
        try DocumentReader.none(choice, at: path)
    }
}

extension Precondition {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        let choice = try DocumentReader.tagged(value, at: path)
        switch choice.tag {
        case "fieldsValid":
            try DocumentReader.none(choice, at: path)
            self = .fieldsValid
        case "requiredGatesGranted":
            try DocumentReader.none(choice, at: path)
            self = .requiredGatesGranted
        case "performed":
            var reader = try DocumentReader(DocumentReader.data(choice, at: path), at: "\(path).performed")
            self = .performed(try reader.string("action"), message: try reader.string("message"))
            try reader.finish()
        case "gate":
            var reader = try DocumentReader(DocumentReader.data(choice, at: path), at: "\(path).gate")
            let id = try reader.string("id")
            let statuses = try reader.list("in").enumerated().map {
                index, status throws(CatalogDocumentError) in
                try DocumentReader.raw(status, GateStatus.self, at: "\(path).gate.in[\(index)]")
            }
            self = .gate(id, in: Set(statuses), message: try reader.string("message"))
            try reader.finish()
        case "condition":
            var reader = try DocumentReader(DocumentReader.data(choice, at: path), at: "\(path).condition")
            let condition = try Condition(document: reader.required("when"), at: "\(path).condition.when")
            self = .condition(condition, message: try reader.string("message"))
            try reader.finish()
        default:
            throw DocumentReader.unknown(choice.tag, among: Self.names, at: path)
        }
    }
}

extension EffectTemplate {
    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        let choice = try DocumentReader.tagged(value, at: path)
        switch choice.tag {
        case "product":
            var reader = try DocumentReader(DocumentReader.data(choice, at: path), at: "\(path).product")
            let name = try reader.string("name")
            let payload = try ValueSource.map(reader.object("payload"), at: "\(path).product.payload")
            try reader.finish()
            self = .product(name, payload: payload)
        case "haptic":
            self = .haptic(
                try DocumentReader.raw(
                    DocumentReader.data(choice, at: path), HapticFeedback.self, at: "\(path).haptic"))
        case "analytics":
            var reader = try DocumentReader(DocumentReader.data(choice, at: path), at: "\(path).analytics")
            let name = try reader.string("name")
            let properties = try ValueSource.map(
                reader.object("properties"), at: "\(path).analytics.properties")
            try reader.finish()
            self = .analytics(name, properties: properties)
        default:
            throw DocumentReader.unknown(choice.tag, among: Self.names, at: path)
        }
    }
}

extension ValueSource {
    static func map(_ members: [String: TourValue], at path: String) throws(CatalogDocumentError) -> [String:
        ValueSource]
    {
        var sources: [String: ValueSource] = [:]
        for (key, value) in members { sources[key] = try ValueSource(document: value, at: "\(path).\(key)") }
        return sources
    }

    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        let choice = try DocumentReader.tagged(value, at: path)
        func name() throws(CatalogDocumentError) -> String {
            try DocumentReader.string(DocumentReader.data(choice, at: path), at: "\(path).\(choice.tag)")
        }
        switch choice.tag {
        case "literal": self = .literal(try DocumentReader.data(choice, at: path))
        case "field": self = .field(try name())
        case "parameter": self = .parameter(try name())
        case "context": self = .context(try name())
        case "now":
            try DocumentReader.none(choice, at: path)
            self = .now
        default: throw DocumentReader.unknown(choice.tag, among: Self.names, at: path)
        }
    }
}

extension Gate {
    init(document value: TourValue, in list: String, _ index: Int) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: "\(list)[\(index)]")
        let id = try reader.string("id")
        reader = try DocumentReader(value, at: "\(list)[\(id)]")
        _ = try reader.string("id")
        let path = reader.path
        let permission = try reader.optionalString("permission")
        let request = try reader.optionalString("request")
        let kind: Kind
        switch (permission, request) {
        case (let permission?, nil): kind = .permission(PermissionName(permission))
        case (nil, let request?): kind = .request(request)
        default:
            throw CatalogDocumentError(path: path, "a gate has exactly one of 'permission' and 'request'")
        }
        let required = try reader.flag("required")
        let denied = try reader.string("deniedMessage")
        let granted = try reader.string("grantedMessage")
        let unavailable = try reader.optionalString("unavailableMessage")
        let checksOnEntry = try reader.flag("checksOnEntry")
        let advances = try reader.flag("advancesWhenGranted")
        let onGranted = try reader.list("onGranted").enumerated().map {
            index, item throws(CatalogDocumentError) in
            try EffectTemplate(document: item, at: "\(path).onGranted[\(index)]")
        }
        try reader.finish()
        self.init(
            id, kind, required: required, deniedMessage: denied, grantedMessage: granted,
            unavailableMessage: unavailable, checksOnEntry: checksOnEntry, advancesWhenGranted: advances,
            onGranted: onGranted)
    }
}
