/// A named system permission: Screen Time (FamilyControls), Health (HealthKit), ...
public struct PermissionName: StringIdentifier {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let screenTime: PermissionName = "screenTime"
    public static let health: PermissionName = "health"
}

/// What a permission, or any request the engine asked the outside world to answer, came back with.
public enum GateStatus: String, Codable, Sendable, CaseIterable {
    /// Not asked yet (a permission's `.notDetermined`).
    case notDetermined
    /// Asked; the answer has not come back.
    case pending
    case granted
    case denied
    case restricted
    /// The thing could not be reached (no network); neither granted nor refused.
    case unavailable
}
