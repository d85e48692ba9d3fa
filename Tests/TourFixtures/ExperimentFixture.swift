import Foundation
import TourCodec
@_exported import TourCore

/// A product whose tour runs an experiment with a holdout: the full tour (control), a two-step
/// tour, and a holdout that shows nothing; the goal is the product effect `activated`, which a free
/// action sends (so every variant, the holdout included, can reach it).
public enum ExperimentFixture {
    public static let app = "trial"
    public static let flow: FlowID = "tour"

    public static let experiment = Experiment(
        "tourLength",
        variants: [
            .init("full", weight: 45), .init("short", weight: 45, shows: .steps(["welcome", "done"])),
            .init("holdout", weight: 10, shows: .nothing),
        ],
        control: "full", goal: .effect("activated"))

    public static func catalog(version: Int = 1, experiment: Experiment? = ExperimentFixture.experiment)
        -> TourCatalog
    {
        TourCatalog(
            app: app, name: "Trial", version: version,
            flows: [
                FlowDefinition(
                    flow, name: "Tour",
                    steps: ["welcome", "features", "tips", "done"].map { id in
                        StepDefinition(
                            StepID(rawValue: id), StepContent(title: id.capitalized, body: "The \(id) card"),
                            actions: [.next()], canSkip: true)
                    },
                    triggers: [Trigger(.launch)], skip: .recordSkipped, replay: .presentWithoutRecording,
                    scope: .user,
                    onComplete: [.product("tourEnded", payload: [:])],
                    onSkip: [.product("tourEnded", payload: [:])],
                    experiment: experiment)
            ],
            freeActions: [
                StepAction("activate", outcome: .stay, effects: [.product("activated", payload: [:])])
            ])
    }

    public static let declarations = CatalogDeclarations(
        effects: [
            EffectKind("activated", "the user did the thing the tour teaches"),
            EffectKind("tourEnded", "the tour ended"),
        ])

    /// What one simulated subject did: the variant it was assigned and the facts of each event.
    public struct Subject: Sendable {
        public var account: String
        public var variant: String
        public var rows: [[TourFact]]
        public var times: [Date]
        /// Whether it activated (the goal's effect, performed twice).
        public var activated: Bool
    }

    /// The chance a subject of each variant goes on to activate.
    public static let activation: [String: Double] = ["full": 0.40, "short": 0.50, "holdout": 0.30]

    /// `count` accounts through the pure engine: launch; a shown tour is finished (or, for one in
    /// five, skipped at its first card); then activation by the variant's chance (and a second
    /// activation, which must not count twice). Deterministic from `seed`.
    public static func simulate(_ count: Int, seed: UInt64 = 2026) throws -> [Subject] {
        let engine = TourEngine(catalog: catalog())
        var random = SplitMix64(seed: seed)
        return try (0..<count).map { index in
            let account = "user\(index)"
            let subjects = ExperimentSubjects(
                install: "install:device\(index)", account: "account:\(account)")
            var state = TourState()
            var rows: [[TourFact]] = []
            var times: [Date] = []
            var now = Fixtures.t0.addingTimeInterval(Double(index))
            func send(_ event: TourEvent) throws {
                now = now.addingTimeInterval(1)
                let transition = try engine.reduce(state, event, at: now, subjects: subjects)
                state = transition.state
                rows.append(transition.record.facts)
                times.append(now)
            }
            try send(.appLaunched(version: "1.0"))
            let skips = Double.random(in: 0..<1, using: &random) < 0.2
            while state.presentingFlow != nil {
                try send(.actionPerformed(skips ? "skip" : "next", parameters: [:]))
            }
            let variant = try require(state.experiments[experiment.id], "the assignment of \(account)")
                .variant
            let activated = Double.random(in: 0..<1, using: &random) < (activation[variant] ?? 0)
            if activated {
                try send(.actionPerformed("activate", parameters: [:]))
                try send(.actionPerformed("activate", parameters: [:]))
            }
            return Subject(account: account, variant: variant, rows: rows, times: times, activated: activated)
        }
    }
}

/// `#require` without Testing (TourFixtures is not a test target).
func require<T>(_ value: T?, _ what: String = "value") throws -> T {
    guard let value else { throw FixtureFailure("\(what) is missing") }
    return value
}

struct FixtureFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The report's statistics computed another way, for tests to compare with.
public enum IndependentStatistics {
    /// Wilson's interval as the roots of (p̂ − p)² = z² p (1 − p) / n (the quadratic form, not the
    /// centre-and-margin form the engine uses).
    public static func wilson(_ x: Int, _ n: Int) -> (lower: Double, upper: Double) {
        let z = 1.959963984540054
        let p = Double(x) / Double(n)
        let a = 1 + z * z / Double(n)
        let b = -(2 * p + z * z / Double(n))
        let c = p * p
        let root = (b * b - 4 * a * c).squareRoot()
        return ((-b - root) / (2 * a), (-b + root) / (2 * a))
    }

    /// Newcombe's method 10 for x1/n1 − x2/n2.
    public static func newcombe(_ x1: Int, _ n1: Int, _ x2: Int, _ n2: Int) -> (
        estimate: Double, lower: Double, upper: Double
    ) {
        let p1 = Double(x1) / Double(n1)
        let p2 = Double(x2) / Double(n2)
        let (l1, u1) = wilson(x1, n1)
        let (l2, u2) = wilson(x2, n2)
        let d = p1 - p2
        return (
            d, d - ((p1 - l1) * (p1 - l1) + (u2 - p2) * (u2 - p2)).squareRoot(),
            d + ((u1 - p1) * (u1 - p1) + (p2 - l2) * (p2 - l2)).squareRoot()
        )
    }
}
