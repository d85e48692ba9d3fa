import ArgumentParser
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `explain`: why each flow will or will not show for this user now.
struct Explain: ScriptableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract:
            """
            Why each flow (or FLOW) will or will not show for this user now: each trigger and condition with \
            its value.
            """
    )
    @OptionGroup var options: CommonOptions
    @Argument(
        help: "One flow\(ProductHelp.suffix(ProductHelp.flowNames(replayable: false))).",
        completion: .list(ProductHelp.flowNames(replayable: false)))
    var flow: String?

    func execute(_ runner: Runner) async throws {
        let key = runner.session.key
        let product = runner.product
        let session = try runner.store.stored(key, of: product)
        let now = try await runner.session.snapshot().now
        let context = product.context(
            domain: session.domain, now: Date(timeIntervalSince1970: now),
            device: TourSession.deviceFacts(remembered: session.device, reported: runner.deviceFacts))
        var explanations = product.engine.explain(
            session.tour, context: context, budget: try await runner.session.budgetInput(),
            at: Date(timeIntervalSince1970: now))
        if let flow {
            explanations = explanations.filter { $0.flow.rawValue == flow }
            guard !explanations.isEmpty else { throw unknownFlow(flow, in: product.catalog) }
        }
        // When a finished flow finished: its last ending in the journal of this user (or the install).
        let rows = try runner.journalWithFacts()
        func finishedAt(_ explanation: FlowExplanation) -> Double? {
            guard explanation.status == .completed || explanation.status == .skipped else { return nil }
            let scope = product.catalog.flow(explanation.flow)?.scope ?? .install
            return rows.last { row in
                guard scope == .install || row.user == key.user else { return false }
                return row.facts?.contains { fact in
                    if case .flowEnded(explanation.flow, _, let recorded, _) = fact {
                        return recorded == explanation.status
                    }
                    return false
                } ?? false
            }?.time.timeIntervalSince1970
        }
        if runner.json {
            struct Body: Encodable {
                var app: String
                var user: String
                var now: Double
                var nowISO: String
                var flows: [Entry]
            }
            struct Entry: Encodable {
                var explanation: FlowExplanation
                var finishedAt: Double?
                func encode(to encoder: any Encoder) throws {
                    try explanation.encode(to: encoder)
                    var container = encoder.container(keyedBy: Key.self)
                    try container.encode(finishedAt, forKey: .finishedAt)
                    try container.encode(finishedAt.map(Render.iso), forKey: .finishedAtISO)
                }
                enum Key: String, CodingKey { case finishedAt, finishedAtISO }
            }
            let body = Body(
                app: product.catalog.app, user: key.user, now: now, nowISO: Render.iso(now),
                flows: explanations.map { Entry(explanation: $0, finishedAt: finishedAt($0)) })
            Output.document(try Render.json(body))
            return
        }
        for explanation in explanations {
            let when = finishedAt(explanation).map { " at \(Render.iso($0))" } ?? ""
            let due = explanation.startsAt.map { " (at \(Render.iso($0)))" } ?? ""
            Output.line("\(explanation.flow) (\(explanation.name)): \(explanation.reason)\(due)\(when)")
            for trigger in explanation.triggers {
                let delay = trigger.delay > 0 ? " after \(Render.format(trigger.delay)) s" : ""
                Output.line("  trigger \(trigger.moment)\(delay): \(Self.render(trigger.condition))")
            }
        }
    }

    /// The parts of a condition that do not hold, as a sentence reads them ("onboardingComplete").
    static func failing(_ condition: ConditionExplanation) -> String {
        let parts = condition.parts.isEmpty ? [condition] : condition.parts.filter { !$0.holds }
        return parts.map(\.text).joined(separator: " and ")
    }

    static func render(_ condition: ConditionExplanation) -> String {
        condition.parts.isEmpty
            ? condition.line
            : "\(condition.line) [\(condition.parts.map(render).joined(separator: "; "))]"
    }
}
