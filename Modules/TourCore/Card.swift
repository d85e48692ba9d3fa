import TourCodec

/// The card a UI shows now: content with the fields filled in, progress, the actions allowed now.
public struct Card: Equatable, Sendable {
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
    public var progress: StepProgress?
    public var actions: [CardAction]
    /// When the step completes by itself, if it does.
    public var autoAdvanceAt: Double?
    /// True while a replay runs that will not change the record.
    public var isReplay: Bool
    /// ``progress`` as the user reads it, in the catalog's locale: "Step 2 of 5", "Passo 2 de 5".
    public var progressText: String?
}

public struct CardAction: Equatable, Sendable {
    public var name: String
    public var label: String?
}

/// Where a run stands, the one count every output shows: "Step 2 of 5".
///
/// A flow whose last step is a terminal "done" screen (Finite's "You're Ready") leaves it out of
/// the count, as the seed's progress dots do (`totalSteps: allCases.count - 1`): on that screen every
/// step is done ("All 6 steps done") and ``finale`` is true.
public struct StepProgress: Equatable, Sendable, CustomStringConvertible {
    /// 1-based; on the finale, equal to ``total``.
    public var step: Int
    public var total: Int
    /// The terminal screen that the count leaves out is showing.
    public var finale: Bool

    public init(step: Int, total: Int, finale: Bool = false) {
        self.step = step
        self.total = total
        self.finale = finale
    }
    public var description: String {
        finale ? "All \(total) steps done" : "Step \(step) of \(total)"
    }
    /// The same for a status line: "2 of 5", "all 6 done".
    public var short: String { finale ? "all \(total) done" : "\(step) of \(total)" }
}

/// One flow as a status line shows it.
public struct FlowSummary: Equatable, Sendable {
    public var id: FlowID
    public var name: String
    public var status: FlowStatus
    public var step: StepID?
    /// The run's progress as the card shows it (``StepProgress``); nil when not active.
    public var progress: StepProgress?
    /// ``progress``'s step and total, for readers that want two numbers.
    public var stepIndex: Int? { progress?.step }
    public var stepCount: Int? { progress?.total }
    public var canSkip: Bool
    public var canGoBack: Bool
    public var actions: [String]
    /// Seconds since 1970 at which a triggered flow is due to appear.
    public var startsAt: Double?
    public var finishedInVersion: String?
}

// Written by hand (see ``TourValueRepresentable``): absent values are written as `null`, so JSON
// readers always find every key, and a card's actions are written as names with their labels beside
// them.
extension Card: TourValueEncodable {
    public var tourValue: TourValue {
        let labels = Dictionary(actions.compactMap { action in action.label.map { (action.name, $0) } }) {
            first, _ in first
        }
        return [
            "flow": .string(flow.rawValue), "step": .string(step.rawValue), "title": .string(title),
            "body": .string(body),
            "hint": .optional(hint), "details": .strings(details), "notices": .strings(notices),
            "anchor": .optional(anchor),
            "highlightPadding": highlightPadding.map(TourValue.double) ?? .null,
            "popover": .optional(popover?.rawValue),
            "progress": progress?.tourValue ?? .null, "progressText": .optional(progressText),
            "actions": .strings(actions.map({ $0.name })),
            "labels": .object(labels.mapValues(TourValue.string)),
            "autoAdvanceAt": autoAdvanceAt.map(TourValue.double) ?? .null, "isReplay": .bool(isReplay),
        ]
    }
}

extension StepProgress: TourValueEncodable {
    public var tourValue: TourValue { ["step": .int(step), "total": .int(total), "finale": .bool(finale)] }
}

extension FlowSummary: TourValueEncodable {
    public var tourValue: TourValue {
        [
            "id": .string(id.rawValue), "name": .string(name), "status": .string(status.rawValue),
            "step": .optional(step?.rawValue), "stepIndex": stepIndex.map(TourValue.int) ?? .null,
            "stepCount": stepCount.map(TourValue.int) ?? .null, "progress": progress?.tourValue ?? .null,
            "canSkip": .bool(canSkip), "canGoBack": .bool(canGoBack), "actions": .strings(actions),
            "startsAt": startsAt.map(TourValue.double) ?? .null,
            "finishedInVersion": .optional(finishedInVersion),
        ]
    }
}
