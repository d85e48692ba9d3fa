import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a UI binds to: every flow's summary, the card showing, and the product's domain state.
public struct TourSnapshot: Equatable, Sendable {
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

extension TourSnapshot: TourValueEncodable {
    /// Every key present (absent values as `null`), as every `--json` document shows a snapshot.
    public var tourValue: TourValue {
        [
            "app": .string(app), "user": .string(user), "flows": .list(flows.map({ $0.tourValue })),
            "card": card?.tourValue ?? .null, "state": .object(state), "appVersion": .optional(appVersion),
            "now": .double(now), "nextTimerAt": nextTimerAt.map(TourValue.double) ?? .null,
        ]
    }
}
