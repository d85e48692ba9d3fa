import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What moves things on when nothing is showing, as the commands that do it: `launch` on a
/// database where the app never launched, the visit or signal whose trigger holds now, the wait
/// for a due start, a replay when every flow is finished. Read from the engine's own explanation
/// of each flow, so it is right for every product without naming any.
enum NextMoves {
    static func hint(
        explanations: [FlowExplanation], catalog: TourCatalog, launched: Bool, launchMatters: Bool,
        now: Double
    ) -> String {
        let noun = catalog.flowNoun
        func named(_ explanation: FlowExplanation) -> String {
            catalog.flows.count == 1 ? "the \(noun)" : explanation.name
        }
        var moves: [String] = []
        // Before the first launch of a product whose flows start at launch, nothing else happens.
        if !launched, launchMatters { return "Next: `launch` starts the app." }
        for explanation in explanations where explanation.verdict == "dueSoon" {
            if let startsAt = explanation.startsAt {
                let seconds = Render.format(max(0, startsAt - now))
                moves.append("`wait \(seconds)` shows \(named(explanation))")
            }
        }
        let eligible = explanations.filter { $0.verdict == "eligible" }
        for explanation in eligible.prefix(3) {
            guard let trigger = explanation.triggers.first(where: { $0.condition.holds }) else { continue }
            if trigger.moment == "launch", moves.contains(where: { $0.hasPrefix("`launch`") }) { continue }
            moves.append("`\(trigger.moment)` starts \(named(explanation))")
        }
        if eligible.count > 3 { moves.append("`explain` lists \(eligible.count - 3) more") }
        if !moves.isEmpty { return "Next: " + moves.joined(separator: "; ") + "." }
        let waiting = explanations.filter { $0.status == .notStarted && $0.verdict == "notShown" }
        if let first = waiting.first, let trigger = first.triggers.first {
            let condition = Explain.failing(trigger.condition)
            return
                """
                Next: `\(trigger.moment)` starts \(named(first)) when this holds: \(condition). \
                `explain` says more.
                """
        }
        if let replayable = explanations.first(where: { explanation in
            catalog.replayableFlows.contains(explanation.flow)
                && (explanation.status == .completed || explanation.status == .skipped)
        }) {
            return "Every \(noun) is finished; `replay` shows \(named(replayable)) again."
        }
        if explanations.allSatisfy({ $0.status == .completed || $0.status == .skipped }) {
            return "Every \(noun) is finished."
        }
        return "Nothing is due (`explain` says why)."
    }
}

extension Runner {
    /// The hint for this user now (see ``NextMoves``).
    func nextMoveHint() async throws -> String {
        let catalog = product.catalog
        let session = try store.stored(self.session.key, of: product)
        let snapshot = try await self.session.snapshot()
        let context = product.context(
            domain: session.domain, now: Date(timeIntervalSince1970: snapshot.now),
            device: TourSession.deviceFacts(remembered: session.device, reported: deviceFacts))
        return NextMoves.hint(
            explanations: product.engine.explain(session.tour, context: context), catalog: catalog,
            launched: session.tour.appVersion != nil,
            launchMatters: !product.launchSignals.isEmpty
                || catalog.flows.contains { $0.triggers.contains { $0.moment == .launch } },
            now: snapshot.now)
    }
}
