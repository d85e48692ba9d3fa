/// An experiment a flow runs: variants with weights, one of them the control, and the goal each
/// variant's rate is measured by (Docs/Publishing.md, "Experiments").
///
/// A subject (the account for an account-scoped flow of a user who syncs, the install otherwise) is
/// assigned a variant by ``ExperimentAssignment`` the first time the flow starts for it; the
/// assignment is kept (``ExperimentMark``) and journalled once, so it never changes under the user
/// even if weights do. Replays are not part of the experiment: they show the whole flow.
public struct Experiment: Sendable, Equatable {
    /// What a variant shows.
    public enum Shows: Sendable, Equatable {
        /// The flow as declared.
        case allSteps
        /// Only these steps of the flow (in the flow's order; each still subject to its
        /// `includedWhen`).
        case steps([StepID])
        /// Nothing: the flow ends before any card shows, as a skip would (its `onSkip` effects run;
        /// its record follows the skip policy, and a flow whose skip records nothing records
        /// skipped, so it is not offered again).
        case nothing
    }

    public struct Variant: Sendable, Equatable {
        public var name: String
        /// Its share of subjects: its weight over the sum of the weights (0 takes no new subjects).
        public var weight: Int
        public var shows: Shows

        public init(_ name: String, weight: Int, shows: Shows = .allSteps) {
            self.name = name
            self.weight = weight
            self.shows = shows
        }

        public var isHoldout: Bool { shows == .nothing }
    }

    /// What counts as success, once per subject.
    public enum Goal: Sendable, Equatable {
        /// The flow completed (not skipped), in a run that is not a replay.
        case completion
        /// The product performed this effect (Finite's `storePhase`), from any flow or action.
        case effect(String)

        public var summary: String {
            switch self {
            case .completion: "completion"
            case .effect(let name): "effect \(name)"
            }
        }
    }

    /// Unique among the catalog's experiments; also the assignment's salt, so a new id reshuffles.
    public var id: String
    public var variants: [Variant]
    /// The variant the others are compared with.
    public var control: String
    public var goal: Goal

    /// - Parameter control: the control's name; the first variant when nil.
    public init(_ id: String, variants: [Variant], control: String? = nil, goal: Goal = .completion) {
        self.id = id
        self.variants = variants
        self.control = control ?? variants.first?.name ?? ""
        self.goal = goal
    }

    public func variant(_ name: String) -> Variant? { variants.first { $0.name == name } }

    /// The variant `subject` is in (nil when no weight is positive).
    public func assign(_ subject: String) -> Variant? {
        ExperimentAssignment.variant(subject: subject, experiment: id, weights: variants.map(\.weight)).map {
            variants[$0]
        }
    }

    /// Experiment ids and variant names: they travel in facts and reports.
    public static let nameRule = "1 to 64 ASCII letters, digits, '.', '_' or '-'"

    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                    || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }

    /// The smallest number of assigned subjects per variant before a report compares rates.
    public static let minimumSubjects = 100
}

/// Who an experiment assigns: the subjects of this device and user, as the runtime knows them.
/// The engine picks one per flow by its scope. Without one, a flow with an experiment runs its
/// control and nothing is assigned or journalled (tests, forecasts, tools that know no install).
public struct ExperimentSubjects: Sendable, Equatable {
    /// `install:ID`: this install of the app.
    public var install: String?
    /// `account:USER`: the account, when the user syncs with the account server.
    public var account: String?

    public init(install: String? = nil, account: String? = nil) {
        self.install = install
        self.account = account
    }

    public static let none = ExperimentSubjects()

    /// The subject of a flow of `scope`: the account for an account-scoped flow of a user who
    /// syncs, the install otherwise (the same rule as a publication's rollout).
    public func subject(for scope: FlowScope) -> String? {
        if scope == .user, let account { return account }
        return install
    }
}

/// One subject's standing in one experiment, kept with the flow states: the variant it was assigned
/// (never recomputed) and whether its exposure and goal are journalled, so each is journalled once.
public struct ExperimentMark: Sendable, Equatable {
    public var flow: FlowID
    public var variant: String
    /// The subject assigned (`install:…` or `account:…`).
    public var subject: String
    public var exposed: Bool
    public var goalReached: Bool

    public init(
        flow: FlowID, variant: String, subject: String, exposed: Bool = false, goalReached: Bool = false
    ) {
        self.flow = flow
        self.variant = variant
        self.subject = subject
        self.exposed = exposed
        self.goalReached = goalReached
    }
}
