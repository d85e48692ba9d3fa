#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a release that raises a catalog's version changed in its flows, declared as data next to
/// the catalog: how a run in progress under version `from` moves to version `from + 1`.
///
/// Steps added need no declaration: a run is placed on its step in the new flow, so steps added
/// before it are behind the user (not shown) and steps added after it are ahead.
public struct CatalogMigration: Sendable, Equatable {
    /// The version runs move from; they move to `from + 1`.
    public var from: Int
    public var flows: [FlowID: FlowChanges]
    /// Flows the release removes: a run of one ends (dropped, journalled) at the next event.
    public var removedFlows: Set<FlowID>

    public init(from: Int, _ flows: [FlowID: FlowChanges] = [:], removedFlows: Set<FlowID> = []) {
        self.from = from
        self.flows = flows
        self.removedFlows = removedFlows
    }
}

/// One flow's changes in a release.
public struct FlowChanges: Sendable, Equatable {
    /// What happens to a run on a step that the release removes.
    public enum RemovedStep: String, Sendable, Equatable, CaseIterable {
        /// The run goes on at the next step of its plan that still exists (finishing the flow when
        /// there is none).
        case goOnAtNext
        /// The flow starts again from its first step.
        case restart
    }

    /// Old step id → new step id.
    public var renamedSteps: [StepID: StepID]
    /// Removed step → what a run on it does.
    public var removedSteps: [StepID: RemovedStep]
    /// Old action name → new action name (old names keep working as aliases).
    public var renamedActions: [String: String]

    public init(
        renamedSteps: [StepID: StepID] = [:], removedSteps: [StepID: RemovedStep] = [:],
        renamedActions: [String: String] = [:]
    ) {
        self.renamedSteps = renamedSteps
        self.removedSteps = removedSteps
        self.renamedActions = renamedActions
    }
}

extension TourCatalog {
    /// The migrations from `version` to this catalog's version, oldest first.
    package func migrations(after version: Int) -> [CatalogMigration] {
        migrations.filter { $0.from >= version && $0.from < self.version }.sorted { $0.from < $1.from }
    }

    /// Where a step of a run under `version` is in this catalog: its id now, or what its removal
    /// does; nil when it is gone without a declaration (the run cannot be placed).
    package func place(_ step: StepID, of flow: FlowID, since version: Int) -> StepPlacement {
        var id = step
        for migration in migrations(after: version) {
            if migration.removedFlows.contains(flow) { return .flowRemoved }
            guard let changes = migration.flows[flow] else { continue }
            if let removal = changes.removedSteps[id] { return .removed(removal) }
            id = changes.renamedSteps[id] ?? id
        }
        return self.flow(flow)?.step(id) != nil ? .step(id) : .unknown
    }

    /// The id a step of a run under `version` has in this catalog; nil when it was removed or is
    /// unknown.
    public func currentStepID(_ step: StepID, of flow: FlowID, since version: Int) -> StepID? {
        if case .step(let id) = place(step, of: flow, since: version) { return id }
        return nil
    }

    /// The name an action has now, given a name from any earlier version.
    func currentActionName(_ name: String) -> String? {
        var renamed: String?
        var current = name
        for migration in migrations.sorted(by: { $0.from < $1.from }) {
            for changes in migration.flows.values {
                if let next = changes.renamedActions[current] {
                    current = next
                    renamed = next
                }
            }
        }
        return renamed
    }
}

/// Where a step of an older run is in a catalog.
package enum StepPlacement: Equatable {
    /// A step of the catalog (the same id, or the one a declared rename gave it).
    case step(StepID)
    /// A declared migration removed it.
    case removed(FlowChanges.RemovedStep)
    /// A declared migration removed its whole flow.
    case flowRemoved
    /// Nothing places it: it is not in the catalog and no migration mentions it.
    case unknown
}
