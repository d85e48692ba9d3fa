import TourCodec

/// What the engine asks the edge to do. Values only: the runtime performs them.
public enum TourEffect: Equatable, Sendable {
    case haptic(HapticFeedback)
    /// Finite's celebration burst after an action step. With `reducedMotion` the app shows it
    /// without animation (the user's Reduce Motion setting, ``AccessibilitySettings``).
    case celebration(flow: FlowID, step: StepID, reducedMotion: Bool = false)
    case analytics(AnalyticsEvent)
    /// Read a permission's status without asking the user; answer with ``TourEvent/gateAnswered(_:_:)``.
    case checkPermission(gate: String, PermissionName)
    /// Ask the user for a permission; answer with ``TourEvent/gateAnswered(_:_:)``.
    case requestPermission(gate: String, PermissionName)
    /// Ask the product's handler to perform a request (Carrier Wave's connection attempt).
    case request(gate: String, name: String, payload: [String: TourValue], secrets: [String: Secret])
    /// A product side effect: the product's handler writes its domain state in the same transaction.
    case product(ProductEffect)
    /// A flow's card appeared or went away: a UI presents or dismisses its overlay.
    case presented(FlowID)
    case dismissed(FlowID)
}

public struct AnalyticsEvent: Equatable, Sendable {
    public var name: String
    public var properties: [String: TourValue]

    public init(name: String, properties: [String: TourValue]) {
        self.name = name
        self.properties = properties
    }
}

public struct ProductEffect: Equatable, Sendable {
    public var name: String
    public var payload: [String: TourValue]

    public init(name: String, payload: [String: TourValue]) {
        self.name = name
        self.payload = payload
    }
}

extension TourEffect {
    /// One line for people and `--json` output; secrets stay redacted.
    public var summary: String {
        switch self {
        case .haptic(let feedback): "haptic \(feedback)"
        case .celebration(let flow, let step, let reducedMotion):
            "celebration \(flow)/\(step)\(reducedMotion ? " (reduced motion)" : "")"
        case .analytics(let event):
            "analytics \(event.name)"
                + (event.properties.isEmpty ? "" : " " + TourValue.object(event.properties).displayText)
        case .checkPermission(_, let permission): "check permission \(permission)"
        case .requestPermission(_, let permission): "request permission \(permission)"
        case .request(_, let name, _, _): "request \(name)"
        case .product(let effect):
            "effect \(effect.name)"
                + (effect.payload.isEmpty ? "" : " " + TourValue.object(effect.payload).displayText)
        case .presented(let flow): "present \(flow)"
        case .dismissed(let flow): "dismiss \(flow)"
        }
    }
}
