import Foundation
import Testing
import TourCore
import TourFixtures

/// An exhaustive driver of the engine, in the manner of TCA's `TestStore`: every event's change to
/// the state must be described by the test, and every effect listed, or the test fails and says
/// what was not asserted. Used where a policy's whole behaviour matters (the policy tests), so a
/// change that adds an effect or touches another flow's record cannot pass unnoticed.
///
///     var store = TourStore(Fixtures.engine(Fixtures.walk))
///     try store.send(.signal("revealed")) {
///         $0[flow: "walk"] = .notStarted(pendingStart: Fixtures.t0 + 1.5)
///     }
struct TourStore {
    let engine: TourEngine
    private(set) var state: TourState
    private(set) var now: Date
    var context: TourContext
    /// Where failures go: recorded as test issues, or (for the driver's own tests) collected.
    var fail: (String, SourceLocation) -> Void = { message, location in
        Issue.record(Comment(rawValue: message), sourceLocation: location)
    }

    init(
        _ engine: TourEngine, state: TourState = TourState(), now: Date = Fixtures.t0,
        context: TourContext = [:]
    ) {
        self.engine = engine
        self.state = state
        self.now = now
        self.context = context
    }

    /// Sends `event`; `update` turns the state before into the state expected after, `effects` are
    /// all the effects expected, in order, and `facts`, when given, all the journal's facts.
    mutating func send(
        _ event: TourEvent, effects: [TourEffect] = [], facts: [TourFact]? = nil,
        sourceLocation: SourceLocation = #_sourceLocation, _ update: (inout TourState) -> Void = { _ in }
    ) throws {
        let transition: Transition
        do {
            transition = try engine.reduce(state, event, at: now, context: context)
        } catch {
            fail("\(event) was refused: \(error)", sourceLocation)
            throw error
        }
        var expected = state
        update(&expected)
        for problem in Self.differences(expected: expected, actual: transition.state) {
            fail("\(event): \(problem)", sourceLocation)
        }
        if transition.effects != effects {
            let unasserted = transition.effects.filter { !effects.contains($0) }
            let missing = effects.filter { !transition.effects.contains($0) }
            fail(
                """
                \(event): effects \(transition.effects) where the test expects \(effects)\
                \(unasserted.isEmpty ? "" : "; not asserted: \(unasserted)")\
                \(missing.isEmpty ? "" : "; expected but not produced: \(missing)")
                """, sourceLocation)
        }
        if let facts, transition.record.facts != facts {
            fail("\(event): facts \(transition.record.facts) where the test expects \(facts)", sourceLocation)
        }
        state = transition.state
    }

    /// An action on the card showing.
    mutating func act(
        _ name: String, _ parameters: [String: String] = [:], effects: [TourEffect] = [],
        facts: [TourFact]? = nil,
        sourceLocation: SourceLocation = #_sourceLocation, _ update: (inout TourState) -> Void = { _ in }
    ) throws {
        try send(
            .actionPerformed(name, parameters: parameters), effects: effects, facts: facts,
            sourceLocation: sourceLocation, update)
    }

    /// Time passes by `seconds`; what falls due fires.
    mutating func advance(
        by seconds: TimeInterval, effects: [TourEffect] = [], facts: [TourFact]? = nil,
        sourceLocation: SourceLocation = #_sourceLocation, _ update: (inout TourState) -> Void = { _ in }
    ) throws {
        now = now.addingTimeInterval(seconds)
        try send(.clockAdvanced, effects: effects, facts: facts, sourceLocation: sourceLocation, update)
    }

    /// The event must be refused with this reason. (The store's state is a value the refusal never
    /// reaches, so there is nothing else to check.)
    func refuses(_ event: TourEvent, reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try engine.reduce(state, event, at: now, context: context)
            fail("\(event) was accepted; expected the refusal '\(reason)'", sourceLocation)
        } catch {
            #expect(error.reason == reason, sourceLocation: sourceLocation)
        }
    }

    var card: Card? { engine.card(in: state, context: context) }

    /// What differs between two states, flow by flow, in words.
    static func differences(expected: TourState, actual: TourState) -> [String] {
        var problems: [String] = []
        if expected.appVersion != actual.appVersion {
            problems.append(
                "appVersion is \(actual.appVersion ?? "nil"), expected \(expected.appVersion ?? "nil")")
        }
        for flow in Set(expected.flows.keys).union(actual.flows.keys).sorted(by: { $0.rawValue < $1.rawValue }
        ) {
            let want = expected[flow: flow]
            let got = actual[flow: flow]
            if want != got { problems.append("\(flow) is \(got), expected \(want)") }
        }
        return problems
    }
}
