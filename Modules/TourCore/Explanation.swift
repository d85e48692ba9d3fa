import TourCodec

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A condition with its value now, and the values of its parts: the "why" of a trigger or an
/// included step.
public struct ConditionExplanation: Codable, Equatable, Sendable {
    public var text: String
    public var holds: Bool
    public var parts: [ConditionExplanation]

    /// One line: the condition and its value, parts nested in brackets.
    public var line: String { "\(text) = \(holds ? "yes" : "no")" }
}

extension Condition {
    /// The condition as people read it ("onboardingComplete", "not tourSeenInProfile").
    public var summary: String {
        switch self {
        case .always: "always"
        case .never: "never"
        case .flag(let key): key
        case .atLeast(let key, let minimum): "\(key) ≥ \(minimum)"
        case .flowCompleted(let flow): "\(flow) completed"
        case .flowFinished(let flow): "\(flow) finished"
        case .upgradedInto(let version, _): "upgraded into \(version)"
        case .lastTourOlder(let version, _): "last tour older than \(version)"
        case .not(let condition): "not \(condition.summary)"
        case .all(let conditions): conditions.map(\.summary).joined(separator: " and ")
        case .any(let conditions): "(" + conditions.map(\.summary).joined(separator: " or ") + ")"
        }
    }

    /// The condition and its value now, with the facts it reads.
    public func explain(context: TourContext, state: TourState) -> ConditionExplanation {
        let holds = holds(context: context, state: state)
        switch self {
        case .always, .never:
            return ConditionExplanation(text: summary, holds: holds, parts: [])
        case .flag(let key):
            let value = context[key]?.plainText ?? "unset"
            return ConditionExplanation(text: "\(key) (is \(value))", holds: holds, parts: [])
        case .atLeast(let key, let minimum):
            let value = context[key]?.plainText ?? "unset"
            return ConditionExplanation(text: "\(key) ≥ \(minimum) (is \(value))", holds: holds, parts: [])
        case .flowCompleted(let flow), .flowFinished(let flow):
            let status = state.flows[flow]?.status ?? .notStarted
            return ConditionExplanation(
                text: "\(summary) (\(flow) is \(status.rawValue))", holds: holds, parts: [])
        case .upgradedInto(let version, let tourFlows):
            let last = state.lastTourVersion(tourFlows)
            let facts =
                """
                last tour finished in \(last ?? "no version: a fresh install"), app version \
                \(state.appVersion ?? "unknown")
                """
            return ConditionExplanation(text: "upgraded into \(version) (\(facts))", holds: holds, parts: [])
        case .lastTourOlder(let version, let tourFlows):
            let last = state.lastTourVersion(tourFlows) ?? "no version"
            return ConditionExplanation(
                text: "last tour older than \(version) (last tour finished in \(last))", holds: holds,
                parts: [])
        case .not(let condition):
            return ConditionExplanation(
                text: "not", holds: holds, parts: [condition.explain(context: context, state: state)])
        case .all(let conditions):
            return ConditionExplanation(
                text: "all of", holds: holds,
                parts: conditions.map { $0.explain(context: context, state: state) })
        case .any(let conditions):
            return ConditionExplanation(
                text: "any of", holds: holds,
                parts: conditions.map { $0.explain(context: context, state: state) })
        }
    }
}

/// Why a flow shows, will show or will not show for this user now.
public struct FlowExplanation: Codable, Equatable, Sendable {
    public struct TriggerExplanation: Codable, Equatable, Sendable {
        /// "launch", "signal revealCompleted", "visit dashboard".
        public var moment: String
        public var delay: Double
        public var condition: ConditionExplanation
    }

    public var flow: FlowID
    public var name: String
    public var status: FlowStatus
    /// One of: showing, dueSoon, waiting, eligible, heldByBudget, notShown, never.
    public var verdict: String
    /// The verdict as a sentence.
    public var reason: String
    public var step: StepID?
    public var finishedInVersion: String?
    public var startsAt: Double?
    public var triggers: [TriggerExplanation]
    /// When the display budget that holds the flow back is free again (seconds since 1970).
    public var budgetFreeAt: Double?
}

