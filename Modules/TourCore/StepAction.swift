import TourCodec

/// Something the user can do on a step: tap Next, tap the current week, save a phase, grant access.
public struct StepAction: Sendable, Equatable {
    /// What the action does to the flow once it is accepted.
    public enum Outcome: Sendable, Equatable {
        /// The step is done; the flow moves to the next included step or finishes.
        case advance
        /// A part of the step is done (Finite: the long-press opened the week sheet); later actions
        /// can require it with ``Precondition/performed(_:)``.
        case stage
        /// Nothing moves (Mood Tracker's swipes while step 1 shows, LockedIn's app choice).
        case stay
        /// The flow ends early from the step's own control (Carrier Wave's "Dismiss", a mini-tour's
        /// close button), recorded as the flow's skip policy says; the journal's ending is
        /// `dismissed`.
        case dismissFlow
        /// The flow ends early by the generic Skip, recorded as the flow's skip policy says; the
        /// journal's ending is `skipped`.
        case skipFlow
        /// The engine asks the outside world to answer the step's gate with this id.
        case request(gate: String)
        /// Back to the previous step of the run (refused on the run's first step).
        case back

        /// Whether the action ends the flow early (Skip, Dismiss, close).
        public var endsFlow: Bool {
            switch self {
            case .dismissFlow, .skipFlow: true
            default: false
            }
        }
    }

    public var name: String
    public var label: String?
    /// Other names that perform this action: the button's wording where it differs from the name
    /// (Growth's "Previous" for `back`), or the generic `skip` on a step whose own way out is named
    /// differently (Carrier Wave's "Dismiss"). The journal records the action's own name.
    public var aliases: [String]
    /// The parameters it takes, each the name of a flow field it sets.
    public var fills: [String]
    public var requiredParameters: [String]
    public var outcome: Outcome
    public var preconditions: [Precondition]
    public var effects: [EffectTemplate]
    /// Plays the flow's "action completed" haptic and a celebration (Finite's burst).
    public var celebrates: Bool
    /// Played instead of the flow's default for this action (Finite: medium impact on phase save).
    public var haptic: HapticFeedback?

    public init(
        _ name: String, label: String? = nil, aliases: [String] = [], fills: [String] = [],
        requiredParameters: [String] = [], outcome: Outcome, preconditions: [Precondition] = [],
        effects: [EffectTemplate] = [], celebrates: Bool = false, haptic: HapticFeedback? = nil
    ) {
        self.name = name
        self.label = label
        self.aliases = aliases
        self.fills = fills
        self.requiredParameters = requiredParameters
        self.outcome = outcome
        self.preconditions = preconditions
        self.effects = effects
        self.celebrates = celebrates
        self.haptic = haptic
    }

    /// The plain "Next" / "tap anywhere" action.
    public static func next(label: String? = nil, preconditions: [Precondition] = []) -> StepAction {
        StepAction("next", label: label, outcome: .advance, preconditions: preconditions)
    }

    /// Back to the previous step.
    public static func back(label: String? = nil, aliases: [String] = []) -> StepAction {
        StepAction("back", label: label, aliases: aliases, outcome: .back)
    }

    /// Skip: the flow ends as its skip policy says.
    public static func skip(label: String? = nil) -> StepAction {
        StepAction("skip", label: label, outcome: .skipFlow)
    }

    /// Whether `name` is this action's name or one of its aliases (case-insensitive for aliases,
    /// which are words from the screen).
    public func answers(to name: String) -> Bool {
        self.name == name || aliases.contains { $0.lowercased() == name.lowercased() }
    }

    /// Ends the flow early (Skip, Dismiss) or steps back: the ways out a step offers, listed after
    /// the step's own actions.
    public var isWayOut: Bool {
        switch outcome {
        case .back, .dismissFlow, .skipFlow: true
        default: false
        }
    }
}

/// What must hold before an action is accepted; the message says what to do instead.
public enum Precondition: Sendable, Equatable {
    /// Every field the step validates passes its rule.
    case fieldsValid
    /// Every required gate of the step is granted.
    case requiredGatesGranted
    /// This earlier action of the same step has been done.
    case performed(String, message: String)
    /// The gate's status is one of these.
    case gate(String, in: Set<GateStatus>, message: String)
    case condition(Condition, message: String)
}

/// Where an effect's payload values come from when the engine fills it in.
public enum ValueSource: Sendable, Equatable {
    case literal(TourValue)
    case field(String)
    case parameter(String)
    case context(String)
    /// The time passed in with the event, as seconds since 1970.
    case now
}

/// An effect as a flow declares it, filled in by the engine when it fires.
public enum EffectTemplate: Sendable, Equatable {
    /// A product side effect (LockedIn's starting bank) handled by the product's handler.
    case product(String, payload: [String: ValueSource])
    case haptic(HapticFeedback)
    case analytics(String, properties: [String: ValueSource])
}

extension ValueSource: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .literal(.string(value)) }
    public init(integerLiteral value: Int) { self = .literal(.int(value)) }
    public init(booleanLiteral value: Bool) { self = .literal(.bool(value)) }
}
