import Persistence
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Per flow, across users, from the journal: how many started, completed and skipped, where the
/// ones who did not finish stopped, and how long each step took (the median).
public struct FlowFunnel: Codable, Equatable, Sendable {
    public struct StepFigures: Codable, Equatable, Sendable {
        public var step: StepID
        /// Runs that reached the step.
        public var reached: Int
        /// Runs that ended here without completing: skipped here, or dropped by a relaunch or reset.
        public var droppedOff: Int
        /// Runs still open at this step (the user has not finished or left the flow yet).
        public var inProgress: Int
        /// The median seconds from entering the step to leaving it, over the runs that left it.
        public var medianSeconds: Double?
        /// True for a step an earlier catalog version had and this one removed.
        public var removed: Bool?
    }

    public var flow: FlowID
    public var name: String
    public var started: Int
    public var completed: Int
    public var skipped: Int
    /// Runs still open (the user left mid-flow).
    public var inProgress: Int
    public var completionRate: Double?
    public var skipRate: Double?
    public var steps: [StepFigures]
    /// Journal rows left out because they carry no facts (written before 0.6.0, not derivable).
    public var rowsWithoutFacts: Int?
    /// Times the family's display budget held the flow back when its trigger fired (nil: none).
    public var deferredByBudget: Int?

    /// Computes the funnels of every flow of `engine`'s catalog from the facts of one app's journal
    /// rows. Steps of runs under an earlier catalog version count as the steps they became; steps
    /// since removed are listed after the current ones. Runs started before `since` are left out.
    /// Rows without facts (written before 0.6.0 and not derived) are counted in ``rowsWithoutFacts``.
    public static func compute(app: String, engine: TourEngine, rows: [JournalEntry], since: Date? = nil)
        throws
        -> [FlowFunnel]
    {
        let (runs, withoutFacts, held) = collectRuns(
            app: app, catalog: engine.catalog, rows: rows, group: { _ in "" })
        return funnels(engine.catalog, runs: runs, held: held, since: since, withoutFacts: withoutFacts)
    }

    /// The funnels of each group of runs, a run being in the group `group` gives the journal row
    /// that started it (the accessibility settings it started with, say), groups in order of name.
    public static func compute(
        app: String, engine: TourEngine, rows: [JournalEntry], since: Date? = nil,
        groupedBy group: (JournalEntry) -> String
    ) -> [(group: String, funnels: [FlowFunnel])] {
        let (runs, withoutFacts, held) = collectRuns(
            app: app, catalog: engine.catalog, rows: rows, group: group)
        let groups = Set(runs.values.flatMap { $0.map(\.group) }).sorted()
        return groups.map { name in
            (
                name,
                funnels(
                    engine.catalog, runs: runs.mapValues { $0.filter { $0.group == name } },
                    held: held.mapValues { $0.filter { $0.group == name } }, since: since,
                    withoutFacts: withoutFacts)
            )
        }
    }

    struct Run {
        var version: Int
        var group: String
        var steps: [(step: StepID, entered: Date)] = []
        var ended: (status: FlowStatus, at: Date)?
    }

