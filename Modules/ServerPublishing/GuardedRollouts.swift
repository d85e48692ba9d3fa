import Foundation
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import TourCodec
import TourCore

/// Guarded rollouts on the server (Docs/Publishing.md, "Guarded rollouts"): each one's plan and
/// where it is (``GuardedRollout``), and every look the rollout guard took at its evidence (the
/// guardrail's interval over time).
///
/// A guarded rollout is created with its publication, in the publication's transaction
/// (``CatalogStore/publish(app:text:rollout:signatures:guarded:by:at:)``); the rollout guard
/// (``RolloutGuard``) moves it; a person pauses, resumes or ends it (``command(_:app:version:by:at:)``).
/// Every change of the publication and of the guard is one transaction with its audit row.
public struct GuardedRollouts: PostgresStore {
    let writes: WritableDatabase
    let reads: ReadOnlyDatabase
    let logger: Logger

    public init(writes: WritableDatabase, reads: ReadOnlyDatabase, logger: Logger) {
        self.writes = writes
        self.reads = reads
        self.logger = logger
    }

    /// v24: the guarded rollouts and their looks (no subject is named in either), and an index of
    /// the journeys by flow, version and start: a look reads the journeys of two versions since the
    /// rollout began, not every journey of the flow.
    package static let v24 = [
        """
        CREATE INDEX insight_journeys_by_version ON insight_journeys (app, flow, catalog_version, started_at)
        """,
        """
        CREATE TABLE guarded_rollouts (
            app TEXT NOT NULL,
            version BIGINT NOT NULL,
            baseline_version BIGINT NOT NULL,
            stages INTEGER[] NOT NULL,
            minimum_seconds DOUBLE PRECISION NOT NULL,
            minimum_subjects BIGINT NOT NULL,
            guard_flow TEXT NOT NULL,
            guard_metric TEXT NOT NULL,
            started_at DOUBLE PRECISION NOT NULL,
            status TEXT NOT NULL,
            stage INTEGER NOT NULL,
            stage_since DOUBLE PRECISION NOT NULL,
            subjects_at_stage_start BIGINT NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app, version),
            FOREIGN KEY (app, version) REFERENCES catalogs (app, version)
        )
        """,
        """
        CREATE TABLE guarded_rollout_looks (
            app TEXT NOT NULL,
            version BIGINT NOT NULL,
            at DOUBLE PRECISION NOT NULL,
            stage_percent INTEGER NOT NULL,
            candidate_trials BIGINT NOT NULL,
            candidate_successes BIGINT NOT NULL,
            baseline_trials BIGINT NOT NULL,
            baseline_successes BIGINT NOT NULL,
            lower_bound DOUBLE PRECISION,
            upper_bound DOUBLE PRECISION,
            decision TEXT NOT NULL,
            PRIMARY KEY (app, version, at),
            FOREIGN KEY (app, version) REFERENCES guarded_rollouts (app, version)
        )
        """,
    ]

    /// One guarded rollout as stored.
    public struct Record: Equatable, Sendable {
        public var app: String
        public var version: Int
        /// The version it replaces, which the guardrail compares it with.
        public var baseline: Int
        public var startedAt: Double
        public var updatedAt: Double
        public var value: GuardedRollout
    }

    /// One look of the guard at the evidence.
    public struct Look: Equatable, Sendable {
        public var at: Double
        public var percent: Int
        public var evidence: GuardedRollout.Evidence
        public var interval: ClosedRange<Double>?
        /// What the guard did or waits for, in words.
        public var decision: String
    }

    // MARK: - Reading

    /// The app's guarded rollouts, newest version first.
    public func all(app: String) async throws -> [Record] {
        try await reads.read { connection, logger in
            try await Self.all(app: app, on: connection, logger: logger)
        }
    }

