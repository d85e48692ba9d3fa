/// A publication raised through stages by a service, and rolled back by it when a guardrail shows
/// a drop: LaunchDarkly's "guarded rollouts", for a flow.
///
/// The value is the whole lifecycle; ``decide(_:now:)`` is its one transition. The service that
/// runs it (the server's rollout guard) only reads the evidence, calls `decide` and performs the
/// decision, so every rule here is tested without a server, a clock or a thread.
///
/// The guardrail compares the subjects who started the flow on the publication (the candidate)
/// with those who started it, over the same period, on the version it replaces (the baseline):
/// the share who completed the flow, or who reached a chosen step. The comparison is
/// ``AlwaysValid``'s confidence sequence, so the service may look after every push without its
/// error rate growing with the looks:
///
/// - a **drop** is shown when the whole interval of (candidate − baseline) lies below minus the
///   tolerance: the rollout is rolled back at once, at any stage, whatever its minimums;
/// - a stage is **passed** when its minimum time and its minimum of new candidate subjects are met
///   and no drop is shown: the rollout goes to the next stage (or, at the last, is complete).
public struct GuardedRollout: Equatable, Sendable {
    /// What a publisher asks for: `--stages 5,25,50,100 --guard completion:-2pp`.
    public struct Plan: Equatable, Sendable {
        /// Rising percentages, 1 to 100; the last is where the rollout ends.
        public var stages: [Int]
        /// The least time a stage lasts, in seconds.
        public var minimumSeconds: Double
        /// The least number of subjects who start the flow on the publication during a stage.
        public var minimumSubjects: Int
        public var guardrail: Guardrail

        public init(stages: [Int], minimumSeconds: Double, minimumSubjects: Int, guardrail: Guardrail) {
            self.stages = stages
            self.minimumSeconds = minimumSeconds
            self.minimumSubjects = minimumSubjects
            self.guardrail = guardrail
        }

        /// A plan as people type it (`--stages 5,25,50,100 --guard completion:-2pp --stage-time 1d
        /// --stage-subjects 500`, or the studio's fields), or every problem with it, each saying
        /// what is allowed. An empty `flow` is the document's first.
        public static func read(
            stages: String, guardrail: String, flow: String = "", stageTime: String = "1d",
            stageSubjects: String = "500"
        ) -> Result<Plan, Refusal> {
            func trimmed(_ text: some StringProtocol) -> String {
                String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
            }
            var problems: [String] = []
            let percentages = stages.split(separator: ",", omittingEmptySubsequences: false).map {
                Int(trimmed($0))
            }
            if percentages.contains(nil) {
                problems.append(
                    """
                    the stages are rising percentages separated by commas, as 5,25,50,100 (got '\
                    \(stages.prefix(100))')
                    """
                )
            }
            let parsed = Guardrail(trimmed(guardrail), flow: flow)
            if parsed == nil {
                problems.append("the guard is \(Guardrail.grammar) (got '\(guardrail.prefix(100))')")
            }
            let seconds = GuardedRollout.seconds(trimmed(stageTime))
            if seconds == nil {
                problems.append(
                    "a stage's time is a duration as 90s, 30m, 12h or 1d (got '\(stageTime.prefix(100))')")
            }
            let subjects = Int(trimmed(stageSubjects))
            if subjects == nil {
                problems.append("a stage's subjects are a whole number (got '\(stageSubjects.prefix(100))')")
            }
            guard problems.isEmpty, let parsed, let seconds, let subjects else {
                return .failure(Refusal(problems: problems))
            }
            let plan = Plan(
                stages: percentages.compactMap { $0 }, minimumSeconds: seconds, minimumSubjects: subjects,
                guardrail: parsed)
            return plan.problems.isEmpty ? .success(plan) : .failure(Refusal(problems: plan.problems))
        }

        /// Why a plan as typed is refused.
        public struct Refusal: Error, Equatable, Sendable {
            public var problems: [String]
            public var message: String { problems.joined(separator: "; ") }
        }

        /// Every problem with the plan, each saying what is allowed; empty when it is sound.
        public var problems: [String] {
            var problems: [String] = []
            if stages.isEmpty || stages.count > 10 {
                problems.append(
                    "the stages are 1 to 10 rising percentages, as 5,25,50,100 (got \(stages.count))")
            } else if stages.contains(where: { !(1...100).contains($0) })
                || zip(stages, stages.dropFirst()).contains(where: { $0 >= $1 })
            {
                problems.append(
                    """
                    the stages are rising percentages from 1 to 100, as 5,25,50,100 (got \
                    \(stages.map(String.init).joined(separator: ",")))
                    """
                )
            }
            if !minimumSeconds.isFinite || minimumSeconds < 0 || minimumSeconds > 90 * 86_400 {
                problems.append("a stage's minimum time is 0 to 90 days")
            }
            if !(0...10_000_000).contains(minimumSubjects) {
                problems.append("a stage's minimum of subjects is 0 to 10,000,000 (got \(minimumSubjects))")
            }
            problems += guardrail.problems
            return problems
        }
    }

