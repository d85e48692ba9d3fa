import Foundation

/// Where a flow stands for one user, as the spec's JSON names it.
public enum FlowStatus: String, Codable, Sendable, CaseIterable {
    case notStarted, active, completed, skipped
}

/// Everything the engine knows about one product for one user: each flow's record and run, and the
/// app version last launched. It is a plain value; persistence stores it, the engine folds events into it.
public struct TourState: Codable, Equatable, Sendable {
    public var flows: [FlowID: FlowState]
    public var appVersion: String?

    public init(flows: [FlowID: FlowState] = [:], appVersion: String? = nil) {
        self.flows = flows
        self.appVersion = appVersion
    }

    public subscript(flow id: FlowID) -> FlowState {
        get { flows[id] ?? FlowState() }
        set { flows[id] = newValue }
    }

    /// The flow whose card shows: the active flow activated last.
    public var presentingFlow: FlowID? {
        flows.filter { $0.value.status == .active }.max { $0.value.activation < $1.value.activation }?.key
    }
}

/// One flow's record (status, version it last finished in) and its current run.
public struct FlowState: Codable, Equatable, Sendable {
    public var status: FlowStatus = .notStarted
    /// The steps included in this run, decided when it started.
    public var plan: [StepID] = []
    /// Index into ``plan`` of the step showing.
    public var position: Int = 0
    /// Values entered in this run. Secrets appear only as "‹redacted›".
    public var fields: [String: TourValue] = [:]
    /// Answers to the current step's gates.
    public var gates: [String: GateStatus] = [:]
    /// Actions done on the current step (for staged steps).
    public var performed: [String] = []
    /// When a triggered flow is due to appear (a delay, or waiting for another flow to end).
    public var pendingStart: Date?
    /// When the current step completes by itself.
    public var deadline: Date?
    /// Increases each time a flow becomes active; the highest active one presents.
    public var activation: Int = 0
    /// The app version when the flow last finished: the "last tour version" of update prompts.
    public var finishedInVersion: String?
    /// Set while a replay runs that must leave the record as it was.
    public var replayOf: RecordSnapshot?

    public init() {}

    public var currentStep: StepID? {
        status == .active && plan.indices.contains(position) ? plan[position] : nil
    }
}

/// The part of a flow's state that a non-recording replay restores when it ends.
public struct RecordSnapshot: Codable, Equatable, Sendable {
    public var status: FlowStatus
    public var finishedInVersion: String?
}
