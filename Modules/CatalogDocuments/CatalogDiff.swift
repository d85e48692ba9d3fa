import TourCodec
import TourCore

/// What changed between two catalog documents, as a reviewer reads a release: flows and steps
/// added, removed, renamed or reordered, wording, actions, effects, fields, triggers and policies
/// changed, and for every step that is gone whether a declared migration places the users on it.
///
/// Renames are known only from declarations (the newer document's migrations chained from the older
/// version): a step renamed without one shows as removed and added, with a hint that it looks like
/// a rename when the two read alike.
public struct CatalogDiff: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case versionChanged = "version_changed"
        case flowAdded = "flow_added"
        case flowRemoved = "flow_removed"
        case stepAdded = "step_added"
        case stepRemoved = "step_removed"
        case stepRenamed = "step_renamed"
        case stepsReordered = "steps_reordered"
        case wordingChanged = "wording_changed"
        case actionAdded = "action_added"
        case actionRemoved = "action_removed"
        case actionRenamed = "action_renamed"
        case actionChanged = "action_changed"
        case effectsChanged = "effects_changed"
        case stepChanged = "step_changed"
        case fieldsChanged = "fields_changed"
        case triggersChanged = "triggers_changed"
        case policyChanged = "policy_changed"
        case freeActionsChanged = "free_actions_changed"
        case migrationsChanged = "migrations_changed"
        case vocabularyChanged = "vocabulary_changed"
        case catalogChanged = "catalog_changed"
    }

    /// Whether users on a step or in a flow that is gone are placed by a declared migration.
    public enum Placement: String, Sendable, Equatable {
        /// On the step's new id.
        case staysOnRenamed = "stays on the renamed step"
        case goesOnAtNext = "goes on at the next step"
        case restarts = "starts again (declared)"
        case flowEnds = "the run ends (declared)"
        /// Nothing declares it: the flow's `unplacedStep` policy moves them, and `check` refuses the release.
        case notPlaced = "NOT placed by any declared migration"
    }

    public struct Change: Sendable, Equatable, CustomStringConvertible {
        public var kind: Kind
        public var flow: FlowID?
        public var step: StepID?
        public var detail: String
        /// For a step or flow that is gone: what happens to users on it.
        public var placement: Placement?

        public var description: String {
            let place = [flow?.rawValue, step?.rawValue].compactMap { $0 }.joined(separator: " step ")
            return "\(kind.rawValue)\(place.isEmpty ? "" : " (\(place))"): \(detail)"
                + (placement.map { " — users on it: \($0.rawValue)" } ?? "")
        }
    }

    public var fromVersion: Int
    public var toVersion: Int
    public var changes: [Change]

    public var isEmpty: Bool { changes.isEmpty }

    public init(from old: CatalogDocument, to new: CatalogDocument) {
        fromVersion = old.catalog.version
        toVersion = new.catalog.version
        var builder = CatalogDiffBuilder(old: old, new: new)
        builder.run()
        changes = builder.changes
    }

    /// The changes that leave users on a step or in a flow nothing places.
    public var unplaced: [Change] { changes.filter { $0.placement == .notPlaced } }
}

extension TourValue {
    /// The member `key` of an object; null when there is none.
    func member(_ key: String) -> TourValue {
        if case .object(let members) = self { return members[key] ?? .null }
        return .null
    }
}
