import TourCodec

/// What happened, as the app (or the runtime answering an effect) reports it.
public enum TourEvent: Equatable, Sendable {
    /// The app started (again). Interrupted flows resume, restart or drop by their policy; launch
    /// triggers are evaluated.
    case appLaunched(version: String?)
    /// A moment the app reports, such as Finite's `revealCompleted`.
    case signal(String)
    /// The user navigated to a feature or screen.
    case featureVisited(String)
    /// The user did something on the card showing, or one of the product's free actions.
    case actionPerformed(String, parameters: [String: String])
    /// The runtime's answer to a permission or request effect.
    case gateAnswered(String, GateStatus)
    /// Time passed; whatever is due fires.
    case clockAdvanced
    /// Something the product reports about its own domain (a profile synced); it becomes a
    /// ``TourEffect/product(_:)`` effect so the product's handler records it in the same transaction.
    case domainEvent(String, payload: [String: TourValue])
    case replayRequested(FlowID?)
    case resetRequested(FlowID?)
    /// The account's record of a user-scoped flow, as the account server merged it from all the
    /// account's devices. A finished record ends the flow here too (a tour showing ends); a newer
    /// reset clears a finished record; anything else changes nothing.
    case accountRecordLearned(FlowID, AccountFlowRecord)

    /// A short name for journals and logs.
    public var name: String {
        switch self {
        case .appLaunched: "appLaunched"
        case .signal(let name): "signal:\(name)"
        case .featureVisited(let place): "featureVisited:\(place)"
        case .actionPerformed(let action, _): action
        case .gateAnswered(let gate, let status): "gateAnswered:\(gate)=\(status.rawValue)"
        case .clockAdvanced: "clockAdvanced"
        case .domainEvent(let name, _): "domain:\(name)"
        case .replayRequested: "replayRequested"
        case .resetRequested: "resetRequested"
        case .accountRecordLearned(let flow, _): "accountRecordLearned:\(flow)"
        }
    }
}
