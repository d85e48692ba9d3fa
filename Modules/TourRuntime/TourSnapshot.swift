#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a UI binds to: every flow's summary, the card showing, and the product's domain state.
public struct TourSnapshot: Encodable, Equatable, Sendable {
    public var app: String
    public var user: String
    public var flows: [FlowSummary]
    public var card: Card?
    public var state: [String: TourValue]
    public var appVersion: String?
    /// The time the snapshot was taken at (the virtual clock's when one is used).
    public var now: Double
    /// When the next timer fires (a delayed start, a step that closes by itself), if any.
    public var nextTimerAt: Double?
}

extension TourSnapshot {
    private enum CodingKeys: String, CodingKey {
        case app, user, flows, card, state, appVersion, now, nextTimerAt
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(app, forKey: .app)
        try container.encode(user, forKey: .user)
        try container.encode(flows, forKey: .flows)
        try container.encode(card, forKey: .card)
        try container.encode(state, forKey: .state)
        try container.encode(appVersion, forKey: .appVersion)
        try container.encode(now, forKey: .now)
        try container.encode(nextTimerAt, forKey: .nextTimerAt)
    }
}
