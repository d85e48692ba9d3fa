import CarrierWaveOnboarding
import FiniteOnboarding
import Foundation
import GrowthOnboarding
import LockedInOnboarding
import MoodTrackerOnboarding
import TourCodec
import TourCore
import TourRuntime

/// One product's whole flow as the events the app sends, each with the seconds that pass before it.
struct Journey {
    var name: String
    var product: Product
    var events: [(after: Double, event: TourEvent)]

    static func act(_ name: String, _ parameters: [String: String] = [:]) -> (Double, TourEvent) {
        (0, .actionPerformed(name, parameters: parameters))
    }

    static let all: [Journey] = [
        Journey(
            name: "Finite", product: FiniteCatalog.product,
            events: [
                act("setBirthDate", ["date": "1990-05-01"]), (0, .appLaunched(version: "1.0")),
                (0, .signal("revealCompleted")), (1.5, .clockAdvanced), act("next"), act("tapCurrentWeek"),
                act("swipeToChapters"), act("next"),
                act("savePhase", ["name": "School", "startYear": "2004"]),
                act("longPressWeek", ["week": "1200"]), act("saveMark", ["note": "first job"]),
                (2.5, .clockAdvanced),
            ]),
        Journey(
            name: "LockedIn", product: LockedInCatalog.product,
            events: [
                (0, .appLaunched(version: "1.0")), act("next"),
                act("chooseApps", ["apps": "Instagram,TikTok"]),
                act("next"), act("selectDifficulty", ["difficulty": "hard"]), act("next"),
                act("grantScreenTime"),
                (0, .gateAnswered("screenTime", .granted)), act("grantHealth"),
                (0, .gateAnswered("health", .granted)), act("next"), act("letsGo"),
            ]),
        Journey(
            name: "Carrier Wave",
            product: CarrierWaveCatalog.product(connector: StubServiceConnector(online: true)),
            events: [
                (0, .appLaunched(version: "2.5")), act("next"), act("next"),
                act("connect", ["username": "W1AW", "password": "bench-password"]),
                (0, .gateAnswered("connection", .granted)), act("next"), act("next"),
            ]),
        Journey(
            name: "Growth",
            product: GrowthCatalog.product,
            events: [
                (0, .featureVisited("dashboard")), act("completeOnboarding"),
                (0, .featureVisited("dashboard")),
                act("next"), act("next"), act("next"), act("next"), act("next"),
            ]),
        Journey(
            name: "Mood Tracker", product: MoodTrackerCatalog.product,
            events: [
                (0, .appLaunched(version: "1.0")), (0.5, .clockAdvanced), act("next"), act("next"),
                act("next"),
            ]),
    ]

    /// The same product with every flow kept per user: the scale benchmarks put a million users'
    /// flows in one file, where install-scoped flows and state would all share one row.
    var perUser: Product {
        var product = product
        product.catalog.flows = product.catalog.flows.map { flow in
            var flow = flow
            flow.scope = .user
            return flow
        }
        product.catalog.stateScopes = StateScopes(.user)
        return product
    }

    /// Folds the events through the pure engine (and the product's side effects into its domain),
    /// checking each is accepted; returns each step's transition and domain.
    func steps(engine: TourEngine, from start: Date) throws -> [(
        transition: Transition, domain: [String: TourValue], now: Date, context: TourContext
    )] {
        var state = TourState()
        var domain: [String: TourValue] = [:]
        var now = start
        var steps: [(Transition, [String: TourValue], Date, TourContext)] = []
        for (after, event) in events {
            now = now.addingTimeInterval(after)
            let context = product.context(domain: domain, now: now, device: [:])
            let transition = try engine.reduce(state, event, at: now, context: context)
            state = transition.state
            for case .product(let effect) in transition.effects {
                try product.handler.apply(checking: effect, to: &domain, now: now)
            }
            steps.append((transition, domain, now, context))
        }
        return steps
    }

    /// The events a runtime sends (it answers permission and connection requests by itself).
    var appEvents: [(after: Double, event: TourEvent)] {
        events.filter { if case .gateAnswered = $0.event { false } else { true } }
    }
}
