/// A flow as data: its steps and the policies the engine applies to it.
public struct FlowDefinition: Sendable, Equatable {
    public var id: FlowID
    public var name: String
    public var steps: [StepDefinition]
    public var fields: [FieldSpec]
    /// What starts the flow by itself; empty: only replay does.
    public var triggers: [Trigger]
    public var skip: SkipPolicy
    public var interruption: InterruptionPolicy
    public var replay: ReplayPolicy
    public var scope: FlowScope
    /// False: the last step is a terminal "done" step left out of the count (Finite's dots).
    public var countsTerminalStep: Bool
    public var haptics: HapticMap
    public var analytics: AnalyticsNames
    /// Product side effects when the flow completes (LockedIn's LET'S GO).
    public var onComplete: [EffectTemplate]
    /// Product side effects when the flow ends by skip or dismissal.
    public var onSkip: [EffectTemplate]
    /// Product side effects of a debug reset, so product state that mirrors the flow's record
    /// (LockedIn's `hasCompletedOnboarding`) is reset with it.
    public var onReset: [EffectTemplate]
    /// What a stored run does when its step is neither in this flow nor placed by the catalog's
    /// declared migrations (a change that reached users without being declared): start again
    /// (the default), or go on at the next step of its plan that still exists. Journalled as an
    /// undeclared ``TourFact/runMigrated``; `check` refuses such a release before it ships.
    public var unplacedStep: FlowChanges.RemovedStep
    /// The experiment the flow runs, if any: its variants, their weights and the goal.
    public var experiment: Experiment?
    /// How the flow adapts to its user's accessibility settings where the choice is the
    /// catalog's (``AccessibilityRules``).
    public var accessibility: AccessibilityRules
    /// How the flow meets the family's display budget (``BudgetPriority``); replays never do.
    public var budget: BudgetPriority

    public init(
        _ id: FlowID, name: String, steps: [StepDefinition], fields: [FieldSpec] = [],
        triggers: [Trigger] = [],
        skip: SkipPolicy = .recordSkipped, interruption: InterruptionPolicy = .resume,
        replay: ReplayPolicy = .notReplayable, scope: FlowScope = .install, countsTerminalStep: Bool = true,
        haptics: HapticMap = .none, analytics: AnalyticsNames = .none, onComplete: [EffectTemplate] = [],
        onSkip: [EffectTemplate] = [], onReset: [EffectTemplate] = [],
        unplacedStep: FlowChanges.RemovedStep = .restart,
        experiment: Experiment? = nil, accessibility: AccessibilityRules = .standard,
        budget: BudgetPriority = .normal
    ) {
        self.budget = budget
        self.id = id
        self.name = name
        self.steps = steps
        self.fields = fields
        self.triggers = triggers
        self.skip = skip
        self.interruption = interruption
        self.replay = replay
        self.scope = scope
        self.countsTerminalStep = countsTerminalStep
        self.haptics = haptics
        self.analytics = analytics
        self.onComplete = onComplete
        self.onSkip = onSkip
        self.onReset = onReset
        self.unplacedStep = unplacedStep
        self.experiment = experiment
        self.accessibility = accessibility
    }

    public func step(_ id: StepID) -> StepDefinition? { steps.first { $0.id == id } }
    func field(_ name: String) -> FieldSpec? { fields.first { $0.name == name } }
}

/// Everything one product declares: its flows, in priority order, and the actions its UI accepts
/// outside any flow (Mood Tracker's mood swipes).
public struct TourCatalog: Sendable, Equatable {
    public var app: String
    /// The product's name as people read it ("Carrier Wave").
    public var name: String
    /// The product's word for one of its flows: "walkthrough", "onboarding", "tour", "tutorial".
    public var flowNoun: String
    public var flows: [FlowDefinition]
    /// Actions usable when no flow shows, or while a step lists them in ``StepDefinition/passThrough``.
    public var freeActions: [StepAction]
    /// The fields free actions' parameters fill (they are parsed and checked like flow fields).
    public var freeFields: [FieldSpec]
    /// Whose each key of the product's domain state is (default: install when every flow is
    /// install-scoped, else per user).
    public var stateScopes: StateScopes
    /// The catalog's version: raised by a release that changes a flow, with a ``CatalogMigration``
    /// saying how runs in progress under the previous version move.
    public var version: Int
    /// The catalog's translations (``CatalogStrings``).
    public var strings = CatalogStrings()
    /// The locale the catalog's texts are in after ``localized(to:)``; nil: its source locale.
    /// Not part of its document.
    public internal(set) var locale: LocaleTag?
    /// How runs started under earlier versions move to this one, oldest first (kept sorted).
    public var migrations: [CatalogMigration] {
        didSet { migrations.sort { $0.from < $1.from } }
    }

