import Foundation
@_exported import TourCore

/// The code half of a product: the context its flows read, how its side effects change its domain
/// state, and the requests it performs. Everything else about a product is data in its catalog.
public protocol ProductHandler: Sendable {
    /// The facts flows read (`hasPhases`, `weeksLived`), computed from domain state and the time.
    func context(domain: [String: TourValue], now: Date) -> TourContext
    /// Writes a side effect's data into the domain state. Runs inside the event's transaction.
    func apply(_ effect: ProductEffect, to domain: inout [String: TourValue], now: Date)
    /// Performs a request gate (a connection attempt) and answers it. Runs after the commit.
    func perform(request name: String, payload: [String: TourValue], secrets: [String: Secret]) async
        -> GateStatus
    /// Events the product sends by itself after a committed transition, such as Growth reporting
    /// that a pending profile write reached the profile store. Runs after the commit.
    func followUps(after transition: Transition, domain: [String: TourValue], user: String) async
        -> [TourEvent]
}

extension ProductHandler {
    public func context(domain: [String: TourValue], now: Date) -> TourContext { domain }
    public func apply(_ effect: ProductEffect, to domain: inout [String: TourValue], now: Date) {}
    public func perform(request name: String, payload: [String: TourValue], secrets: [String: Secret]) async
        -> GateStatus
    {
        .unavailable
    }
    public func followUps(after transition: Transition, domain: [String: TourValue], user: String) async
        -> [TourEvent]
    {
        []
    }
}

/// A product as the runtime and CLI see it.
public struct Product: Sendable {
    public var catalog: TourCatalog
    public var handler: any ProductHandler
    /// The app version a launch reports when none is given.
    public var currentVersion: String
    /// Signals the app raises by itself right after launch (Finite: the Reveal completes).
    public var launchSignals: [String]

    public init(
        catalog: TourCatalog, handler: any ProductHandler, currentVersion: String = "1.0",
        launchSignals: [String] = []
    ) {
        self.catalog = catalog
        self.handler = handler
        self.currentVersion = currentVersion
        self.launchSignals = launchSignals
    }

    public var engine: TourEngine { TourEngine(catalog: catalog) }
    public var scopes: Scopes { catalog.scopes }
}
