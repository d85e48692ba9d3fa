import Persistence
import TourCore

/// The experiments of one app's journal, counted for ``ExperimentReport``: distinct subjects per
/// variant assigned, exposed and reaching the goal (from the `assigned`, `exposed` and
/// `goalReached` facts), and reaching each step (the `stepEntered` facts of runs that are not
/// replays, of users whose assignment the journal holds).
public enum ExperimentTally {
    /// One report per experiment of `catalog` and per experiment the journal assigned that the
    /// catalog no longer has (without a control), in that order.
    public static func reports(app: String, catalog: TourCatalog, rows: [JournalEntry]) -> [ExperimentReport]
    {
        struct Tally {
            var assigned: Set<String> = []
            var exposed: Set<String> = []
            var goal: Set<String> = []
            var steps: [String: Set<String>] = [:]
        }
        var tallies: [String: [String: Tally]] = [:]  // experiment, variant
        var flows: [String: String] = [:]  // experiment, flow
        var order: [String] = catalog.experiments.map(\.experiment.id)
        // The arm of each flow's runs, by flow and the user's subject for it (as stored here).
        var arms: [String: TourFact.ExperimentArm] = [:]
        var replaying: Set<String> = []
        for row in rows {
            for fact in row.facts ?? [] {
                let scope = catalog.flow(fact.flow)?.scope ?? .install
                let key = "\(fact.flow) \(SessionKey(app: app, user: row.user).subject(for: scope))"
                switch fact {
                case .assigned(let flow, let arm):
                    arms[key] = arm
                    flows[arm.experiment] = flow.rawValue
                    if !order.contains(arm.experiment) { order.append(arm.experiment) }
                    tallies[arm.experiment, default: [:]][arm.variant, default: Tally()].assigned.insert(
                        arm.subject)
                case .exposed(_, let arm):
                    tallies[arm.experiment, default: [:]][arm.variant, default: Tally()].exposed.insert(
                        arm.subject)
                case .goalReached(_, let arm):
                    tallies[arm.experiment, default: [:]][arm.variant, default: Tally()].goal.insert(
                        arm.subject)
                case .flowStarted(_, _, _, let replay):
                    if replay { replaying.insert(key) } else { replaying.remove(key) }
                case .flowEnded:
                    replaying.remove(key)
                case .stepEntered(_, let step, _):
                    guard !replaying.contains(key), let arm = arms[key] else { continue }
                    tallies[arm.experiment, default: [:]][arm.variant, default: Tally()].steps[
                        step.rawValue, default: []
                    ]
                    .insert(arm.subject)
                default:
                    continue
                }
            }
        }
        return order.map { id in
            let declared = catalog.experiments.first { $0.experiment.id == id }
            let flow = declared?.flow
            let counts = (tallies[id] ?? [:]).mapValues { tally in
                // Steps in the flow's order, then steps it no longer has.
                let current = flow?.steps.map(\.id.rawValue) ?? []
                let names =
                    current.filter { tally.steps[$0] != nil }
                    + tally.steps.keys.sorted().filter { !current.contains($0) }
                return ExperimentReport.Counts(
                    assigned: tally.assigned.count, exposed: tally.exposed.count,
                    goalReached: tally.goal.count,
                    steps: names.map { ($0, tally.steps[$0]?.count ?? 0) })
            }
            return ExperimentReport(
                experiment: id, flow: flow?.id.rawValue ?? flows[id] ?? "", declared: declared?.experiment,
                counts: counts)
        }
    }
}
