import TourCodec

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What an accepted event did, as structured facts the journal keeps beside its effects. Reports,
/// `explain`, the funnel and the regression oracle read these; none of them parses the `outcome`
/// text (which stays, for people) or needs to replay history through today's catalog.
public enum TourFact: Equatable, Sendable {
    /// A run began with these steps, under this catalog version.
    case flowStarted(flow: FlowID, plan: [StepID], catalogVersion: Int, replay: Bool)
    /// The run shows this step, at this 1-based place in its plan.
    case stepEntered(flow: FlowID, step: StepID, index: Int)
    /// The user (or a timer, or a gate) completed this step.
    case stepCompleted(flow: FlowID, step: StepID)
    /// The step's gate (a permission, a request) was answered.
    case gateAnswered(flow: FlowID, step: StepID, gate: String, answer: GateStatus)
    /// The run ended; the flow's record is now `recorded`, with the app version it holds.
    case flowEnded(flow: FlowID, ending: Ending, recorded: FlowStatus, version: String?)
    /// A debug reset cleared the flow's record.
    case flowReset(flow: FlowID)
    /// A run written under an older catalog (or another catalog of the same version) was moved to
    /// this one. `undeclared`: its step was placed by the flow's `unplacedStep` policy because
    /// neither the catalog nor its declared migrations place it (a change shipped undeclared).
    case runMigrated(
        flow: FlowID, fromVersion: Int, toVersion: Int, fromStep: StepID?, toStep: StepID?, plan: [StepID],
        outcome: MigrationOutcome, undeclared: Bool = false)
    /// The subject was assigned a variant of the flow's experiment: journalled once per subject
    /// and experiment, when the flow first starts for it.
    case assigned(flow: FlowID, ExperimentArm)
    /// The subject saw the first card of its variant (a holdout never is).
    case exposed(flow: FlowID, ExperimentArm)
    /// The subject reached the experiment's goal (after its assignment), once.
    case goalReached(flow: FlowID, ExperimentArm)
    /// The flow started by itself and counts against the family's display budget.
    case budgetSpent(flow: FlowID)
    /// The flow's trigger fired but the display budget held it back: why, and when the budget is
    /// free again (nil: never, with this budget). The trigger stays eligible.
    case budgetHeld(flow: FlowID, until: Date?, reason: String)

    /// Which variant of which experiment, for whom.
    public struct ExperimentArm: Equatable, Sendable {
        public var experiment: String
        public var variant: String
        /// `install:…` or `account:…` (see ``ExperimentSubjects``).
        public var subject: String

        public init(experiment: String, variant: String, subject: String) {
            self.experiment = experiment
            self.variant = variant
            self.subject = subject
        }
    }

    public enum Ending: String, Sendable, Equatable, Codable, CaseIterable {
        /// The last step was completed (or the step showed the flow's content elsewhere: covered).
        case completed
        /// The user chose Skip.
        case skipped
        /// The user closed it another way (Dismiss, Later, close).
        case dismissed
        /// It ended without the user choosing: a relaunch that discards or restarts it, a replay
        /// dropped, a reset, a migration that restarts it.
        case dropped
        /// Another device of the account finished it: the account server's record was adopted
        /// (a run showing here ended without the user finishing it here).
        case finishedElsewhere
        /// The subject is in its experiment's holdout: the flow ended before any card showed.
        case heldOut
    }

    public enum MigrationOutcome: String, Sendable, Equatable, Codable {
        /// Placed on its step (renamed or not) or on the next one after a removed step.
        case moved
        /// Its step could not be placed, or its removal says restart: the flow started again.
        case restarted
        /// A removed step was its last: the flow finished.
        case finished
        /// Its flow is not in this catalog any more: the run ended without a record.
        case dropped
    }

    public var flow: FlowID {
        switch self {
        case .flowStarted(let flow, _, _, _), .stepEntered(let flow, _, _), .stepCompleted(let flow, _),
            .gateAnswered(let flow, _, _, _), .flowEnded(let flow, _, _, _), .flowReset(let flow),
            .runMigrated(let flow, _, _, _, _, _, _, _),
            .assigned(let flow, _), .exposed(let flow, _), .goalReached(let flow, _), .budgetSpent(let flow),
            .budgetHeld(let flow, _, _):
            flow
        }
    }

    /// The fact's name as stored: `flowStarted`, `stepEntered`, ...
    public var name: String {
        switch self {
        case .flowStarted: "flowStarted"
        case .stepEntered: "stepEntered"
        case .stepCompleted: "stepCompleted"
        case .gateAnswered: "gateAnswered"
        case .flowEnded: "flowEnded"
        case .flowReset: "flowReset"
        case .runMigrated: "runMigrated"
        case .assigned: "assigned"
        case .exposed: "exposed"
        case .goalReached: "goalReached"
        case .budgetSpent: "budgetSpent"
        case .budgetHeld: "budgetHeld"
        }
    }

    /// The experiment arm of an `assigned`, `exposed` or `goalReached` fact.
    public var arm: ExperimentArm? {
        switch self {
        case .assigned(_, let arm), .exposed(_, let arm), .goalReached(_, let arm): arm
        default: nil
        }
    }
}

/// Stored as `{"fact": "stepEntered", "flow": "walkthrough", "step": "markWeek", "index": 6}`:
/// explicit keys, new keys optional, so facts written by any release stay readable.
extension TourFact: TourValueCodable, JSONTextWritable {
    public var tourValue: TourValue {
        var object: [String: TourValue] = [:]
        for (key, value) in storedMembers { if let value { object[key] = value } }
        return .object(object)
    }

    /// The same text as `tourValue.jsonText()`, from the same members (the journal writes facts
    /// with every event).
    public func writeJSON(to writer: inout JSONTextWriter) throws(JSONTextError) {
        try writer.write(members: storedMembers)
    }

