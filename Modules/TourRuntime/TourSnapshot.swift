import Foundation

/// What a UI binds to: every flow's summary, the card showing, and the product's domain state.
public struct TourSnapshot: Codable, Equatable, Sendable {
    public var app: String
    public var user: String
    public var flows: [FlowSummary]
    public var card: Card?
    public var state: [String: TourValue]
    public var appVersion: String?
    /// The time the snapshot was taken at (the virtual clock's when one is used).
    public var now: Double
}
