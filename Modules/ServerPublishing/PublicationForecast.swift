import CatalogDocuments
import TourCore

/// Where a publication, a rollout raised or lowered, or a rollback puts users mid-flow: which
/// versions devices run now, and where each version's users on each step go under another catalog,
/// as the engine moves them (``TourCore`` `migrateRuns`). Pure: the journeys waiting at each step
/// are the caller's (the insights' counts). The studio shows what this says before it asks to
/// publish, and says it in its own words.
package enum PublicationForecast {
    /// Every version devices run now, newest first: the live publications from the newest down to
    /// the first at 100%, and, when none is at 100%, the newest compiled version (a device outside
    /// every rollout runs its binary's). During a partial rollout that is two versions or more.
    package static func liveVersions(_ entries: [CatalogStore.Entry]) -> [CatalogStore.Entry] {
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

    /// What devices run now, the newest of ``liveVersions(_:)``: the newest live publication, else
    /// the newest compiled version.
    package static func live(_ entries: [CatalogStore.Entry]) -> CatalogStore.Entry? {
        liveVersions(entries).first
    }

    /// The version devices outside `entry` run: the newest live one below it, else the newest
    /// compiled.
    package static func versionBelow(_ entry: CatalogStore.Entry, in entries: [CatalogStore.Entry])
        -> CatalogStore.Entry?
    {
        liveVersions(entries.filter { $0.version < entry.version }).first
    }

    /// `flow` in each of `entries` that has it (a document that does not read is left out).
    package static func flows(_ flow: FlowID, of entries: [CatalogStore.Entry]) -> [(
        CatalogStore.Entry, FlowDefinition
    )] {
        entries.compactMap { entry in
            (try? CatalogDocument(text: entry.document).catalog).flatMap { $0.flow(flow) }.map { (entry, $0) }
        }
    }

    /// Where the users mid-flow on one step go under another catalog, per version.
    package struct StepFate: Equatable, Sendable {
        package var step: StepID
        /// Journeys the server counts waiting at the step (all versions together: the counts are
        /// by step).
        package var waiting: Int
        /// Per version, in the order given: what happens to its users there ("stay on allSet",
        /// "go on at allSet", ...), or nil when that version has no such step.
        package var fates: [String?]
    }

    /// For `flow`, every step any of `versions` has (the first's order, then the others'), the
    /// journeys `waiting` there (by step id), and where `target`'s migrations put each version's
    /// users on it.
    package static func fates(
        of flow: FlowID, versions: [(CatalogStore.Entry, FlowDefinition)], under target: TourCatalog,
        waiting: [String: Int]
    ) -> [StepFate] {
        var steps: [StepID] = []
        for (_, oldFlow) in versions {
            for step in oldFlow.steps.map(\.id) where !steps.contains(step) { steps.append(step) }
        }
        return steps.map { step in
            StepFate(
                step: step, waiting: waiting[step.rawValue] ?? 0,
                fates: versions.map { entry, oldFlow in
                    fate(step, of: flow, from: entry.version, in: oldFlow, under: target)
                })
        }
    }

    /// Where a run on `step` of `oldFlow` (written under `version`) goes in `target`, in words, as
    /// the engine moves it (`migrateRuns`: a downgrade keeps a step the target has).
    package static func fate(
        _ step: StepID, of flow: FlowID, from version: Int, in oldFlow: FlowDefinition,
        under target: TourCatalog
    ) -> String? {
        guard oldFlow.step(step) != nil else { return nil }
        if version > target.version {
            if target.flow(flow)?.step(step) != nil { return "stay on \(step)" }
        }
        func next() -> String {
            let later = oldFlow.steps.drop { $0.id != step }.dropFirst()
            let next = later.lazy.compactMap { target.currentStepID($0.id, of: flow, since: version) }.first
            return next.map { "go on at \($0)" } ?? "finish the flow"
        }
        switch target.place(step, of: flow, since: version) {
        case .step(let id): return id == step ? "stay on \(id)" : "move to \(id)"
        case .removed(.restart): return "start the flow again"
        case .removed(.goOnAtNext): return next()
        case .flowRemoved: return "leave the flow (removed)"
        case .unknown:
            switch target.flow(flow)?.unplacedStep ?? .restart {
            case .restart: return "start the flow again (the flow's policy for a step it does not have)"
            case .goOnAtNext: return next() + " (the flow's policy for a step it does not have)"
            }
        }
    }
}
