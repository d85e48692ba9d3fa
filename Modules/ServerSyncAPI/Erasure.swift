import AccountSync
import Crypto
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import ServerInsights
import ServerKit
import ServerTokens
import TourCodec

/// Erasure and export of one subject's data (Docs/Privacy.md): an account, or an install
/// (`install.<id>`) of an app without sign-in.
///
/// Erasure removes, in one transaction, everything stored under the subject (pushes, facts, facts
/// kept apart, records, budget counts, experiment assignments, the insights' first-reach rows and
/// memberships, the install's enrollment) and takes its share out of every aggregate, so each
/// number a report or the dashboard shows equals a recount of what remains. It holds the insights
/// watermark's lock meanwhile, so a catch-up cannot count the subject's rows while they go. The
/// subject's tokens issued until then are refused from then on (a device cannot put the data back
/// with them). The audit row names the subject only by a hash.
public enum Erasure {
    /// v13: the indexes erasure reads by (each a lookup by subject, whatever the number of subjects).
    package static let v13 = [
        "CREATE INDEX insight_firsts_by_subject ON insight_firsts (app, subject)",
        "CREATE INDEX insight_arm_firsts_by_subject ON insight_arm_firsts (app, subject)",
        "CREATE INDEX unplanned_facts_by_account ON unplanned_facts (app, account)",
        // Whether another subject's pushes came from a device being erased (a file of several users).
        "CREATE INDEX pushes_by_device ON pushes (app, device)",
        "CREATE INDEX budget_counts_by_account ON budget_counts (account)",
    ]

}

/// What an erasure removed, by table (no data of the subject).
public struct ErasureSummary: Equatable, Sendable, TourValueRepresentable {
    public var app: String
    public var subject: String
    /// How the audit trail names the subject (``TokenSigner/subjectPseudonym(app:subject:)``).
    public var pseudonym: String
    public var removed: [String: Int]

    public var tourValue: TourValue {
        [
            "app": .string(app), "erased": .string(pseudonym),
            "removed": .object(removed.mapValues { .int($0) }),
        ]
    }
}

extension AccountStore {
    /// Erases `subject` of `app` and corrects every aggregate, in one transaction with its audit row.
    /// `pseudonym` is how the audit row names the subject (never the id).
    public func erase(app: String, subject: String, pseudonym: String, by actor: Actor, at time: Double)
        async throws
        -> ErasureSummary
    {
        return try await writes.write { connection, logger in
            // The subject's fence first: pushes of it in flight commit before anything is read for
            // deletion, and none commits after (SubjectFence).
            try await SubjectFence.close(app: app, subject: subject, on: connection, logger: logger)
            // Its share of every aggregate first (under the insights job's lock, which the
            // transaction holds to its end), while its rows still say what was counted.
            var removed = try await InsightsErasure.takeBack(
                app: app, subject: subject, on: connection, logger: logger)
            func run(_ name: String, _ query: PostgresQuery) async throws {
                var count = 0
                for try await n in try await connection.query(query, logger: logger).decode(Int64.self) {
                    count += Int(n)
                }
                removed[name, default: 0] += count
            }
            try await run(
                "facts",
                """
                WITH gone AS (DELETE FROM facts WHERE app = \(app) AND account = \(subject) RETURNING 1)
                    SELECT count(*)::bigint FROM gone
                """
            )
            try await run(
                "held_facts",
                """
                WITH gone AS (DELETE FROM held_facts WHERE app = \(app) AND account = \(subject)
                    RETURNING 1) SELECT count(*)::bigint FROM gone
                """
            )
            try await run(
                "pushes",
                """
                WITH gone AS (DELETE FROM pushes WHERE app = \(app) AND account = \(subject) RETURNING 1)
                    SELECT count(*)::bigint FROM gone
                """
            )
            try await run(
                "unplanned_facts",
                """
                WITH gone AS (DELETE FROM unplanned_facts WHERE app = \(app) AND account = \(subject)
                    RETURNING 1) SELECT count(*)::bigint FROM gone
                """
            )
            try await run(
                "budget_counts",
                """
                WITH gone AS (DELETE FROM budget_counts WHERE account = \(subject) RETURNING 1)
                    SELECT count(*)::bigint FROM gone
                """
            )
            if Installs.isInstall(subject) {
                let install = String(subject.dropFirst(Installs.subjectPrefix.count))
                try await run(
                    "installs",
                    """
                    WITH gone AS (DELETE FROM installs WHERE app = \(app) AND install = \(install)
                        RETURNING 1) SELECT count(*)::bigint FROM gone
                    """
                )
            }
            // Its tokens until now are refused: a device cannot put the data back with them.
            try await Self.setCutoff(app: app, named: pseudonym, at: time, on: connection, logger: logger)
            try await AuditLog.append(
                .init(
                    at: time, actor: actor, app: app, action: "subject.erased", target: pseudonym,
                    details: ["rows": .int(removed.values.reduce(0, +))]),
                on: connection, logger: logger)
            return ErasureSummary(
                app: app, subject: subject, pseudonym: pseudonym, removed: removed.filter { $0.value > 0 })
        }
    }

