/// One step of a flow, as data: what it shows, how it completes, and what the user may do on it.
public struct StepDefinition: Sendable, Equatable {
    public var id: StepID
    public var content: StepContent
    /// Every action this step accepts, Back and Skip included (``canGoBack`` and ``canSkip`` in the
    /// initializer add them). This is the one list: the engine, the card, help and diagrams read it.
    public var actions: [StepAction]
    /// Permissions and requests this step waits on.
    public var gates: [Gate]
    /// The flow fields ``Precondition/fieldsValid`` checks on this step.
    public var validates: [String]
    /// The step is left out of a run when this does not hold as the run starts (Finite: no
    /// "add your first chapter" for a user who already has phases).
    public var includedWhen: Condition
    /// The step completes by itself this many seconds after it is entered (Finite's 2.5 s finale).
    public var autoAdvanceAfter: Double?
    /// Names of the product's free actions that stay usable while this step shows (Mood Tracker's
    /// swipes on step 1).
    public var passThrough: [String]
    /// Other flows whose content this step shows (a What's New screen that is a mini-tour's screen):
    /// entering the step records them as seen, so their own trigger does not show it again.
    public var covers: [FlowID]

    public init(
        _ id: StepID, _ content: StepContent, actions: [StepAction] = [], gates: [Gate] = [],
        validates: [String] = [], canSkip: Bool = false, canGoBack: Bool = false,
        includedWhen: Condition = .always, autoAdvanceAfter: Double? = nil, passThrough: [String] = [],
        backLabel: String? = nil, backAliases: [String] = [], skipLabel: String? = nil, covers: [FlowID] = []
    ) {
        self.id = id
        self.content = content
        self.actions =
            actions + (canGoBack ? [.back(label: backLabel, aliases: backAliases)] : [])
            + (canSkip ? [.skip(label: skipLabel)] : [])
        self.gates = gates
        self.validates = validates
        self.includedWhen = includedWhen
        self.autoAdvanceAfter = autoAdvanceAfter
        self.passThrough = passThrough
        self.covers = covers
    }

    /// Whether the user can end the flow from this step (Skip, or the step's own Dismiss).
    public var canSkip: Bool { actions.contains { $0.outcome.endsFlow } }
    /// Whether the step offers Back (which the run's first step still refuses).
    public var canGoBack: Bool { actions.contains { $0.outcome == .back } }

    /// The action `name` names, by its name or an alias.
    public func action(named name: String) -> StepAction? {
        actions.first { $0.name == name } ?? actions.first { $0.answers(to: name) }
    }
    public func gate(_ id: String) -> Gate? { gates.first { $0.id == id } }
}