    public init(
        app: String, name: String? = nil, flowNoun: String = "tour", version: Int = 1,
        flows: [FlowDefinition],
        freeActions: [StepAction] = [], freeFields: [FieldSpec] = [], stateScopes: StateScopes? = nil,
        migrations: [CatalogMigration] = []
    ) {
        self.app = app
        self.version = version
        self.migrations = migrations.sorted { $0.from < $1.from }
        self.name = name ?? app
        self.flowNoun = flowNoun
        self.flows = flows
        self.freeActions = freeActions
        self.freeFields = freeFields
        self.stateScopes =
            stateScopes ?? StateScopes(flows.allSatisfy { $0.scope == .install } ? .install : .user)
    }

    public func flow(_ id: FlowID) -> FlowDefinition? { flows.first { $0.id == id } }
    /// Whether the catalog has flow `id` (without copying its definition out, as `flow(_:)` does).
    public func has(flow id: FlowID) -> Bool { flows.contains { $0.id == id } }

    /// Every experiment of the catalog with its flow, in catalog order.
    public var experiments: [(flow: FlowDefinition, experiment: Experiment)] {
        flows.compactMap { flow in flow.experiment.map { (flow, $0) } }
    }

    /// Whose each flow record and state key is.
    public var scopes: Scopes {
        Scopes(flows: Dictionary(uniqueKeysWithValues: flows.map { ($0.id, $0.scope) }), state: stateScopes)
    }

    /// Every action name (and alias) any step or the product's free actions answer to, each once.
    public var actionNames: [String] {
        var seen: Set<String> = []
        let actions = flows.flatMap({ $0.steps }).flatMap({ $0.actions }) + freeActions
        return actions.flatMap { [$0.name] + $0.aliases }.filter { seen.insert($0).inserted }
    }

    /// Whether `name` is in ``actionNames`` (exactly), found without building the list: a refusal
    /// asks it of every action the card does not take.
    public func hasActionName(_ name: String) -> Bool {
        func named(_ action: StepAction) -> Bool { action.name == name || action.aliases.contains(name) }
        return freeActions.contains(where: named)
            || flows.contains { flow in flow.steps.contains { step in step.actions.contains(where: named) } }
    }

    /// The features a visit can name (the moments of visit triggers), each once, in catalog order.
    public var features: [String] {
        var seen: Set<String> = []
        return flows.flatMap({ $0.triggers }).compactMap { trigger -> String? in
            guard case .visit(let feature) = trigger.moment, seen.insert(feature).inserted else { return nil }
            return feature
        }
    }

    /// The signals the app can report (the moments of signal triggers), each once, in catalog order.
    public var signals: [String] {
        var seen: Set<String> = []
        return flows.flatMap({ $0.triggers }).compactMap { trigger -> String? in
            guard case .signal(let signal) = trigger.moment, seen.insert(signal).inserted else { return nil }
            return signal
        }
    }

    /// Flows a replay can show.
    public var replayableFlows: [FlowID] { flows.filter { $0.replay != .notReplayable }.map({ $0.id }) }

    /// Every permission a step asks for, in catalog order, each once.
    public var permissions: [PermissionName] {
        var seen: Set<PermissionName> = []
        return flows.flatMap({ $0.steps }).flatMap({ $0.gates }).compactMap { gate -> PermissionName? in
            guard case .permission(let permission) = gate.kind, seen.insert(permission).inserted else {
                return nil
            }
            return permission
        }
    }

    /// The ids of every request gate (answered by the product's handler, such as a connection).
    public var requestGates: [String] {
        var seen: Set<String> = []
        return flows.flatMap({ $0.steps }).flatMap({ $0.gates }).compactMap { gate -> String? in
            guard case .request = gate.kind, seen.insert(gate.id).inserted else { return nil }
            return gate.id
        }
    }

    /// Names of every field declared secret in any flow: these parameters are redacted in journals.
    var secretFieldNames: Set<String> {
        Set((flows.flatMap({ $0.fields }) + freeFields).filter { $0.kind == .secret }.map({ $0.name }))
    }

    /// Whether a field of this name is secret in some flow or among the free fields (the question
    /// of ``secretFieldNames``, asked per event without building the set).
    func isSecretField(_ name: String) -> Bool {
        for index in flows.indices
        where flows[index].fields.contains(where: { $0.name == name && $0.kind == .secret }) {
            return true
        }
        return freeFields.contains { $0.name == name && $0.kind == .secret }
    }
}