    /// Everything stored under `subject` of `app`, as JSON: its pushed rows with their facts, facts
    /// kept apart, records, budget counts and experiment assignments.
    public func export(app: String, subject: String) async throws -> TourValue {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            func rows(_ query: PostgresQuery) async throws -> [TourValue] {
                var rows: [TourValue] = []
                for try await text in try await connection.query(query, logger: logger).decode(String.self) {
                    rows.append(try TourValue(jsonText: text))
                }
                return rows
            }
            let pushes = try await rows(
                """
                SELECT json_build_object('device', p.device, 'seq', p.seq, 'time', p.time, 'event', p.event,
                    'catalogVersion', p.catalog_version, 'appVersion', p.app_version,
                    'facts', coalesce((SELECT json_agg(f.body ORDER BY f.idx) FROM (
                        SELECT idx, body FROM facts f
                        WHERE f.app = p.app AND f.account = p.account AND f.device = p.device
                            AND f.seq = p.seq
                        UNION ALL
                        SELECT idx, body FROM held_facts h
                        WHERE h.app = p.app AND h.account = p.account AND h.device = p.device
                            AND h.seq = p.seq) f), '[]'::json))::text
                FROM pushes p WHERE p.app = \(app) AND p.account = \(subject) ORDER BY p.device, p.seq
                """)
            let records = try await rows(
                """
                SELECT json_build_object('flow', flow, 'epoch', epoch, 'standing', standing, 'version',
                    version,
                    'atMilliseconds', at_ms, 'device', device)::text
                FROM account_flows WHERE app = \(app) AND account = \(subject) ORDER BY flow
                """)
            let unplanned = try await rows(
                """
                SELECT json_build_object('flow', flow, 'step', step, 'kind', kind, 'device', device,
                    'facts', facts,
                    'firstAt', first_at, 'lastAt', last_at)::text
                FROM unplanned_facts WHERE app = \(app) AND account = \(subject) ORDER BY flow, step, kind,
                    device
                """)
            let budget = try await rows(
                """
                SELECT json_build_object('device', device, 'day', day, 'starts', starts, 'lastStart',
                    last_start)::text
                FROM budget_counts WHERE account = \(subject) ORDER BY day, device
                """)
            let assignments = try await InsightsProgress.exportedAssignments(
                app: app, subject: subject, on: connection, logger: logger
            ).map { try TourValue(jsonText: $0) }
            return [
                "app": .string(app), "subject": .string(subject), "pushes": .list(pushes),
                "records": .list(records),
                "unplannedFacts": .list(unplanned), "budget": .list(budget),
                "experimentAssignments": .list(assignments),
            ]
        }
    }
}
