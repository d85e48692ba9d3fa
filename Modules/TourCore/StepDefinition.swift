/// One step of a flow, as data: what it shows, how it completes, and what the user may do on it.
public struct StepDefinition: Sendable, Equatable {
    public var id: StepID
    public var content: StepContent
    /// The actions this step accepts besides Back and Skip (which its policies govern).
    public var actions: [StepAction]
    /// Permissions and requests this step waits on.
    public var gates: [Gate]
    /// The flow fields ``Precondition/fieldsValid`` checks on this step.
    public var validates: [String]
    public var canSkip: Bool
    public var canGoBack: Bool
    /// The step is left out of a run when this does not hold as the run starts (Finite: no
    /// "add your first chapter" for a user who already has phases).
    public var includedWhen: Condition
    /// The step completes by itself this many seconds after it is entered (Finite's 2.5 s finale).
    public var autoAdvanceAfter: Double?
    /// Names of the product's free actions that stay usable while this step shows (Mood Tracker's
    /// swipes on step 1).
    public var passThrough: [String]
    public var backLabel: String?
    public var skipLabel: String?

    public init(
        _ id: StepID, _ content: StepContent, actions: [StepAction] = [], gates: [Gate] = [],
        validates: [String] = [], canSkip: Bool = false, canGoBack: Bool = false,
        includedWhen: Condition = .always, autoAdvanceAfter: Double? = nil, passThrough: [String] = [],
        backLabel: String? = nil, skipLabel: String? = nil
    ) {
        self.id = id
        self.content = content
        self.actions = actions
        self.gates = gates
        self.validates = validates
        self.canSkip = canSkip
        self.canGoBack = canGoBack
        self.includedWhen = includedWhen
        self.autoAdvanceAfter = autoAdvanceAfter
        self.passThrough = passThrough
        self.backLabel = backLabel
        self.skipLabel = skipLabel
    }

    func action(named name: String) -> StepAction? { actions.first { $0.name == name } }
    func gate(_ id: String) -> Gate? { gates.first { $0.id == id } }
}
