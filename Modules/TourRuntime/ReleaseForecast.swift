import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a catalog will do to the runs stored in a database (`APP check --against OLD.sqlite`):
/// per flow and step, how many subjects (users, or installs for install-scoped flows) stay where
/// they are, move to another step, start again or finish when the release lands. Computed by the
/// engine's own migration (``TourEngine/pendingMigrations(in:context:)``), so the forecast and what
/// the next event does cannot disagree.
public struct ReleaseForecast: Codable, Equatable, Sendable {
    public enum Outcome: String, Codable, Sendable, CaseIterable {
        /// Already under this catalog version: nothing moves.
        case stays
        /// Placed on its step under a new name, or on the next step after a removed one.
        case moved
        /// Its step cannot be placed (or its removal says restart): the flow starts again.
        case restarted
        /// Its step was removed and was the last the user had left: the flow completes.
        case finished
        /// Its flow is not in this catalog: the run ends without a record.
        case ended
    }

    /// Runs of one flow, from one step under one catalog version, that meet the same outcome.
    public struct Group: Codable, Equatable, Sendable {
        public var flow: FlowID
        public var fromVersion: Int
        public var fromStep: StepID?
        public var outcome: Outcome
        public var toStep: StepID?
        /// Moved by the flow's `unplacedStep` policy: no declared migration places its step (or
        /// the catalog changed without a new version). `check` refuses such a release.
        public var undeclared: Bool
        public var subjects: Int
    }

    /// Flows not started or finished, of one flow and status: a release does not touch these.
    public struct Record: Codable, Equatable, Sendable {
        public var flow: FlowID
        public var status: FlowStatus
        public var subjects: Int

        public init(flow: FlowID, status: FlowStatus, subjects: Int) {
            self.flow = flow
            self.status = status
            self.subjects = subjects
        }
    }

    public var catalogVersion: Int
    /// Runs in progress, grouped.
    public var groups: [Group]
    /// Records not in progress, per flow and status.
    public var records: [Record]

    public init(engine: TourEngine, stored: [String: [FlowID: FlowState]]) {
        let catalog = engine.catalog
        var counts: [Group: Int] = [:]
        var records: [FlowID: [FlowStatus: Int]] = [:]
        for flows in stored.values {
            let state = TourState(flows: flows)
            var moves: [FlowID: TourFact] = [:]
            for fact in engine.pendingMigrations(in: state) { moves[fact.flow] = fact }
            for (flow, flowState) in flows {
                guard let run = flowState.run else {
                    records[flow, default: [:]][flowState.status, default: 0] += 1
                    continue
                }
                var group = Group(
                    flow: flow, fromVersion: run.catalogVersion, fromStep: run.currentStep, outcome: .stays,
                    toStep: run.currentStep, undeclared: false, subjects: 0)
                if case .runMigrated(_, _, _, _, let toStep, _, let outcome, let undeclared)? = moves[flow] {
                    group.toStep = toStep
                    group.undeclared = undeclared
                    group.outcome =
                        switch outcome {
                        case .moved: .moved
                        case .restarted: .restarted
                        case .finished: .finished
                        case .dropped: .ended
                        }
                }
                counts[group, default: 0] += 1
            }
        }
        let order = Dictionary(uniqueKeysWithValues: catalog.flows.enumerated().map { ($1.id, $0) })
        self.catalogVersion = catalog.version
        self.records = catalog.flows.flatMap { flow in
            FlowStatus.allCases.compactMap { status in
                records[flow.id]?[status].map { Record(flow: flow.id, status: status, subjects: $0) }
            }
        }
        self.groups = counts.map { group, count in
            var group = group
            group.subjects = count
            return group
        }.sorted {
            ((order[$0.flow] ?? .max), $0.flow.rawValue, $0.fromVersion, $0.fromStep?.rawValue ?? "")
                < ((order[$1.flow] ?? .max), $1.flow.rawValue, $1.fromVersion, $1.fromStep?.rawValue ?? "")
        }
    }
}

extension ReleaseForecast.Group: Hashable {}