    /// Every run in the journal, by flow, with the group of the row that started it.
    static func collectRuns(
        app: String, catalog: TourCatalog, rows: [JournalEntry], group: (JournalEntry) -> String
    ) -> (runs: [FlowID: [Run]], withoutFacts: Int, held: [FlowID: [(group: String, at: Date)]]) {
        var runs: [FlowID: [Run]] = [:]
        var held: [FlowID: [(group: String, at: Date)]] = [:]
        var open: [String: (flow: FlowID, run: Run)] = [:]  // by flow and subject
        var replaying: Set<String> = []
        var withoutFacts = 0
        for row in rows {
            guard let facts = row.facts else {
                withoutFacts += 1
                continue
            }
            for fact in facts {
                let scope = catalog.flow(fact.flow)?.scope ?? .install
                let key = "\(fact.flow) \(SessionKey(app: app, user: row.user).subject(for: scope))"
                switch fact {
                case .flowStarted(let flow, _, let version, let replay):
                    if replay {
                        replaying.insert(key)
                        continue
                    }
                    if var entry = open[key] {
                        entry.run.ended = (.notStarted, row.time)
                        runs[entry.flow, default: []].append(entry.run)
                    }
                    open[key] = (flow, Run(version: version, group: group(row)))
                case .stepEntered(_, let step, _):
                    guard !replaying.contains(key), var entry = open[key] else { continue }
                    let id = catalog.currentStepID(step, of: entry.flow, since: entry.run.version) ?? step
                    entry.run.steps.append((id, row.time))
                    open[key] = entry
                case .runMigrated(_, _, let toVersion, _, _, _, .moved, _):
                    open[key]?.run.version = toVersion
                case .flowEnded(_, let ending, _, _):
                    if replaying.remove(key) != nil { continue }
                    guard var entry = open[key] else { continue }
                    let status: FlowStatus =
                        switch ending {
                        case .completed: .completed
                        case .skipped, .dismissed: .skipped
                        case .dropped, .finishedElsewhere, .heldOut: .notStarted
                        }
                    entry.run.ended = (status, row.time)
                    runs[entry.flow, default: []].append(entry.run)
                    open[key] = nil
                case .budgetHeld(let flow, _, _):
                    held[flow, default: []].append((group(row), row.time))
                case .stepCompleted, .gateAnswered, .flowReset, .runMigrated, .assigned, .exposed,
                    .goalReached,
                    .budgetSpent:
                    continue
                }
            }
        }
        for entry in open.values { runs[entry.flow, default: []].append(entry.run) }
        return (runs, withoutFacts, held)
    }

    static func funnels(
        _ catalog: TourCatalog, runs: [FlowID: [Run]], held: [FlowID: [(group: String, at: Date)]],
        since: Date?,
        withoutFacts: Int
    ) -> [FlowFunnel] {
        catalog.flows.map { flow in
            let counted = (runs[flow.id] ?? []).filter { run in
                guard let since, let first = run.steps.first else { return true }
                return first.entered >= since
            }
            let completed = counted.filter { $0.ended?.status == .completed }.count
            let skipped = counted.filter { $0.ended?.status == .skipped }.count
            let current = flow.steps.map({ $0.id })
            var retired: [StepID] = []
            for run in counted {
                for entry in run.steps where !current.contains(entry.step) && !retired.contains(entry.step) {
                    retired.append(entry.step)
                }
            }
            let steps = (current + retired).map { step -> StepFigures in
                var durations: [Double] = []
                var reached = 0
                var dropped = 0
                var open = 0
                for run in counted {
                    guard let index = run.steps.lastIndex(where: { $0.step == step }) else { continue }
                    reached += 1
                    let left = index + 1 < run.steps.count ? run.steps[index + 1].entered : run.ended?.at
                    if let left { durations.append(left.timeIntervalSince(run.steps[index].entered)) }
                    guard index + 1 == run.steps.count else { continue }
                    switch run.ended?.status {
                    case nil: open += 1
                    case .completed?: break
                    default: dropped += 1
                    }
                }
                durations.sort()
                let median =
                    durations.isEmpty
                    ? nil
                    : durations.count % 2 == 1
                        ? durations[durations.count / 2]
                        : (durations[durations.count / 2 - 1] + durations[durations.count / 2]) / 2
                return StepFigures(
                    step: step, reached: reached, droppedOff: dropped, inProgress: open,
                    medianSeconds: median,
                    removed: current.contains(step) ? nil : true)
            }
            let started = counted.count
            let deferred = (held[flow.id] ?? []).filter { entry in since.map { entry.at >= $0 } ?? true }
                .count
            return FlowFunnel(
                flow: flow.id, name: flow.name, started: started, completed: completed, skipped: skipped,
                inProgress: counted.filter { $0.ended == nil }.count,
                completionRate: started == 0 ? nil : Double(completed) / Double(started),
                skipRate: started == 0 ? nil : Double(skipped) / Double(started), steps: steps,
                rowsWithoutFacts: withoutFacts == 0 ? nil : withoutFacts,
                deferredByBudget: deferred == 0 ? nil : deferred)
        }
    }
}