    /// The figure that must not drop, and by how much it may.
    public struct Guardrail: Equatable, Sendable {
        public enum Metric: Equatable, Sendable {
            /// The share of the flow's starters who completed it.
            case completion
            /// The share of the flow's starters who reached the step.
            case step(String)
        }

        public var metric: Metric
        /// The flow whose starters are compared (empty until the publication names its first).
        public var flow: String
        /// The drop tolerated, in rate points (0.02: two percentage points).
        public var tolerance: Double

        public init(metric: Metric, flow: String, tolerance: Double) {
            self.metric = metric
            self.flow = flow
            self.tolerance = tolerance
        }

        /// The accepted spellings: `completion:-2pp`, `step:NAME:-1.5pp` (the sign may be left out).
        public static let grammar =
            "completion:-Npp or step:STEP:-Npp (N, the drop tolerated, 0 to 50 percentage points)"

        /// Reads `completion:-2pp` or `step:paywall:-1pp` for `flow`; nil when it is not one.
        public init?(_ text: String, flow: String) {
            var parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 || parts.count == 3, var drop = parts.popLast(), drop.hasSuffix("pp")
            else { return nil }
            drop.removeLast(2)
            if drop.hasPrefix("-") { drop.removeFirst() }
            guard let points = Double(drop), points.isFinite, (0...50).contains(points) else { return nil }
            switch (parts.first, parts.count) {
            case ("completion", 1): metric = .completion
            case ("step", 2) where !parts[1].isEmpty: metric = .step(parts[1])
            default: return nil
            }
            self.flow = flow
            tolerance = points / 100
        }

        /// As the publisher wrote it: `completion:-2pp`.
        public var text: String {
            let points = (tolerance * 100 * 1000).rounded() / 1000
            let number = points == points.rounded() ? String(Int(points)) : String(points)
            switch metric {
            case .completion: return "completion:-\(number)pp"
            case .step(let step): return "step:\(step):-\(number)pp"
            }
        }

        /// In words, for pages and audit rows.
        public var summary: String {
            let what: String
            switch metric {
            case .completion: what = flow.isEmpty ? "completion of the flow" : "completion of \(flow)"
            case .step(let step): what = flow.isEmpty ? "reaching \(step)" : "reaching \(step) in \(flow)"
            }
            return "\(what) may drop by at most \(Self.points(tolerance))"
        }

        var problems: [String] {
            // An empty flow is the document's first, which only the document knows.
            var problems: [String] = []
            if !tolerance.isFinite || !(0...0.5).contains(tolerance) {
                problems.append("the guardrail is \(Self.grammar)")
            }
            return problems
        }

        public static func points(_ rate: Double) -> String {
            let points = (rate * 1000).rounded() / 10
            return (points == points.rounded() ? String(Int(points)) : String(points)) + " pts"
        }
    }

    /// Where the rollout is in its life.
    public enum Status: String, Equatable, Sendable, CaseIterable {
        /// The service raises it and guards it.
        case running
        /// A person stopped the service acting on it; the rollout stays where it is.
        case paused
        /// It reached its last stage with no drop shown.
        case complete
        /// The service withdrew it: the guardrail showed a drop.
        case rolledBack = "rolled-back"
        /// A person ended the guard; the rollout stays where it is, in people's hands.
        case ended
    }

    /// What the guardrail compares: who started the flow on each version since the rollout began,
    /// and how many of them completed it (or reached the step).
    public struct Evidence: Equatable, Sendable {
        public var candidate: Proportion
        public var baseline: Proportion

        public init(candidate: Proportion, baseline: Proportion) {
            self.candidate = candidate
            self.baseline = baseline
        }

        /// The candidate's rate minus the baseline's, always valid; nil until both have subjects.
        public var difference: AlwaysValid.Difference? { AlwaysValid.difference(candidate, to: baseline) }
    }

