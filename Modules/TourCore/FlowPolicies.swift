/// What Skip records.
public enum SkipPolicy: String, Sendable, Equatable, CaseIterable {
    /// Finite: a skipped flag is kept and the flow never shows again.
    case recordSkipped
    /// Carrier Wave: skipping counts as completing.
    case countsAsCompleted
    /// Mood Tracker: nothing is recorded, so the flow shows again on the next launch.
    case recordsNothing
}

/// What a launch does to a flow that was showing when the app was killed.
public enum InterruptionPolicy: String, Sendable, Equatable, CaseIterable {
    /// Finite: resume at the same step.
    case resume
    /// LockedIn: start again from the first step with nothing partial kept.
    case restart
    /// Drop the run and record nothing; the flow's trigger decides whether it shows again.
    case discard
}

/// What replay ("Show App Tour", "Replay Tutorial") does.
public enum ReplayPolicy: String, Sendable, Equatable, CaseIterable {
    /// Carrier Wave: reset the flow's record and present it from the start.
    case resetAndPresent
    /// Mood Tracker: present it; when it ends, its record is as it was before.
    case presentWithoutRecording
    case notReplayable
}

/// Whose the flow's record is.
public enum FlowScope: String, Codable, Sendable, Equatable, CaseIterable {
    /// One record per installation, whoever signs in (Mood Tracker: "only shows once per installation").
    case install
    /// One record per user account (Growth: "once per user account").
    case user
}

/// Whose each key of a product's domain state is. The rule: state that mirrors or feeds a flow lives
/// in that flow's scope, so every user of an install reads the same for an install-scoped flow
/// (LockedIn's bank and `hasCompletedOnboarding`, Mood Tracker's `hasSeenTutorial`, Finite's phases).
public struct StateScopes: Sendable, Equatable {
    public var defaultScope: FlowScope
    public var exceptions: [String: FlowScope]

    public init(_ defaultScope: FlowScope, except exceptions: [String: FlowScope] = [:]) {
        self.defaultScope = defaultScope
        self.exceptions = exceptions
    }

    public func scope(of key: String) -> FlowScope { exceptions[key] ?? defaultScope }
}

/// Whose each stored thing is: a flow's record by its flow's scope, a domain-state key by the
/// catalog's ``StateScopes``.
public struct Scopes: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public var flows: [FlowID: FlowScope]
    public var state: StateScopes

    public init(flows: [FlowID: FlowScope], state: StateScopes) {
        self.flows = flows
        self.state = state
    }

    /// Flow scopes only; domain state per user.
    public init(dictionaryLiteral elements: (FlowID, FlowScope)...) {
        self.init(flows: Dictionary(elements) { _, last in last }, state: StateScopes(.user))
    }

    public subscript(flow: FlowID) -> FlowScope? { flows[flow] }
}

/// When a flow starts by itself. A trigger only ever starts a flow that has not started (or whose
/// skip recorded nothing); replay is the way to show a finished flow again.
public struct Trigger: Sendable, Equatable {
    public enum Moment: Sendable, Equatable {
        case launch
        /// A moment the app reports (Finite: the Reveal animation completed).
        case signal(String)
        /// The user navigated to a place (Growth's Dashboard, a Carrier Wave feature).
        case visit(String)
    }

    /// What the moment does while another flow is showing.
    public enum WhileAnotherFlowShows: String, Sendable, Equatable, CaseIterable {
        /// The flow starts when the showing one ends (a launch, a signal).
        case queue
        /// Nothing: the moment is gone, and the next one triggers the flow. A visit belongs to the
        /// place visited; a mini-tour must not appear later somewhere else.
        case ignore
    }

    public var moment: Moment
    public var when: Condition
    /// Seconds between the moment and the flow appearing (Mood Tracker 0.5, Finite 1.5).
    public var delay: Double
    public var whileAnotherFlowShows: WhileAnotherFlowShows

    /// - Parameter whileAnotherFlowShows: default: visits are ignored, launches and signals queue.
    public init(
        _ moment: Moment, when: Condition = .always, delay: Double = 0,
        whileAnotherFlowShows: WhileAnotherFlowShows? = nil
    ) {
        self.moment = moment
        self.when = when
        self.delay = delay
        if let whileAnotherFlowShows {
            self.whileAnotherFlowShows = whileAnotherFlowShows
        } else if case .visit = moment {
            self.whileAnotherFlowShows = .ignore
        } else {
            self.whileAnotherFlowShows = .queue
        }
    }
}

/// Analytics event names a flow emits at its moments (Mood Tracker's `tutorial_started`, ...).
public struct AnalyticsNames: Sendable, Equatable {
    public var started: String?
    public var stepCompleted: String?
    public var skipped: String?
    public var completed: String?
    public var replayed: String?

    public init(
        started: String? = nil, stepCompleted: String? = nil, skipped: String? = nil,
        completed: String? = nil,
        replayed: String? = nil
    ) {
        self.started = started
        self.stepCompleted = stepCompleted
        self.skipped = skipped
        self.completed = completed
        self.replayed = replayed
    }

    public static let none = AnalyticsNames()
}
