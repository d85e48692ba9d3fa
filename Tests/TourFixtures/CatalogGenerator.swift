import CatalogDocuments
import TourCodec
import TourCore

/// Random catalogs that use every part of the catalog model (every outcome, precondition, condition,
/// field kind, value source, trigger moment and policy), for properties that must hold of any
/// catalog, not only the five products'. They need not be coherent: the document holds any catalog.
public struct CatalogGenerator {
    public var random: SplitMix64

    public init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }
    mutating func maybe<T>(_ make: (inout CatalogGenerator) -> T) -> T? { chance(50) ? make(&self) : nil }
    mutating func list<T>(_ range: ClosedRange<Int>, _ make: (inout CatalogGenerator) -> T) -> [T] {
        (0..<int(range)).map { _ in make(&self) }
    }

    /// A short name-like identifier.
    public mutating func name() -> String {
        pick(["a", "b", "step", "intro", "go", "x_1", "weeks", "apps", "ok"]) + String(int(0...40))
    }

    /// Text people read, with the characters JSON must escape and some that are not ASCII.
    public mutating func text() -> String {
        let pieces = [
            "Hello", " world", "\"quoted\"",
            "back\\slash", "tab\there", "line\nbreak", "é", "—", "日本", "🙂",
            "{apps}",
            "{#apps|app|apps}", "/", "#", "\u{1}", "",
        ]
        return list(1...4) { $0.pick(pieces) }.joined()
    }

    /// A whole number or a number with a fraction (never a whole double: JSON has one kind of number,
    /// so `2.0` reads back as the whole number 2).
    mutating func number() -> Double { Double(int(0...400)) / 4 + (chance(50) ? 0.125 : 0) }

    public mutating func value(depth: Int = 0) -> TourValue {
        switch int(0...(depth > 2 ? 4 : 6)) {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2: return .int(int(-1_000_000...1_000_000))
        case 3: return .double(Double(int(-1000...1000)) + 0.5)
        case 4: return .string(text())
        case 5: return .list(list(0...3) { $0.value(depth: depth + 1) })
        default:
            return .object(
                Dictionary(list(0...3) { ($0.name(), $0.value(depth: depth + 1)) }) { first, _ in first })
        }
    }

    public mutating func condition(depth: Int = 0) -> Condition {
        switch int(0...(depth > 1 ? 7 : 10)) {
        case 0: return .always
        case 1: return .never
        case 2: return .flag(name())
        case 3: return .atLeast(name(), int(-5...50))
        case 4: return .flowCompleted(FlowID(name()))
        case 5: return .flowFinished(FlowID(name()))
        case 6:
            return .upgradedInto("\(int(1...3)).\(int(0...9))", tourFlows: list(0...2) { FlowID($0.name()) })
        case 7:
            return .lastTourOlder(
                than: "\(int(1...3)).\(int(0...9))", tourFlows: list(0...2) { FlowID($0.name()) })
        case 8: return .not(condition(depth: depth + 1))
        case 9: return .all(list(0...3) { $0.condition(depth: depth + 1) })
        default: return .any(list(0...3) { $0.condition(depth: depth + 1) })
        }
    }

    mutating func source() -> ValueSource {
        switch int(0...4) {
        case 0: return .literal(value())
        case 1: return .field(name())
        case 2: return .parameter(name())
        case 3: return .context(name())
        default: return .now
        }
    }

    mutating func sources() -> [String: ValueSource] {
        Dictionary(list(0...3) { ($0.name(), $0.source()) }) { first, _ in first }
    }

    mutating func effect() -> EffectTemplate {
        switch int(0...2) {
        case 0: return .product(name(), payload: sources())
        case 1: return .haptic(pick(HapticFeedback.allCases))
        default: return .analytics(name(), properties: sources())
        }
    }

    mutating func outcome() -> StepAction.Outcome {
        pick([.advance, .stage, .stay, .dismissFlow, .skipFlow, .back, .request(gate: name())])
    }

    mutating func precondition() -> Precondition {
        switch int(0...4) {
        case 0: return .fieldsValid
        case 1: return .requiredGatesGranted
        case 2: return .performed(name(), message: text())
        case 3: return .gate(name(), in: Set(list(0...3) { $0.pick(GateStatus.allCases) }), message: text())
        default: return .condition(condition(), message: text())
        }
    }

    public mutating func action() -> StepAction {
        StepAction(
            name(), label: maybe { $0.text() }, aliases: list(0...2) { $0.name() },
            fills: list(0...2) { $0.name() },
            requiredParameters: list(0...1) { $0.name() }, outcome: outcome(),
            preconditions: list(0...2) { $0.precondition() },
            effects: list(0...2) { $0.effect() }, celebrates: chance(30),
            haptic: maybe { $0.pick(HapticFeedback.allCases) })
    }

    mutating func gate() -> Gate {
        Gate(
            name(), chance(50) ? .permission(PermissionName(name())) : .request(name()), required: chance(50),
            deniedMessage: text(), grantedMessage: text(), unavailableMessage: maybe { $0.text() },
            checksOnEntry: chance(50), advancesWhenGranted: chance(50), onGranted: list(0...2) { $0.effect() }
        )
    }

    mutating func field() -> FieldSpec {
        let kinds: [FieldSpec.Kind] = [
            .text, .secret, .list, .choice(list(1...3) { $0.name() }),
            .integer(
                minimum: int(-10...1900), maximum: maybe { $0.int(1900...2100) },
                maximumKey: maybe { $0.name() }),
            .date(latestKey: maybe { $0.name() }),
        ]
        let rules: [FieldSpec.Rule?] = [nil, .required, .minimumCount(int(0...5))]
        return FieldSpec(
            name(), pick(kinds), initial: maybe { $0.value() }, rule: pick(rules),
            ruleMessage: maybe { $0.text() })
    }

    public mutating func step() -> StepDefinition {
        let anchor = maybe { generator in
            Anchor(
                generator.name(), fallback: generator.maybe { $0.name() },
                availableWhen: generator.condition(),
                highlightPadding: generator.maybe { $0.number() },
                popover: generator.maybe { $0.pick(PopoverPosition.allCases) })
        }
        var step = StepDefinition(
            StepID(name()),
            StepContent(
                title: text(), body: text(), hint: maybe { $0.text() }, details: list(0...3) { $0.text() },
                anchor: anchor),
            actions: list(0...4) { $0.action() }, gates: list(0...2) { $0.gate() },
            validates: list(0...2) { $0.name() },
            canSkip: chance(40), canGoBack: chance(40), includedWhen: condition(),
            autoAdvanceAfter: maybe { $0.number() }, passThrough: list(0...2) { $0.name() },
            backLabel: maybe { $0.text() }, backAliases: list(0...1) { $0.name() },
            skipLabel: maybe { $0.text() },
            covers: list(0...2) { FlowID($0.name()) })
        if chance(10) { step.actions = [] }
        return step
    }

    mutating func trigger() -> Trigger {
        let moments: [Trigger.Moment] = [.launch, .signal(name()), .visit(name())]
        return Trigger(
            pick(moments), when: condition(), delay: chance(50) ? 0 : number(),
            whileAnotherFlowShows: maybe { $0.pick(Trigger.WhileAnotherFlowShows.allCases) })
    }

    public mutating func flow() -> FlowDefinition {
        let moments = ["stepEntered", "actionCompleted", "skipped", "completed", "refused"]
        var haptics: [String: HapticFeedback] = [:]
        for moment in moments where chance(40) { haptics[moment] = pick(HapticFeedback.allCases) }
        return FlowDefinition(
            FlowID(name()), name: text(), steps: list(0...5) { $0.step() },
            fields: list(0...3) { $0.field() },
            triggers: list(0...2) { $0.trigger() }, skip: pick(SkipPolicy.allCases),
            interruption: pick(InterruptionPolicy.allCases), replay: pick(ReplayPolicy.allCases),
            scope: pick(FlowScope.allCases), countsTerminalStep: chance(70),
            haptics: HapticMap(
                stepEntered: haptics["stepEntered"], actionCompleted: haptics["actionCompleted"],
                skipped: haptics["skipped"], completed: haptics["completed"], refused: haptics["refused"]),
            analytics: AnalyticsNames(
                started: maybe { $0.name() }, stepCompleted: maybe { $0.name() },
                skipped: maybe { $0.name() },
                completed: maybe { $0.name() }, replayed: maybe { $0.name() }),
            onComplete: list(0...2) { $0.effect() }, onSkip: list(0...1) { $0.effect() },
            onReset: list(0...1) { $0.effect() },
            unplacedStep: pick(FlowChanges.RemovedStep.allCases))
    }

    mutating func migration(from: Int) -> CatalogMigration {
        let changes = list(0...2) { generator in
            (
                FlowID(generator.name()),
                FlowChanges(
                    renamedSteps: Dictionary(generator.list(0...2) { (StepID($0.name()), StepID($0.name())) })
                    { a, _ in a },
                    removedSteps: Dictionary(
                        generator.list(0...2) {
                            (StepID($0.name()), $0.pick(FlowChanges.RemovedStep.allCases))
                        }
                    ) { a, _ in a },
                    renamedActions: Dictionary(generator.list(0...2) { ($0.name(), $0.name()) }) { a, _ in a }
                )
            )
        }
        return CatalogMigration(
            from: from, Dictionary(changes) { first, _ in first },
            removedFlows: Set(list(0...2) { FlowID($0.name()) }))
    }

    public mutating func catalog() -> TourCatalog {
        let version = int(1...6)
        let exceptions = Dictionary(list(0...2) { ($0.name(), $0.pick(FlowScope.allCases)) }) { first, _ in
            first
        }
        var catalog = TourCatalog(
            app: name(), name: maybe { $0.text() }, flowNoun: pick(["tour", "walkthrough", "onboarding"]),
            version: version, flows: list(0...4) { $0.flow() }, freeActions: list(0...3) { $0.action() },
            freeFields: list(0...2) { $0.field() },
            stateScopes: maybe { StateScopes($0.pick(FlowScope.allCases), except: exceptions) },
            migrations: (1..<version).filter { _ in chance(60) }.map { migration(from: $0) })
        if chance(30) { catalog.strings = strings(for: catalog) }
        return catalog
    }

    /// Translation tables of some of the catalog's texts (and some ids it does not have).
    mutating func strings(for catalog: TourCatalog) -> CatalogStrings {
        let ids = catalog.sourceTexts.map(\.id) + list(0...2) { $0.name() }
        var strings = CatalogStrings(source: LocaleTag(known: pick(["en", "de", "pt-BR"])))
        for locale in list(0...3, { $0.pick(["fr", "pt", "ru", "zh-Hant-TW", "es-419"]) }) {
            strings.tables[LocaleTag(known: locale)] = Dictionary(
                list(0...6) { ($0.pick(ids), CatalogStrings.Translation($0.text(), source: $0.text())) }
            ) { first, _ in first }
        }
        // English without tables is the standard, written without the member.
        if strings.isStandard { strings.source = LocaleTag(known: "de") }
        return strings
    }

    /// Declarations naming some kinds of every sort, for the document's vocabulary.
    public mutating func declarations(for catalog: TourCatalog) -> CatalogDeclarations {
        var effects: [String] = []
        var keys: [String] = []
        for flow in catalog.flows {
            for step in flow.steps {
                keys += step.includedWhen.contextKeys
                for action in step.actions {
                    for case .product(let name, _) in action.effects { effects.append(name) }
                }
            }
        }
        let kinds = Set(effects).map { name in
            EffectKind(
                name, "",
                payload: Dictionary(
                    list(0...3) {
                        ($0.name(), PayloadSpec($0.pick(ValueKind.allCases), required: $0.chance(50)))
                    }
                ) { a, _ in a })
        }
        let context = Set(keys).map { key in
            ContextKey(
                key, pick(ContextKey.Kind.allCases), default: value(),
                source: pick(ContextKey.Source.allCases), "")
        }
        return CatalogDeclarations(context: context, effects: kinds, requests: Set(list(0...2) { $0.name() }))
    }
}
