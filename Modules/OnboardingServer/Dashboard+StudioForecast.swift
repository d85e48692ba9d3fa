import CatalogDocuments
import Foundation
import InsightsPages
import TourCodec
import TourCore

/// What a draft does to the users of every version devices run now: during a partial rollout
/// that is the new version's users and the rest, still on the one before.
extension Dashboard {
    /// Every version devices run now, newest first: the live publications from the newest down to
    /// the first at 100%, and, when none is at 100%, the newest compiled version (a device outside
    /// every rollout runs its binary's). During a partial rollout that is two versions or more.
    static func liveVersions(_ entries: [CatalogStore.Entry]) -> [CatalogStore.Entry] {
        var versions: [CatalogStore.Entry] = []
        let published = entries.filter { $0.source == .published && $0.withdrawnAt == nil && $0.rollout > 0 }
        for entry in published.sorted(by: { $0.version > $1.version }) {
            versions.append(entry)
            if entry.rollout >= 100 { return versions }
        }
        if let compiled = entries.filter({ $0.source == .compiled }).max(by: { $0.version < $1.version }) {
            versions.append(compiled)
        }
        return versions
    }

    /// What a document does to users on the steps it changes, against each version devices run
    /// now, in words.
    static func forecastLines(live: [CatalogStore.Entry], document: CatalogDocument) -> [String] {
        live.flatMap { live -> [String] in
            guard let old = try? CatalogDocument(text: live.document) else { return [] }
            let moves = CatalogDiff(from: old, to: document).changes.filter { $0.placement != nil }
            guard !moves.isEmpty else {
                return [
                    "Users mid-flow on version \(live.version) stay on their step: no step they can be on is removed or renamed."
                ]
            }
            return moves.map {
                "From version \(live.version): \($0.flow?.rawValue ?? "") step \($0.step?.rawValue ?? ""): \($0.detail); users on it: \($0.placement?.rawValue ?? "")."
            }
        }
    }

    /// The forecast for users mid-flow: the journeys the server counts waiting at each step of
    /// every version devices run now (during a partial rollout, the users outside it too), and
    /// where the draft's migrations put the users of each version.
    func forecast(app: String, flow: FlowID, live: [CatalogStore.Entry], draft: TourCatalog) async throws
        -> InsightsPage.Table?
    {
        let versions = live.compactMap { entry in
            (try? CatalogDocument(text: entry.document).catalog).flatMap { $0.flow(flow) }.map { (entry, $0) }
        }
        guard !versions.isEmpty else { return nil }
        let stages = try await (insights.journeyStages(app: app, flow: flow.rawValue, range: nil))
        let waiting = Dictionary(
            stages.filter { $0.measure == "step" }.map { ($0.step, $0.waiting) }, uniquingKeysWith: +)
        func fate(_ step: StepID, from entry: CatalogStore.Entry, in oldFlow: FlowDefinition) -> String {
            guard oldFlow.step(step) != nil else { return "–" }
            switch draft.place(step, of: flow, since: entry.version) {
            case .step(let id): return id == step ? "stay on \(id)" : "move to \(id)"
            case .removed(.restart): return "start the flow again"
            case .removed(.goOnAtNext):
                let later = oldFlow.steps.drop { $0.id != step }.dropFirst()
                let next = later.lazy.compactMap {
                    draft.currentStepID($0.id, of: flow, since: entry.version)
                }.first
                return next.map { "go on at \($0)" } ?? "finish the flow"
            case .flowRemoved: return "leave the flow (removed)"
            case .unknown:
                return
                    "by the flow's policy for an unplaced step (\(draft.flow(flow)?.unplacedStep.rawValue ?? "restart"))"
            }
        }
        // Every step any live version has, in the newest version's order, then the others'.
        var steps: [StepID] = []
        for (_, oldFlow) in versions {
            for step in oldFlow.steps.map(\.id) where !steps.contains(step) { steps.append(step) }
        }
        let names = versions.map { entry, _ in
            "From version \(entry.version) (\(entry.source == .published ? "at \(entry.rollout)%" : "in binaries")) they"
        }
        return .init(
            caption:
                "Users mid-flow on the versions devices run now (\(versions.map { String($0.0.version) }.joined(separator: ", "))), by step (journeys the server counts waiting there), and where this draft puts them",
            columns: ["Step", "Waiting there"] + names,
            rows: steps.map { step in
                [.init(step.rawValue), .number(waiting[step.rawValue] ?? 0)]
                    + versions.map { entry, oldFlow in .init(fate(step, from: entry, in: oldFlow)) }
            })
    }
}