extension TourEngine {
    /// Each flow of the catalog, in order: why it will or will not show for this state now, and,
    /// with the family's `budget` at `now`, whether the display budget holds it back.
    public func explain(
        _ state: TourState, context: TourContext = [:], budget: BudgetInput = .unlimited, at now: Date? = nil
    ) -> [FlowExplanation] {
        explainTriggers(state, context: context).map { explanation in
            guard let limits = budget.budget, let now, ["eligible", "dueSoon"].contains(explanation.verdict),
                let flow = catalog.flow(explanation.flow),
                case .held(let until, let reason) = limits.verdict(
                    for: flow.budget, ledger: budget.ledger, now: now)
            else { return explanation }
            var held = explanation
            held.verdict = "heldByBudget"
            held.budgetFreeAt = until?.timeIntervalSince1970
            held.reason =
                "held back by the display budget (\(flow.budget.rawValue) priority): \(reason); "
                + (until.map { "free again at \(ISOTime.wholeSeconds($0.timeIntervalSince1970))" }
                    ?? "not while the budget allows none")
            return held
        }
    }

    private func explainTriggers(_ state: TourState, context: TourContext) -> [FlowExplanation] {
        catalog.flows.map { flow in
            let run = state[flow: flow.id]
            let triggers = flow.triggers.map { trigger in
                FlowExplanation.TriggerExplanation(
                    moment: trigger.moment.summary, delay: trigger.delay,
                    condition: trigger.when.explain(context: context, state: state))
            }
            let verdict: String
            let reason: String
            switch run.status {
            case .active:
                let showing = state.presentingFlow == flow.id
                verdict = showing ? "showing" : "waiting"
                reason =
                    showing
                    ? "showing now at step \(run.currentStep?.rawValue ?? "?")"
                    : """
                    started, under \(state.presentingFlow?.rawValue ?? "another flow"), \
                    at step \(run.currentStep?.rawValue ?? "?")
                    """
            case .completed, .skipped:
                verdict = "notShown"
                let version = run.finishedInVersion.map { " in version \($0)" } ?? ""
                let again =
                    flow.replay == .notReplayable ? "it cannot be replayed" : "only a replay shows it again"
                reason = "not shown: \(run.status.rawValue)\(version); \(again)"
            case .notStarted:
                if run.pendingStart != nil {
                    verdict = "dueSoon"
                    reason =
                        state.presentingFlow.map { "triggered; shows when \($0) ends" }
                        ?? "triggered; shows when its start delay ends"
                } else if triggers.isEmpty {
                    verdict = "never"
                    reason = "no trigger: only a replay shows it"
                } else if let ready = triggers.first(where: { $0.condition.holds }) {
                    verdict = "eligible"
                    reason = "will show on \(ready.moment)\(ready.delay > 0 ? " after \(ready.delay) s" : "")"
                } else {
                    verdict = "notShown"
                    reason =
                        "not shown yet: "
                        + triggers.map { "\($0.moment) waits for \(flowCondition($0.condition))" }.joined(
                            separator: "; ")
                }
            }
            return FlowExplanation(
                flow: flow.id, name: flow.name, status: run.status, verdict: verdict, reason: reason,
                step: run.currentStep, finishedInVersion: run.finishedInVersion,
                startsAt: run.pendingStart?.timeIntervalSince1970, triggers: triggers, budgetFreeAt: nil)
        }
    }

    private func flowCondition(_ explanation: ConditionExplanation) -> String {
        let failing = explanation.parts.isEmpty ? [explanation] : explanation.parts.filter { !$0.holds }
        return failing.map {
            $0.parts.isEmpty ? $0.text : "\($0.text) \($0.parts.map(\.text).joined(separator: ", "))"
        }
        .joined(separator: " and ")
    }
}

extension Trigger.Moment {
    public var summary: String {
        switch self {
        case .launch: "launch"
        case .signal(let name): "signal \(name)"
        case .visit(let place): "visit \(place)"
        }
    }
}

extension TourValue {
    /// The value as a sentence shows it: `false`, `42`, `1990-05-01`, `[Instagram, TikTok]`.
    public var plainText: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .int(let value): String(value)
        case .double(let value): value == value.rounded() ? String(Int(value)) : String(value)
        case .string(let value): value
        case .list(let items): "[" + items.map(\.plainText).joined(separator: ", ") + "]"
        case .object(let object):
            "{" + object.keys.sorted().map { "\($0): \(object[$0]?.plainText ?? "")" }.joined(separator: ", ")
                + "}"
        }
    }
}
