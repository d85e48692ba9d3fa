#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Adopting what the account's other devices did to a user-scoped flow.
extension Reduction {
    /// The account finished the flow elsewhere: it is finished here too, and a run showing here
    /// ends (dismissed, journalled as `flowEnded(finishedElsewhere)`). A reset the account saw after
    /// that clears a finished record. A flow the account has only shown changes nothing here: the
    /// tour is still the account's to finish, on whichever device.
    mutating func adopt(_ record: AccountFlowRecord, for id: FlowID) throws(TourRefusal) {
        let accountFlows = catalog.flows.filter { $0.scope == .user }
        guard let flow = accountFlows.first(where: { $0.id == id }) else {
            let names = accountFlows.map({ $0.id.rawValue })
            throw refusal(
                "account record for \(id)", "not a flow kept per account", code: .unknownFlow, allowed: names,
                listing: .init(
                    label: "Flows kept per account", whenEmpty: "\(catalog.name) keeps no flow per account"),
                suggestion: NameSuggestion.nearest(to: id.rawValue, in: names))
        }
        if let problem = record.problem {
            throw refusal("account record for \(id)", problem, code: .invalidParameter, allowed: [])
        }
        let current = state[flow: id]
        switch record.standing {
        case .notStarted:
            // A reset on another device: the record goes; a run showing here goes on.
            guard case .finished = current else { return }
            state.flows[id] = nil
            facts.append(.flowReset(flow: id))
            effects += flow.onReset.map { resolve($0, fields: [:], parameters: [:]) }
            notes.append("\(id) reset on another device")
        case .shown:
            return
        case .skipped, .completed:
            let ending = record.standing.ending ?? .completed
            let learned = FlowRecord(ending, version: record.version)
            switch current {
            case .finished(let local) where local == learned:
                return
            case .active(var run) where run.replayOf != nil:
                // A replay keeps showing; when it ends it restores the account's record.
                run.replayOf = .finished(learned)
                state[flow: id] = .active(run)
                notes.append("\(id) replay goes on; the account's record is \(ending.rawValue)")
                return
            case .active(let run):
                effects.append(.dismissed(id))
                notes.append(
                    """
                    \(id) \(ending.rawValue) on another device; ended here at \
                    \(run.currentStep?.rawValue ?? "-")
                    """
                )
            case .notStarted, .finished:
                notes.append("\(id) \(ending.rawValue) on another device")
            }
            // The product's own record of the ending (Growth's tourStatus); no haptics or
            // celebration: nothing was shown here.
            let templates = ending == .completed ? flow.onComplete : flow.onSkip
            effects += templates.map { resolve($0, fields: current.fields, parameters: [:]) }.filter {
                if case .product = $0 { true } else { false }
            }
            state[flow: id] = .finished(learned)
            facts.append(
                .flowEnded(
                    flow: id, ending: .finishedElsewhere, recorded: ending.status, version: record.version))
        }
    }
}
