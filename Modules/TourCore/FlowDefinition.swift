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

    public init(
        _ id: FlowID, name: String, steps: [StepDefinition], fields: [FieldSpec] = [],
        triggers: [Trigger] = [],
        skip: SkipPolicy = .recordSkipped, interruption: InterruptionPolicy = .resume,
        replay: ReplayPolicy = .notReplayable, scope: FlowScope = .install, countsTerminalStep: Bool = true,
        haptics: HapticMap = .none, analytics: AnalyticsNames = .none, onComplete: [EffectTemplate] = [],
        onSkip: [EffectTemplate] = [], onReset: [EffectTemplate] = []
    ) {
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
    }

    func step(_ id: StepID) -> StepDefinition? { steps.first { $0.id == id } }
    func field(_ name: String) -> FieldSpec? { fields.first { $0.name == name } }
}

/// Everything one product declares: its flows, in priority order, and the actions its UI accepts
/// outside any flow (Mood Tracker's mood swipes).
public struct TourCatalog: Sendable, Equatable {
    public var app: String
    public var flows: [FlowDefinition]
    /// Actions usable when no flow shows, or while a step lists them in ``StepDefinition/passThrough``.
    public var freeActions: [StepAction]
    /// The fields free actions' parameters fill (they are parsed and checked like flow fields).
    public var freeFields: [FieldSpec]

    public init(
        app: String, flows: [FlowDefinition], freeActions: [StepAction] = [], freeFields: [FieldSpec] = []
    ) {
        self.app = app
        self.flows = flows
        self.freeActions = freeActions
        self.freeFields = freeFields
    }

    public func flow(_ id: FlowID) -> FlowDefinition? { flows.first { $0.id == id } }

    /// Names of every field declared secret in any flow: these parameters are redacted in journals.
    var secretFieldNames: Set<String> {
        Set((flows.flatMap(\.fields) + freeFields).filter { $0.kind == .secret }.map(\.name))
    }
}
