import TourCodec
import TourCore

/// One thing wrong with a catalog: a reference to something that does not exist, a step nobody
/// can reach or leave, a required gate nothing requests, an effect the handler does not take, or a
/// release that would strand users (``CatalogHistory``). Each would otherwise be accepted and
/// silently do nothing, or worse.
public struct CatalogProblem: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable, Codable {
        case duplicateID = "duplicate_id"
        /// An id outside ``WireName/rule``: the account server would refuse every fact naming it.
        case badID = "bad_id"
        case unknownGate = "unknown_gate"
        case unknownField = "unknown_field"
        case unknownFlow = "unknown_flow"
        case unknownAction = "unknown_action"
        case unknownPassThrough = "unknown_pass_through"
        case undeclaredContextKey = "undeclared_context_key"
        case undeclaredEffect = "undeclared_effect"
        case unknownPayloadKey = "unknown_payload_key"
        case missingPayloadKey = "missing_payload_key"
        case payloadKind = "payload_kind"
        case undeclaredRequest = "undeclared_request"
        case unreachableStep = "unreachable_step"
        case deadEnd = "dead_end"
        case unrequestableGate = "unrequestable_gate"
        case unwritable = "unwritable"
        /// An integer field whose fixed maximum is below its minimum: no value is allowed.
        case emptyRange = "empty_range"
        /// A step or a trigger whose condition no value of what it reads makes true: never shown.
        case neverShown = "never_shown"
        /// A flow's experiment that cannot run or be measured as written.
        case experiment = "experiment"
        // The release history (``CatalogHistory``).
        case changedWithoutVersion = "changed_without_version"
        case missingRelease = "missing_release"
        case versionBehindHistory = "version_behind_history"
        case unreadableRelease = "unreadable_release"
        case unplacedStep = "unplaced_step"
        case unplacedFlow = "unplaced_flow"
        case unknownMigrationReference = "unknown_migration_reference"
        case migrationOutOfRange = "migration_out_of_range"
        // Translations (``TourCatalog/translationProblems``): only bad ones stop a release.
        case missingTranslation = "missing_translation"
        case extraTranslation = "extra_translation"
        case staleTranslation = "stale_translation"
        case badTranslation = "bad_translation"
        // A document checked against a binary's vocabulary.
        case vocabularyMismatch = "vocabulary_mismatch"

        /// The kinds a catalog alone can have (the others need its history or another binary).
        public static var coherence: [Kind] {
            [
                .duplicateID, .unknownGate, .unknownField, .unknownFlow, .unknownAction, .unknownPassThrough,
                .undeclaredContextKey, .undeclaredEffect, .unknownPayloadKey, .missingPayloadKey,
                .payloadKind,
                .undeclaredRequest, .unreachableStep, .deadEnd, .unrequestableGate, .experiment, .emptyRange,
                .neverShown,
            ]
        }
    }

    public var kind: Kind
    public var flow: FlowID?
    public var step: StepID?
    /// Where in the catalog document the problem is: `flows[walkthrough].steps[markWeek].actions[saveMark]`.
    public var path: String
    public var detail: String

    public init(kind: Kind, flow: FlowID?, step: StepID?, path: String = "", detail: String) {
        self.kind = kind
        self.flow = flow
        self.step = step
        self.path = path
        self.detail = detail
    }

    public var description: String {
        let place = [flow?.rawValue, step?.rawValue].compactMap { $0 }.joined(separator: " step ")
        return
            """
            \(kind.rawValue)\(place.isEmpty ? "" : " (\(place))"): \(detail)\
            \(path.isEmpty ? "" : " [at \(path)]")
            """
    }
}