    /// The looks at one rollout, oldest first (at most the last `limit`).
    public func looks(app: String, version: Int, limit: Int = 200) async throws -> [Look] {
        try await reads.read { connection, logger in
            let rows = try await connection.query(
                """
                SELECT at, stage_percent, candidate_trials, candidate_successes, baseline_trials,
                    baseline_successes,
                    lower_bound, upper_bound, decision
                FROM (SELECT * FROM guarded_rollout_looks WHERE app = \(app) AND version = \(Int64(version))
                      ORDER BY at DESC LIMIT \(Int64(limit))) l
                ORDER BY at
                """, logger: logger)
            var looks: [Look] = []
            for try await (at, percent, ct, cs, bt, bs, lower, upper, decision) in rows.decode(
                (Double, Int32, Int64, Int64, Int64, Int64, Double?, Double?, String).self)
            {
                looks.append(
                    Look(
                        at: at, percent: Int(percent),
                        evidence: .init(
                            candidate: Proportion(successes: Int(cs), trials: Int(ct)),
                            baseline: Proportion(successes: Int(bs), trials: Int(bt))),
                        interval: lower.flatMap { lower in upper.map { lower...$0 } }, decision: decision))
            }
            return looks
        }
    }

    static func all(app: String?, on connection: PostgresConnection, logger: Logger, running: Bool = false)
        async throws -> [Record]
    {
        let rows = try await connection.query(
            """
            SELECT app, version, baseline_version, stages, minimum_seconds, minimum_subjects, guard_flow,
                guard_metric,
                started_at, status, stage, stage_since, subjects_at_stage_start, updated_at
            FROM guarded_rollouts
            WHERE (\(app)::text IS NULL OR app = \(app)) AND (NOT \(running) OR status = 'running')
            ORDER BY app, version DESC
            """, logger: logger)
        var records: [Record] = []
        for try await (
            app, version, baseline, stages, seconds, subjects, flow, metric, started, status, stage, since,
            atStart, updated
        )
            in rows.decode(
                (
                    String, Int64, Int64, [Int32], Double, Int64, String, String, Double, String, Int32,
                    Double, Int64, Double
                ).self)
        {
            guard let guardrail = GuardedRollout.Guardrail(metric, flow: flow),
                let status = GuardedRollout.Status(rawValue: status)
            else { continue }
            let plan = GuardedRollout.Plan(
                stages: stages.map(Int.init), minimumSeconds: seconds, minimumSubjects: Int(subjects),
                guardrail: guardrail)
            records.append(
                Record(
                    app: app, version: Int(version), baseline: Int(baseline), startedAt: started,
                    updatedAt: updated,
                    value: GuardedRollout(
                        plan: plan, status: status, stage: Int(stage), stageSince: since,
                        subjectsAtStageStart: Int(atStart))))
        }
        return records
    }

    static func record(app: String, version: Int, on connection: PostgresConnection, logger: Logger)
        async throws -> Record?
    {
        try await all(app: app, on: connection, logger: logger).first { $0.version == version }
    }

    // MARK: - Writing (inside a transaction that holds the app's catalogs)

    /// Stores a rollout just published at its first stage.
    static func insert(_ record: Record, on connection: PostgresConnection, logger: Logger) async throws {
        let value = record.value
        try await connection.query(
            """
            INSERT INTO guarded_rollouts (app, version, baseline_version, stages, minimum_seconds,
                minimum_subjects,
                guard_flow, guard_metric, started_at, status, stage, stage_since, subjects_at_stage_start,
                    updated_at)
            VALUES (\(record.app), \(Int64(record.version)), \(Int64(record.baseline)),
                \(value.plan.stages.map(Int32.init)),
                \(value.plan.minimumSeconds), \(Int64(value.plan.minimumSubjects)),
                    \(value.plan.guardrail.flow),
                \(value.plan.guardrail.text), \(record.startedAt), \(value.status.rawValue),
                    \(Int32(value.stage)),
                \(value.stageSince), \(Int64(value.subjectsAtStageStart)), \(record.updatedAt))
            """, logger: logger)
    }

    /// Stores where a rollout is now.
    static func update(_ record: Record, on connection: PostgresConnection, logger: Logger) async throws {
        let value = record.value
        try await connection.query(
            """
            UPDATE guarded_rollouts SET status = \(value.status.rawValue), stage = \(Int32(value.stage)),
                stage_since = \(value.stageSince), subjects_at_stage_start =
                    \(Int64(value.subjectsAtStageStart)),
                updated_at = \(record.updatedAt)
            WHERE app = \(record.app) AND version = \(Int64(record.version))
            """, logger: logger)
    }

