import Foundation

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

    /// Computes the funnels of every flow of `engine`'s catalog from the journal rows of one app.
    /// Runs started before `since` are left out (the journal is still folded from its start).
    public static func compute(app: String, engine: TourEngine, rows: [JournalRow], since: Date? = nil) throws
        -> [FlowFunnel]
    {
        struct Run {
            var steps: [(step: StepID, entered: Date)] = []
            var ended: (status: FlowStatus, at: Date)?
        }
        var runs: [FlowID: [Run]] = [:]
        var open: [String: (flow: FlowID, run: Run)] = [:]  // by flow and subject
        try JournalReplay.fold(app: app, engine: engine, rows: rows) { fold in
            let time = fold.row.time
            for flow in engine.catalog.flows {
                let key = "\(flow.id) \(SessionKey(app: app, user: fold.row.user).subject(for: flow.scope))"
                let was = fold.before[flow: flow.id]
                let now = fold.after[flow: flow.id]
                let restarted =
                    was.status == .active && now.status == .active && now.activation != was.activation
                if was.status == .active, now.status != .active || restarted, var entry = open[key] {
                    // The run ended: skipped by the user (whatever the record says), completed, or
                    // dropped (a relaunch that discards or restarts it, a reset).
                    var skipped = false
                    if case .actionPerformed(let name, _) = fold.event, !restarted {
                        let step = was.currentStep.flatMap { id in flow.steps.first { $0.id == id } }
                        skipped = step?.action(named: name)?.outcome == .dismissFlow
                    }
                    let status: FlowStatus =
                        skipped
                        ? .skipped : (now.status == .completed && !restarted ? .completed : .notStarted)
                    entry.run.ended = (status, time)
                    runs[flow.id, default: []].append(entry.run)
                    open[key] = nil
                }
                guard now.status == .active, now.replayOf == nil, let step = now.currentStep else { continue }
                var entry = open[key] ?? (flow.id, Run())
                if entry.run.steps.last?.step != step || was.position != now.position {
                    entry.run.steps.append((step, time))
                }
                open[key] = entry
            }
        }
        for entry in open.values { runs[entry.flow, default: []].append(entry.run) }
        return engine.catalog.flows.map { flow in
            let counted = (runs[flow.id] ?? []).filter { run in
                guard let since, let first = run.steps.first else { return true }
                return first.entered >= since
            }
            let completed = counted.filter { $0.ended?.status == .completed }.count
            let skipped = counted.filter { $0.ended?.status == .skipped }.count
            let steps = flow.steps.map { step -> StepFigures in
                var durations: [Double] = []
                var reached = 0
                var dropped = 0
                var open = 0
                for run in counted {
                    guard let index = run.steps.lastIndex(where: { $0.step == step.id }) else { continue }
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
                    step: step.id, reached: reached, droppedOff: dropped, inProgress: open, medianSeconds: median)
            }
            let started = counted.count
            return FlowFunnel(
                flow: flow.id, name: flow.name, started: started, completed: completed, skipped: skipped,
                inProgress: counted.filter { $0.ended == nil }.count,
                completionRate: started == 0 ? nil : Double(completed) / Double(started),
                skipRate: started == 0 ? nil : Double(skipped) / Double(started), steps: steps)
        }
    }
}
