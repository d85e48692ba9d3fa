import TourCodec

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a flow stands for one user, as the spec's JSON names it.
public enum FlowStatus: String, Codable, Sendable, CaseIterable {
    case notStarted, active, completed, skipped
}

/// Everything the engine knows about one product for one user: each flow's record and run, and the
/// app version last launched. It is a plain value; persistence stores it, the engine folds events into it.
public struct TourState: Equatable, Sendable {
    public var flows: [FlowID: FlowState]
    public var appVersion: String?
    /// Each experiment this user's subjects were assigned to, by experiment id.
    public var experiments: [String: ExperimentMark]

    public init(
        flows: [FlowID: FlowState] = [:], appVersion: String? = nil,
        experiments: [String: ExperimentMark] = [:]
    ) {
        self.flows = flows
        self.appVersion = appVersion
        self.experiments = experiments
    }

    public subscript(flow id: FlowID) -> FlowState {
        get { flows[id] ?? FlowState() }
        set { flows[id] = newValue }
    }

    /// The flow whose card shows: the active flow activated last.
    public var presentingFlow: FlowID? {
        // Read on every event and view, several times: a loop, not a filtered copy of the flows.
        var presenting: (id: FlowID, activation: Int)?
        for (id, state) in flows where state.status == .active {
            let activation = state.activation
            if presenting.map({ activation > $0.activation }) ?? true { presenting = (id, activation) }
        }
        return presenting?.id
    }
}

/// Where one flow stands for one user. Each case holds only what means something in it, so
/// impossible combinations (a pending start on a showing flow, a run on a finished one) cannot be
/// written down.
public enum FlowState: Equatable, Sendable {
    /// Never shown, or shown and dropped without a record. A trigger may have made it due.
    case notStarted(pendingStart: Date?)
    /// Showing (or interrupted while showing), with its run.
    case active(FlowRun)
    /// Completed or skipped, in an app version.
    case finished(FlowRecord)

    /// A flow nobody has started.
    public init() { self = .notStarted(pendingStart: nil) }

    /// A state holding only a record: no run.
    public static func record(status: FlowStatus, version: String?) -> FlowState {
        switch status {
        case .completed: .finished(FlowRecord(.completed, version: version))
        case .skipped: .finished(FlowRecord(.skipped, version: version))
        case .notStarted, .active: .notStarted(pendingStart: nil)
        }
    }

    public var status: FlowStatus {
        switch self {
        case .notStarted: .notStarted
        case .active: .active
        case .finished(let record): record.ending.status
        }
    }

    /// The run while the flow is active.
    public var run: FlowRun? {
        if case .active(let run) = self { run } else { nil }
    }

    public var currentStep: StepID? { run?.currentStep }
    public var plan: [StepID] { run?.plan ?? [] }
    public var position: Int { run?.position ?? 0 }
    public var fields: [String: TourValue] { run?.fields ?? [:] }
    public var gates: [String: GateStatus] { run?.gates ?? [:] }
    public var performed: [String] { run?.performed ?? [] }
    public var deadline: Date? { run?.deadline }
    public var activation: Int { run?.activation ?? 0 }
    public var replayOf: FlowRecord.Before? { run?.replayOf }

    /// The record a replay that records nothing restores when it ends.
    public var recordBefore: FlowRecord.Before {
        if case .finished(let record) = self { .finished(record) } else { .notStarted }
    }

    public var pendingStart: Date? {
        if case .notStarted(let start) = self { start } else { nil }
    }

    /// The app version the flow last finished in: the "last tour version" of update prompts. While
    /// a replay that records nothing shows, the version of the record it will restore.
    public var finishedInVersion: String? {
        switch self {
        case .finished(let record): record.version
        case .active(let run): if case .finished(let record)? = run.replayOf { record.version } else { nil }
        case .notStarted: nil
        }
    }
}

/// How a finished flow ended, and in which app version.
public struct FlowRecord: Equatable, Sendable {
    public enum Ending: String, Sendable, Equatable, Codable {
        case completed, skipped

        public var status: FlowStatus { self == .completed ? .completed : .skipped }
    }

    /// What a flow was before a replay that must leave it as it was.
    public enum Before: Equatable, Sendable {
        case notStarted
        case finished(FlowRecord)

        public var status: FlowStatus {
            if case .finished(let record) = self { record.ending.status } else { .notStarted }
        }

        public var state: FlowState {
            if case .finished(let record) = self { .finished(record) } else { FlowState() }
        }
    }

    public var ending: Ending
    public var version: String?

    public init(_ ending: Ending, version: String?) {
        self.ending = ending
        self.version = version
    }
}

/// One showing flow's run: the steps it includes, where the user is, what they entered.
public struct FlowRun: Equatable, Sendable {
    /// The steps included in this run, decided when it started (or when it was migrated).
    public var plan: [StepID]
    /// Index into ``plan`` of the step showing.
    public var position: Int
    /// Values entered in this run. Secrets appear only as "‹redacted›".
    public var fields: [String: TourValue]
    /// Answers to the current step's gates.
    public var gates: [String: GateStatus]
    /// Actions done on the current step (for staged steps).
    public var performed: [String]
    /// When the current step completes by itself.
    public var deadline: Date?
    /// Increases each time a flow becomes active; the highest active one presents.
    public var activation: Int
    /// The version of the catalog the run was started (or last migrated) under.
    public var catalogVersion: Int
    /// The fingerprint of the catalog document it was started (or last migrated) under; nil for
    /// runs written before fingerprints (0.8 and earlier) or by an engine that was given none.
    public var catalogFingerprint: String?
    /// Set while a replay runs that must leave the record as it was.
    public var replayOf: FlowRecord.Before?

    public init(
        plan: [StepID], position: Int = 0, fields: [String: TourValue] = [:],
        gates: [String: GateStatus] = [:],
        performed: [String] = [], deadline: Date? = nil, activation: Int, catalogVersion: Int,
        catalogFingerprint: String? = nil, replayOf: FlowRecord.Before? = nil
    ) {
        self.plan = plan
        self.position = position
        self.fields = fields
        self.gates = gates
        self.performed = performed
        self.deadline = deadline
        self.activation = activation
        self.catalogVersion = catalogVersion
        self.catalogFingerprint = catalogFingerprint
        self.replayOf = replayOf
    }

    public var currentStep: StepID? { plan.indices.contains(position) ? plan[position] : nil }
}

extension TourState {
    /// The run of an active flow, to read or change in place; nil (and unchangeable) otherwise.
    public subscript(run id: FlowID) -> FlowRun? {
        get { self[flow: id].run }
        set {
            guard let newValue, case .active = self[flow: id] else { return }
            self[flow: id] = .active(newValue)
        }
    }
}

/// Written whole (the benchmarks' baselines store it so): each flow's one stored form by its id.
/// The database stores flows one row each (`flow_state`), not this.
extension TourState: TourValueEncodable {
    public var tourValue: TourValue {
        .members([
            "appVersion": appVersion.map(TourValue.string),
            "flows": .object(
                Dictionary(uniqueKeysWithValues: flows.map { ($0.key.rawValue, $0.value.tourValue) })),
        ])
    }
}
