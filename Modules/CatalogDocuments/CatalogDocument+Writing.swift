import TourCodec
import TourCore

/// How each part of a catalog is written in its document (see ``CatalogDocument``). The readers in
/// `CatalogDocument+Reading.swift` take exactly these forms back.
extension TourCatalog {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set("app", app)
        writer.set("name", name)
        writer.set("flowNoun", flowNoun)
        writer.set("version", version)
        writer.set("flows", .list(flows.map(\.documentValue)))
        writer.set("freeActions", list: freeActions.map(\.documentValue))
        writer.set("freeFields", list: freeFields.map(\.documentValue))
        writer.set("stateScopes", stateScopes.documentValue)
        writer.set("migrations", list: migrations.sorted { $0.from < $1.from }.map(\.documentValue))
        if !strings.isStandard { writer.set("strings", strings.documentValue) }
        return writer.value
    }
}

extension StateScopes {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set("default", defaultScope.rawValue)
        writer.set("exceptions", object: exceptions.mapValues { .string($0.rawValue) })
        return writer.value
    }
}

extension FlowDefinition {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set("id", id.rawValue)
        writer.set("name", name)
        writer.set("steps", .list(steps.map(\.documentValue)))
        writer.set("fields", list: fields.map(\.documentValue))
        writer.set("triggers", list: triggers.map(\.documentValue))
        writer.set("skip", skip.rawValue)
        writer.set("interruption", interruption.rawValue)
        writer.set("replay", replay.rawValue)
        writer.set("scope", scope.rawValue)
        if !countsTerminalStep { writer.set("countsTerminalStep", .bool(false)) }
        writer.set("haptics", object: haptics.documentMembers)
        writer.set("analytics", object: analytics.documentMembers)
        writer.set("onComplete", list: onComplete.map(\.documentValue))
        writer.set("onSkip", list: onSkip.map(\.documentValue))
        writer.set("onReset", list: onReset.map(\.documentValue))
        writer.set("unplacedStep", unplacedStep.rawValue)
        if let experiment { writer.set("experiment", experiment.documentValue) }
        writer.set("accessibility", object: accessibility.documentMembers)
        if budget != .normal { writer.set("budget", budget.rawValue) }
        return writer.value
    }
}

extension AccessibilityRules {
    /// The members that differ from the standard rules (none: the member is left out, so the
    /// documents of flows that say nothing keep their fingerprints).
    var documentMembers: [String: TourValue] {
        var writer = DocumentWriter()
        if voiceOverTimedSteps != Self.standard.voiceOverTimedSteps {
            writer.set("voiceOverTimedSteps", voiceOverTimedSteps.rawValue)
        }
        if voiceOverTimeScale != Self.standard.voiceOverTimeScale {
            writer.set("voiceOverTimeScale", number: voiceOverTimeScale)
        }
        return writer.members
    }
}

extension HapticMap {
    var documentMembers: [String: TourValue] {
        let moments: [(String, HapticFeedback?)] = [
            ("stepEntered", stepEntered), ("actionCompleted", actionCompleted), ("skipped", skipped),
            ("completed", completed), ("refused", refused),
        ]
        return Dictionary(
            uniqueKeysWithValues: moments.compactMap { name, haptic in
                haptic.map { (name, .string($0.rawValue)) }
            })
    }
}

extension AnalyticsNames {
    var documentMembers: [String: TourValue] {
        let moments: [(String, String?)] = [
            ("started", started), ("stepCompleted", stepCompleted), ("skipped", skipped),
            ("completed", completed),
            ("replayed", replayed),
        ]
        return Dictionary(
            uniqueKeysWithValues: moments.compactMap { name, event in event.map { (name, .string($0)) } })
    }
}

extension StepDefinition {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set("id", id.rawValue)
        writer.set("content", content.documentValue)
        writer.set("actions", list: actions.map(\.documentValue))
        writer.set("gates", list: gates.map(\.documentValue))
        writer.set("validates", strings: validates)
        writer.set("includedWhen", condition: includedWhen)
        writer.set("autoAdvanceAfter", number: autoAdvanceAfter)
        writer.set("passThrough", strings: passThrough)
        writer.set("covers", strings: covers.map(\.rawValue))
        return writer.value
    }
}

