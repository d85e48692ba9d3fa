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
    /// A run written under an older catalog was moved to this one.
    case runMigrated(
        flow: FlowID, fromVersion: Int, toVersion: Int, fromStep: StepID?, toStep: StepID?, plan: [StepID],
        outcome: MigrationOutcome)

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
    }

    public enum MigrationOutcome: String, Sendable, Equatable, Codable {
        /// Placed on its step (renamed or not) or on the next one after a removed step.
        case moved
        /// Its step could not be placed, or its removal says restart: the flow started again.
        case restarted
        /// A removed step was its last: the flow finished.
        case finished
    }

    public var flow: FlowID {
        switch self {
        case .flowStarted(let flow, _, _, _), .stepEntered(let flow, _, _), .stepCompleted(let flow, _),
            .gateAnswered(let flow, _, _, _), .flowEnded(let flow, _, _, _), .flowReset(let flow), .runMigrated(let flow, _, _, _, _, _, _):
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
        }
    }
}

/// Stored as `{"fact": "stepEntered", "flow": "walkthrough", "step": "markWeek", "index": 6}`:
/// explicit keys, new keys optional, so facts written by any release stay readable.
extension TourFact: Codable {
    enum Key: String, CodingKey {
        case fact, flow, plan, catalogVersion, replay, step, index, ending, recorded, version
        case fromVersion, toVersion, fromStep, toStep, outcome, gate, answer
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(name, forKey: .fact)
        try c.encode(flow, forKey: .flow)
        switch self {
        case .flowStarted(_, let plan, let catalogVersion, let replay):
            try c.encode(plan, forKey: .plan)
            try c.encode(catalogVersion, forKey: .catalogVersion)
            if replay { try c.encode(true, forKey: .replay) }
        case .stepEntered(_, let step, let index):
            try c.encode(step, forKey: .step)
            try c.encode(index, forKey: .index)
        case .stepCompleted(_, let step):
            try c.encode(step, forKey: .step)
        case .gateAnswered(_, let step, let gate, let answer):
            try c.encode(step, forKey: .step)
            try c.encode(gate, forKey: .gate)
            try c.encode(answer, forKey: .answer)
        case .flowEnded(_, let ending, let recorded, let version):
            try c.encode(ending, forKey: .ending)
            try c.encode(recorded, forKey: .recorded)
            try c.encodeIfPresent(version, forKey: .version)
        case .flowReset:
            break
        case .runMigrated(_, let fromVersion, let toVersion, let fromStep, let toStep, let plan, let outcome):
            try c.encode(fromVersion, forKey: .fromVersion)
            try c.encode(toVersion, forKey: .toVersion)
            try c.encodeIfPresent(fromStep, forKey: .fromStep)
            try c.encodeIfPresent(toStep, forKey: .toStep)
            try c.encode(plan, forKey: .plan)
            try c.encode(outcome, forKey: .outcome)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let flow = try c.decode(FlowID.self, forKey: .flow)
        switch try c.decode(String.self, forKey: .fact) {
        case "flowStarted":
            self = .flowStarted(
                flow: flow, plan: try c.decode([StepID].self, forKey: .plan),
                catalogVersion: try c.decodeIfPresent(Int.self, forKey: .catalogVersion) ?? 1,
                replay: try c.decodeIfPresent(Bool.self, forKey: .replay) ?? false)
        case "stepEntered":
            self = .stepEntered(
                flow: flow, step: try c.decode(StepID.self, forKey: .step), index: try c.decode(Int.self, forKey: .index))
        case "stepCompleted":
            self = .stepCompleted(flow: flow, step: try c.decode(StepID.self, forKey: .step))
        case "gateAnswered":
            self = .gateAnswered(
                flow: flow, step: try c.decode(StepID.self, forKey: .step), gate: try c.decode(String.self, forKey: .gate),
                answer: try c.decode(GateStatus.self, forKey: .answer))
        case "flowEnded":
            self = .flowEnded(
                flow: flow, ending: try c.decode(Ending.self, forKey: .ending),
                recorded: try c.decode(FlowStatus.self, forKey: .recorded),
                version: try c.decodeIfPresent(String.self, forKey: .version))
        case "flowReset":
            self = .flowReset(flow: flow)
        case "runMigrated":
            self = .runMigrated(
                flow: flow, fromVersion: try c.decode(Int.self, forKey: .fromVersion),
                toVersion: try c.decode(Int.self, forKey: .toVersion),
                fromStep: try c.decodeIfPresent(StepID.self, forKey: .fromStep),
                toStep: try c.decodeIfPresent(StepID.self, forKey: .toStep),
                plan: try c.decodeIfPresent([StepID].self, forKey: .plan) ?? [],
                outcome: try c.decode(MigrationOutcome.self, forKey: .outcome))
        case let other:
            throw DecodingError.dataCorruptedError(
                forKey: .fact, in: c, debugDescription: "unknown fact '\(other)' (written by a newer release?)")
        }
    }
}