    /// What the service does after a look.
    public enum Decision: Equatable, Sendable {
        /// Nothing yet; the reason says what it waits for.
        case wait(String)
        /// Raise the publication's rollout to the next stage's percentage.
        case raise(to: Int)
        /// The last stage is passed: the rollout stays at its percentage, and the guard is done.
        case complete
        /// Withdraw the publication: the guardrail shows a drop beyond the tolerance.
        case rollBack
        /// The guard does not act: it is paused, ended or done.
        case none
    }

    public var plan: Plan
    public var status: Status
    /// The index in `plan.stages` of the stage the rollout is at.
    public var stage: Int
    /// When the current stage began (seconds since 1970).
    public var stageSince: Double
    /// The candidate's subjects when the current stage began.
    public var subjectsAtStageStart: Int

    /// A rollout just published at its first stage.
    public init(plan: Plan, at time: Double) {
        self.init(plan: plan, status: .running, stage: 0, stageSince: time, subjectsAtStageStart: 0)
    }

    public init(plan: Plan, status: Status, stage: Int, stageSince: Double, subjectsAtStageStart: Int) {
        self.plan = plan
        self.status = status
        self.stage = stage
        self.stageSince = stageSince
        self.subjectsAtStageStart = subjectsAtStageStart
    }

    /// The percentage the publication is at.
    public var percent: Int { plan.stages[min(max(stage, 0), plan.stages.count - 1)] }

    /// Whether the evidence shows a drop beyond the tolerance.
    public func showsDrop(_ evidence: Evidence) -> Bool {
        guard let difference = evidence.difference else { return false }
        return difference.interval.upperBound < -plan.guardrail.tolerance
    }

    /// The one transition: after a look at `evidence` at `now`, the next value and what to do.
    public func decide(_ evidence: Evidence, now: Double) -> (GuardedRollout, Decision) {
        guard status == .running else { return (self, .none) }
        var next = self
        if showsDrop(evidence) {
            next.status = .rolledBack
            return (next, .rollBack)
        }
        let newSubjects = evidence.candidate.trials - subjectsAtStageStart
        let remainingSeconds = stageSince + plan.minimumSeconds - now
        let remainingSubjects = plan.minimumSubjects - newSubjects
        guard remainingSeconds <= 0, remainingSubjects <= 0 else {
            var waits: [String] = []
            if remainingSubjects > 0 {
                waits.append(
                    """
                    \(remainingSubjects) more subject\(remainingSubjects == 1 ? "" : "s") starting \
                    \(plan.guardrail.flow) on it
                    """
                )
            }
            if remainingSeconds > 0 { waits.append("\(Self.duration(remainingSeconds)) more at this stage") }
            return (self, .wait(waits.joined(separator: " and ")))
        }
        guard stage + 1 < plan.stages.count else {
            next.status = .complete
            return (next, .complete)
        }
        next.stage += 1
        next.stageSince = now
        next.subjectsAtStageStart = evidence.candidate.trials
        return (next, .raise(to: plan.stages[next.stage]))
    }

    /// What a person may do to it: pause a running one, resume a paused one, end either.
    public enum Command: String, Equatable, Sendable, CaseIterable {
        case pause, resume, end
    }

    /// The value after a person's command, or nil with what is allowed when it does not apply.
    /// Resuming starts the stage's clock again: the time paused is not time guarded.
    public func applying(_ command: Command, now: Double) -> Result<GuardedRollout, CommandRefusal> {
        var next = self
        switch (command, status) {
        case (.pause, .running): next.status = .paused
        case (.resume, .paused):
            next.status = .running
            next.stageSince = now
        case (.end, .running), (.end, .paused): next.status = .ended
        default:
            let applies =
                command == .resume
                ? "a paused one"
                : command == .pause
                    ? "a running one"
                    : """
                    a running or paused one
                    """
            return .failure(
                CommandRefusal(
                    message: """
                        the guarded rollout is \(status.rawValue); \(command.rawValue) applies to \(applies)
                        """))
        }
        return .success(next)
    }

    public struct CommandRefusal: Error, Equatable, Sendable {
        public var message: String
    }

    /// "2 h 5 min", "40 s": a wait, rounded up to what a person reads.
    public static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole) s" }
        if whole < 3_600 { return "\((whole + 59) / 60) min" }
        if whole < 86_400 { return "\(whole / 3_600) h \((whole % 3_600 + 59) / 60) min" }
        return "\(whole / 86_400) d \((whole % 86_400 + 3_599) / 3_600) h"
    }

    /// Reads `90`, `90s`, `30m`, `2h`, `1d` as seconds; nil when it is not one.
    public static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        var number = text
        var unit = 1.0
        if let last = text.last, let factor = units[last] {
            number.removeLast()
            unit = factor
        }
        guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
        return value * unit
    }
}