extension StepContent {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set("title", title)
        writer.set("body", body)
        writer.set("hint", text: hint)
        writer.set("details", strings: details)
        if let anchor {
            var anchorWriter = DocumentWriter()
            anchorWriter.set("target", anchor.target)
            anchorWriter.set("fallback", text: anchor.fallback)
            anchorWriter.set("availableWhen", condition: anchor.availableWhen)
            anchorWriter.set("highlightPadding", number: anchor.highlightPadding)
            anchorWriter.set("popover", text: anchor.popover?.rawValue)
            writer.set("anchor", anchorWriter.value)
        }
        return writer.value
    }
}

extension StepAction {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set("name", name)
        writer.set("label", text: label)
        writer.set("aliases", strings: aliases)
        writer.set("fills", strings: fills)
        writer.set("requiredParameters", strings: requiredParameters)
        writer.set("outcome", outcome.documentValue)
        writer.set("preconditions", list: preconditions.map(\.documentValue))
        writer.set("effects", list: effects.map(\.documentValue))
        writer.set("celebrates", flag: celebrates)
        writer.set("haptic", text: haptic?.rawValue)
        return writer.value
    }
}

extension StepAction.Outcome {
    static let names = ["advance", "stage", "stay", "dismissFlow", "skipFlow", "back", "request"]

    var documentValue: TourValue {
        switch self {
        case .advance: "advance"
        case .stage: "stage"
        case .stay: "stay"
        case .dismissFlow: "dismissFlow"
        case .skipFlow: "skipFlow"
        case .back: "back"
        case .request(let gate): tagged("request", .string(gate))
        }
    }
}

extension Precondition {
    static let names = ["fieldsValid", "requiredGatesGranted", "performed", "gate", "condition"]

    var documentValue: TourValue {
        switch self {
        case .fieldsValid: "fieldsValid"
        case .requiredGatesGranted: "requiredGatesGranted"
        case .performed(let action, let message):
            tagged("performed", ["action": .string(action), "message": .string(message)])
        case .gate(let gate, let statuses, let message):
            // A set: written in the order statuses are declared, never in hashing order.
            tagged(
                "gate",
                [
                    "id": .string(gate), "message": .string(message),
                    "in": .strings(GateStatus.allCases.filter(statuses.contains).map(\.rawValue)),
                ])
        case .condition(let condition, let message):
            tagged("condition", ["when": condition.documentValue, "message": .string(message)])
        }
    }
}

extension EffectTemplate {
    static let names = ["product", "haptic", "analytics"]

    var documentValue: TourValue {
        switch self {
        case .product(let name, let payload):
            var writer = DocumentWriter()
            writer.set("name", name)
            writer.set("payload", object: payload.mapValues(\.documentValue))
            return tagged("product", writer.value)
        case .haptic(let haptic):
            return tagged("haptic", .string(haptic.rawValue))
        case .analytics(let name, let properties):
            var writer = DocumentWriter()
            writer.set("name", name)
            writer.set("properties", object: properties.mapValues(\.documentValue))
            return tagged("analytics", writer.value)
        }
    }
}

extension ValueSource {
    static let names = ["literal", "field", "parameter", "context", "now"]

    var documentValue: TourValue {
        switch self {
        case .literal(let value): tagged("literal", value)
        case .field(let name): tagged("field", .string(name))
        case .parameter(let name): tagged("parameter", .string(name))
        case .context(let key): tagged("context", .string(key))
        case .now: "now"
        }
    }
}

extension Gate {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set("id", id)
        switch kind {
        case .permission(let permission): writer.set("permission", permission.rawValue)
        case .request(let name): writer.set("request", name)
        }
        writer.set("required", flag: required)
        writer.set("deniedMessage", deniedMessage)
        writer.set("grantedMessage", grantedMessage)
        writer.set("unavailableMessage", text: unavailableMessage)
        writer.set("checksOnEntry", flag: checksOnEntry)
        writer.set("advancesWhenGranted", flag: advancesWhenGranted)
        writer.set("onGranted", list: onGranted.map(\.documentValue))
        return writer.value
    }
}

extension FieldSpec {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set("name", name)
        writer.set("kind", kind.documentValue)
        if let initial { writer.set("initial", initial) }
        switch rule {
        case nil: break
        case .required?: writer.set("rule", "required")
        case .minimumCount(let minimum)?: writer.set("rule", tagged("minimumCount", .int(minimum)))
        }
        writer.set("ruleMessage", ruleMessage)
        return writer.value
    }
}

