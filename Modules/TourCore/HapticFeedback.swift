/// UIKit's feedback vocabulary, as values: the engine says which, a `HapticPlayer` plays it.
public enum HapticFeedback: String, Codable, Sendable, CaseIterable, CustomStringConvertible {
    case impactLight, impactMedium, impactHeavy, impactSoft, impactRigid
    case notificationSuccess, notificationWarning, notificationError
    case selection

    public var description: String {
        switch self {
        case .impactLight: "impact(.light)"
        case .impactMedium: "impact(.medium)"
        case .impactHeavy: "impact(.heavy)"
        case .impactSoft: "impact(.soft)"
        case .impactRigid: "impact(.rigid)"
        case .notificationSuccess: "notification(.success)"
        case .notificationWarning: "notification(.warning)"
        case .notificationError: "notification(.error)"
        case .selection: "selection"
        }
    }
}

/// The moments of a flow a product can attach a haptic to. Finite: step entry light, action completed
/// success, skip medium, walkthrough complete success.
public struct HapticMap: Sendable, Equatable {
    public var stepEntered: HapticFeedback?
    public var actionCompleted: HapticFeedback?
    public var skipped: HapticFeedback?
    public var completed: HapticFeedback?
    /// Played for a refused action, as a UI would buzz on a disabled button.
    public var refused: HapticFeedback?

    public init(
        stepEntered: HapticFeedback? = nil, actionCompleted: HapticFeedback? = nil,
        skipped: HapticFeedback? = nil, completed: HapticFeedback? = nil, refused: HapticFeedback? = nil
    ) {
        self.stepEntered = stepEntered
        self.actionCompleted = actionCompleted
        self.skipped = skipped
        self.completed = completed
        self.refused = refused
    }

    public static let none = HapticMap()
}
