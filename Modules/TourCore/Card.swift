/// The card a UI shows now: content with the fields filled in, progress, the actions allowed now.
public struct Card: Codable, Equatable, Sendable {
    public var flow: FlowID
    public var step: StepID
    public var title: String
    public var body: String
    public var hint: String?
    public var details: [String]
    /// Success, warning or error lines from gates and the last answers ("Screen Time access granted").
    public var notices: [String]
    /// The UI element to spotlight, after the fallback rule.
    public var anchor: String?
    public var highlightPadding: Double?
    public var popover: PopoverPosition?
    public var progress: Progress?
    public var actions: [CardAction]
    /// When the step completes by itself, if it does.
    public var autoAdvanceAt: Double?
    /// True while a replay runs that will not change the record.
    public var isReplay: Bool
}

public struct CardAction: Codable, Equatable, Sendable {
    public var name: String
    public var label: String?
}

/// "Step 2 of 5".
public struct Progress: Codable, Equatable, Sendable, CustomStringConvertible {
    public var step: Int
    public var total: Int
    public var description: String { "Step \(step) of \(total)" }
}

/// One flow as a status line shows it.
public struct FlowSummary: Codable, Equatable, Sendable {
    public var id: FlowID
    public var name: String
    public var status: FlowStatus
    public var step: StepID?
    /// 1-based position in the run; nil when not active.
    public var stepIndex: Int?
    public var stepCount: Int?
    public var canSkip: Bool
    public var canGoBack: Bool
    public var actions: [String]
    /// Seconds since 1970 at which a triggered flow is due to appear.
    public var startsAt: Double?
    public var finishedInVersion: String?
}
