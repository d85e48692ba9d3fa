/// What the engine asks the edge to do. Values only: the runtime performs them.
public enum TourEffect: Codable, Equatable, Sendable {
    case haptic(HapticFeedback)
    /// Finite's celebration burst after an action step.
    case celebration(flow: FlowID, step: StepID)
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

public struct AnalyticsEvent: Codable, Equatable, Sendable {
    public var name: String
    public var properties: [String: TourValue]

    public init(name: String, properties: [String: TourValue]) {
        self.name = name
        self.properties = properties
    }
}

public struct ProductEffect: Codable, Equatable, Sendable {
    public var name: String
    public var payload: [String: TourValue]

    public init(name: String, payload: [String: TourValue]) {
        self.name = name
        self.payload = payload
    }
}