    static func insert(
        _ look: Look, app: String, version: Int, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO guarded_rollout_looks (app, version, at, stage_percent, candidate_trials,
                candidate_successes,
                baseline_trials, baseline_successes, lower_bound, upper_bound, decision)
            VALUES (\(app), \(Int64(version)), \(look.at), \(Int32(look.percent)),
                \(Int64(look.evidence.candidate.trials)),
                \(Int64(look.evidence.candidate.successes)), \(Int64(look.evidence.baseline.trials)),
                \(Int64(look.evidence.baseline.successes)), \(look.interval?.lowerBound),
                    \(look.interval?.upperBound),
                \(look.decision))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// The last look's counts, to record a look only when something changed.
    static func lastLook(app: String, version: Int, on connection: PostgresConnection, logger: Logger)
        async throws
        -> (evidence: GuardedRollout.Evidence, decision: String)?
    {
        let rows = try await connection.query(
            """
            SELECT candidate_trials, candidate_successes, baseline_trials, baseline_successes, decision
            FROM guarded_rollout_looks WHERE app = \(app) AND version = \(Int64(version)) ORDER BY at DESC
                LIMIT 1
            """, logger: logger)
        for try await (ct, cs, bt, bs, decision) in rows.decode((Int64, Int64, Int64, Int64, String).self) {
            return (
                .init(
                    candidate: Proportion(successes: Int(cs), trials: Int(ct)),
                    baseline: Proportion(successes: Int(bs), trials: Int(bt))), decision
            )
        }
        return nil
    }

    // MARK: - A person's commands

    /// What a person's command did.
    public enum CommandOutcome: Equatable, Sendable {
        case applied(Record)
        /// No guarded rollout of that version.
        case missing
        /// It does not apply in the rollout's state; the message says what is allowed.
        case refused(String)
    }

    /// Pauses, resumes or ends the guarded rollout of `version`: one transaction with its audit row.
    public func command(
        _ command: GuardedRollout.Command, app: String, version: Int, by actor: Actor, at time: Double
    ) async throws -> CommandOutcome {
        try await writes.write { connection, logger in
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext(\("catalogs/" + app)))", logger: logger)
            guard
                var record = try await Self.record(app: app, version: version, on: connection, logger: logger)
            else {
                return .missing
            }
            switch record.value.applying(command, now: time) {
            case .failure(let refusal): return .refused(refusal.message)
            case .success(let next):
                let before = record.value.status
                record.value = next
                record.updatedAt = time
                try await Self.update(record, on: connection, logger: logger)
                let action =
                    switch command {
                    case .pause: "rollout.paused"
                    case .resume: "rollout.resumed"
                    case .end: "rollout.ended"
                    }
                try await AuditLog.append(
                    .init(
                        at: time, actor: actor, app: app, action: action, target: "version \(version)",
                        details: [
                            "rollout": .int(next.percent), "stage": .int(next.stage + 1),
                            "was": .string(before.rawValue),
                        ]), on: connection, logger: logger)
                return .applied(record)
            }
        }
    }
}

extension GuardedRollouts.Record: TourValueRepresentable {
    public var tourValue: TourValue {
        let plan = value.plan
        return .members([
            "app": .string(app), "version": .int(version), "baseline": .int(baseline),
            "status": .string(value.status.rawValue),
            "rollout": .int(value.percent), "stage": .int(value.stage + 1),
            "stages": .list(plan.stages.map { .int($0) }),
            "guard": .string(plan.guardrail.text), "flow": .string(plan.guardrail.flow),
            "stageMinimumSeconds": .double(plan.minimumSeconds),
            "stageMinimumSubjects": .int(plan.minimumSubjects),
            "startedAt": .double(startedAt), "stageSince": .double(value.stageSince),
            "updatedAt": .double(updatedAt),
        ])
    }
}

extension GuardedRollouts.Look: TourValueRepresentable {
    public var tourValue: TourValue {
        .members([
            "at": .double(at), "rollout": .int(percent),
            "candidate": [
                "subjects": .int(evidence.candidate.trials), "reached": .int(evidence.candidate.successes),
            ],
            "baseline": [
                "subjects": .int(evidence.baseline.trials), "reached": .int(evidence.baseline.successes),
            ],
            "interval": interval.map { .list([.double($0.lowerBound), .double($0.upperBound)]) },
            "decision": .string(decision),
        ])
    }
}