    /// The stored form's members (a nil value is left out), keys in byte order: written as they
    /// come.
    private var storedMembers: [(key: String, value: TourValue?)] {
        let fact: TourValue = .string(name)
        let flow: TourValue = .string(self.flow.rawValue)
        return switch self {
        case .flowStarted(_, let plan, let catalogVersion, let replay):
            [
                ("catalogVersion", .int(catalogVersion)), ("fact", fact), ("flow", flow),
                ("plan", .strings(plan.map({ $0.rawValue }))), ("replay", replay ? .bool(true) : nil),
            ]
        case .stepEntered(_, let step, let index):
            [("fact", fact), ("flow", flow), ("index", .int(index)), ("step", .string(step.rawValue))]
        case .stepCompleted(_, let step):
            [("fact", fact), ("flow", flow), ("step", .string(step.rawValue))]
        case .gateAnswered(_, let step, let gate, let answer):
            [
                ("answer", .string(answer.rawValue)), ("fact", fact), ("flow", flow), ("gate", .string(gate)),
                ("step", .string(step.rawValue)),
            ]
        case .flowEnded(_, let ending, let recorded, let version):
            [
                ("ending", .string(ending.rawValue)), ("fact", fact), ("flow", flow),
                ("recorded", .string(recorded.rawValue)), ("version", version.map(TourValue.string)),
            ]
        case .flowReset, .budgetSpent:
            [("fact", fact), ("flow", flow)]
        case .runMigrated(
            _, let fromVersion, let toVersion, let fromStep, let toStep, let plan, let outcome, let undeclared
        ):
            [
                ("fact", fact), ("flow", flow), ("fromStep", fromStep.map { .string($0.rawValue) }),
                ("fromVersion", .int(fromVersion)), ("outcome", .string(outcome.rawValue)),
                ("plan", .strings(plan.map({ $0.rawValue }))),
                ("toStep", toStep.map { .string($0.rawValue) }),
                ("toVersion", .int(toVersion)), ("undeclared", undeclared ? .bool(true) : nil),
            ]
        case .assigned(_, let arm), .exposed(_, let arm), .goalReached(_, let arm):
            [
                ("experiment", .string(arm.experiment)), ("fact", fact), ("flow", flow),
                ("subject", .string(arm.subject)),
                ("variant", .string(arm.variant)),
            ]
        case .budgetHeld(_, let until, let reason):
            [
                ("fact", fact), ("flow", flow), ("reason", .string(reason)),
                ("until", until.map { .double($0.timeIntervalSince1970) }),
            ]
        }
    }

    /// The `fact` names this build reads; a stored fact of another kind was written by a newer one.
    public static let kinds: Set<String> = [
        "flowStarted", "stepEntered", "stepCompleted", "gateAnswered", "flowEnded", "flowReset",
        "runMigrated",
        "assigned", "exposed", "goalReached", "budgetSpent", "budgetHeld",
    ]

    public init(tourValue: TourValue) throws {
        let stored = try TourValueReader(tourValue, as: "fact")
        let flow = try stored.raw("flow", FlowID.self)
        func steps(_ key: String) throws -> [StepID] { try stored.strings(key).map(StepID.init(rawValue:)) }
        switch try stored.string("fact") {
        case "flowStarted":
            self = .flowStarted(
                flow: flow, plan: try steps("plan"),
                catalogVersion: try stored.optionalInt("catalogVersion") ?? 1,
                replay: try stored.optionalBool("replay") ?? false)
        case "stepEntered":
            self = .stepEntered(
                flow: flow, step: try stored.raw("step", StepID.self),
                index: try stored.int("index", in: 0...FlowRun.maximumCount))
        case "stepCompleted":
            self = .stepCompleted(flow: flow, step: try stored.raw("step", StepID.self))
        case "gateAnswered":
            self = .gateAnswered(
                flow: flow, step: try stored.raw("step", StepID.self), gate: try stored.string("gate"),
                answer: try stored.raw("answer", GateStatus.self))
        case "flowEnded":
            self = .flowEnded(
                flow: flow, ending: try stored.raw("ending", Ending.self),
                recorded: try stored.raw("recorded", FlowStatus.self),
                version: try stored.optionalString("version"))
        case "flowReset":
            self = .flowReset(flow: flow)
        case "runMigrated":
            self = .runMigrated(
                flow: flow, fromVersion: try stored.int("fromVersion"),
                toVersion: try stored.int("toVersion"),
                fromStep: try stored.optionalRaw("fromStep", StepID.self),
                toStep: try stored.optionalRaw("toStep", StepID.self),
                plan: stored.value("plan") == nil ? [] : try steps("plan"),
                outcome: try stored.raw("outcome", MigrationOutcome.self),
                undeclared: try stored.optionalBool("undeclared") ?? false)
        case "assigned", "exposed", "goalReached":
            let arm = ExperimentArm(
                experiment: try stored.string("experiment"), variant: try stored.string("variant"),
                subject: try stored.string("subject"))
            switch try stored.string("fact") {
            case "assigned": self = .assigned(flow: flow, arm)
            case "exposed": self = .exposed(flow: flow, arm)
            default: self = .goalReached(flow: flow, arm)
            }
        case "budgetSpent":
            self = .budgetSpent(flow: flow)
        case "budgetHeld":
            self = .budgetHeld(
                flow: flow, until: try stored.optionalDouble("until").map(Date.init(timeIntervalSince1970:)),
                reason: try stored.string("reason"))
        case let other:
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [MemberKey("fact")],
                    debugDescription: "unknown fact '\(other)' (written by a newer release?)"))
        }
    }
}