extension FieldSpec.Kind {
    static let names = ["text", "secret", "list", "choice", "integer", "date"]

    var documentValue: TourValue {
        switch self {
        case .text: return "text"
        case .secret: return "secret"
        case .list: return "list"
        case .choice(let options): return tagged("choice", .strings(options))
        case .integer(let minimum, let maximum, let maximumKey):
            var writer = DocumentWriter()
            writer.set("minimum", minimum)
            if let maximum { writer.set("maximum", maximum) }
            writer.set("maximumKey", text: maximumKey)
            return tagged("integer", writer.value)
        case .date(let latestKey):
            var writer = DocumentWriter()
            writer.set("latestKey", text: latestKey)
            return tagged("date", writer.value)
        }
    }
}

extension Trigger {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        switch moment {
        case .launch: writer.set("moment", "launch")
        case .signal(let name): writer.set("moment", tagged("signal", .string(name)))
        case .visit(let feature): writer.set("moment", tagged("visit", .string(feature)))
        }
        writer.set("when", condition: when)
        if delay != 0 { writer.set("delay", number: delay) }
        writer.set("whileAnotherFlowShows", whileAnotherFlowShows.rawValue)
        return writer.value
    }
}

extension Condition {
    /// The condition as a catalog document writes it: `{"not":{"flag":"hasPhases"}}`.
    public var documentText: String { (try? documentValue.jsonText()) ?? "\(self)" }

    static let names = [
        "always", "never", "flag", "atLeast", "flowCompleted", "flowFinished", "upgradedInto",
        "lastTourOlder", "not",
        "all", "any",
    ]

    var documentValue: TourValue {
        switch self {
        case .always: "always"
        case .never: "never"
        case .flag(let key): tagged("flag", .string(key))
        case .atLeast(let key, let minimum):
            tagged("atLeast", ["key": .string(key), "minimum": .int(minimum)])
        case .flowCompleted(let flow): tagged("flowCompleted", .string(flow.rawValue))
        case .flowFinished(let flow): tagged("flowFinished", .string(flow.rawValue))
        case .upgradedInto(let version, let flows):
            tagged(
                "upgradedInto", ["version": .string(version), "tourFlows": .strings(flows.map(\.rawValue))])
        case .lastTourOlder(let version, let flows):
            tagged("lastTourOlder", ["than": .string(version), "tourFlows": .strings(flows.map(\.rawValue))])
        case .not(let condition): tagged("not", condition.documentValue)
        case .all(let conditions): tagged("all", .list(conditions.map(\.documentValue)))
        case .any(let conditions): tagged("any", .list(conditions.map(\.documentValue)))
        }
    }
}

extension CatalogMigration {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set("from", from)
        writer.set(
            "flows",
            object: Dictionary(uniqueKeysWithValues: flows.map { ($0.key.rawValue, $0.value.documentValue) }))
        writer.set("removedFlows", strings: removedFlows.map(\.rawValue).sorted())
        return writer.value
    }
}

extension FlowChanges {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set(
            "renamedSteps",
            object: Dictionary(
                uniqueKeysWithValues: renamedSteps.map { ($0.key.rawValue, .string($0.value.rawValue)) }))
        writer.set(
            "removedSteps",
            object: Dictionary(
                uniqueKeysWithValues: removedSteps.map { ($0.key.rawValue, .string($0.value.rawValue)) }))
        writer.set("renamedActions", object: renamedActions.mapValues(TourValue.string))
        return writer.value
    }
}

extension CatalogDeclarations {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set(
            "context",
            object: Dictionary(
                context.map { key in
                    (
                        key.name,
                        TourValue.object([
                            "kind": .string(key.kind.rawValue), "source": .string(key.source.rawValue),
                            "default": key.defaultValue,
                        ])
                    )
                }
            ) { first, _ in first })
        writer.set(
            "effects",
            object: Dictionary(
                effects.map { kind in
                    var effect = DocumentWriter()
                    effect.set(
                        "payload",
                        object: kind.payload.mapValues { spec in
                            var key = DocumentWriter()
                            key.set("kind", spec.kind.rawValue)
                            key.set("optional", flag: !spec.required)
                            return key.value
                        })
                    return (kind.name, effect.value)
                }
            ) { first, _ in first })
        writer.set("requests", strings: requests.sorted())
        return writer.value
    }
}
