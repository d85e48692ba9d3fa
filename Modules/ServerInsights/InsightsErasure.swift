import Logging
import PostgresNIO

/// An erasure's share of the insights aggregates (Docs/Privacy.md, "Erasure"): the subject's
/// first-reach rows, journeys, experiment rows, memberships and records, each taken out of the
/// counters it added to, so every figure equals a recount of what remains. The invariant is the
/// counting's (``InsightsSchema``), so it is kept here, beside it; the server's erasure calls it
/// in its own transaction, before it deletes the subject's pushes and facts (which say what was
/// counted).
package enum InsightsErasure {
    /// Takes `subject` of `app` out of every aggregate, on `connection` (in the erasure's
    /// transaction; the insights job's lock is taken first and held to its end, so no catch-up
    /// counts the subject's rows while they go). Answers the rows removed, by table.
    package static func takeBack(
        app: String, subject: String, on connection: PostgresConnection, logger: Logger
    )
        async throws -> [String: Int]
    {
        // The insights job's lock: no catch-up counts this subject's rows while they go.
        try await InsightsProgress.lock(on: connection, logger: logger)
        var removed: [String: Int] = [:]
        func run(_ name: String, _ query: PostgresQuery) async throws {
            var count = 0
            for try await n in try await connection.query(query, logger: logger).decode(Int64.self) {
                count += Int(n)
            }
            removed[name, default: 0] += count
        }
        // First-reach rows, and their share of the counts: the subject's own, then its devices'
        // first reaches of a flow (milestone `device`), unless another subject's facts in that
        // flow came from the same device (a file of several users). Two statements, each a
        // lookup by subject through `insight_firsts_by_subject`.
        var devices: [String] = []
        for try await device in try await connection.query(
            "SELECT DISTINCT device FROM pushes WHERE app = \(app) AND account = \(subject)", logger: logger
        ).decode(String.self) {
            devices.append(device)
        }
        func firsts(_ gone: String) -> PostgresQuery {
            PostgresQuery(
                unsafeSQL: """
                    WITH gone AS (
                        \(gone)
                        RETURNING flow, milestone, step, step_index, day, catalog_version, app_version,
                            (hashtext(subject) & 3)::smallint AS shard
                    ),
                    grouped AS (
                        SELECT flow, milestone, step, step_index, day, catalog_version, app_version, shard,
                            count(*) AS n
                        FROM gone GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
                    ),
                    fixed AS (
                        UPDATE insight_counts c SET subjects = c.subjects - g.n FROM grouped g
                        WHERE c.app = $1 AND c.flow = g.flow AND c.milestone = g.milestone AND c.step = g.step
                            AND c.step_index = g.step_index AND c.day = g.day AND c.catalog_version =
                                g.catalog_version
                            AND c.app_version = g.app_version AND c.shard = g.shard
                        RETURNING 1
                    )
                    SELECT count(*)::bigint FROM gone
                    """,
                binds: {
                    var binds = PostgresBindings()
                    binds.append(app)
                    binds.append(subject)
                    binds.append(devices)
                    return binds
                }())
        }
        // Its journeys and what they counted, while the first reaches and facts still say what that was.
        try await run("insight_journeys", journeys(app: app, subject: subject))
        try await run("insight_arm_days", assignmentDays(app: app, subject: subject))
        try await run("insight_firsts", firsts("DELETE FROM insight_firsts WHERE app = $1 AND subject = $2"))
        if !devices.isEmpty {
            try await run(
                "insight_firsts",
                firsts(
                    """
                    DELETE FROM insight_firsts fi WHERE fi.app = $1 AND fi.subject = ANY($3::text[])
                        AND fi.milestone = 'device'
                        AND NOT EXISTS (
                            SELECT 1 FROM pushes p JOIN facts o
                                ON o.app = p.app AND o.account = p.account AND o.device = p.device
                                    AND o.seq = p.seq
                            WHERE p.app = $1 AND p.device = fi.subject AND p.account <> $2
                                AND o.flow = fi.flow)
                    """))
        }
        // The experiment subjects the account's devices reported, their first reaches and counts.
        try await run(
            "insight_arm_firsts",
            """
            WITH subjects AS (
                SELECT DISTINCT subject FROM insight_assignments WHERE app = \(app) AND account = \(subject)
            ),
            gone AS (
                DELETE FROM insight_arm_firsts WHERE app = \(app) AND subject IN (SELECT subject
                    FROM subjects)
                RETURNING experiment, variant, milestone, step, step_index, flow, (hashtext(subject) &
                    3)::smallint AS shard
            ),
            grouped AS (
                SELECT experiment, variant, milestone, step, step_index, flow, shard, count(*) AS n FROM gone
                GROUP BY 1, 2, 3, 4, 5, 6, 7
            ),
            fixed AS (
                UPDATE insight_arm_counts c SET subjects = c.subjects - g.n FROM grouped g
                WHERE c.app = \(app) AND c.experiment = g.experiment AND c.variant = g.variant
                    AND c.milestone = g.milestone
                    AND c.step = g.step AND c.step_index = g.step_index AND c.flow = g.flow
                        AND c.shard = g.shard
                RETURNING 1
            )
            SELECT count(*)::bigint FROM gone
            """)
        try await run(
            "insight_assignments",
            """
            WITH gone AS (DELETE FROM insight_assignments WHERE app = \(app) AND account = \(subject)
                RETURNING 1) SELECT count(*)::bigint FROM gone
            """
        )
        // Memberships: the account, and each of its devices no other subject's pushes came from.
        try await run(
            "insight_members",
            """
            WITH devices AS (
                SELECT DISTINCT device FROM pushes p WHERE p.app = \(app) AND p.account = \(subject)
                    AND NOT EXISTS (SELECT 1 FROM pushes o WHERE o.app = \(app) AND o.device = p.device
                        AND o.account <> \(subject))
            ),
            -- A row-value IN, not an OR of the two kinds: each member is a key lookup (an OR
            -- read every member of the app: 376 ms at p95 for a million accounts).
            gone AS (
                DELETE FROM insight_members m WHERE m.app = \(app)
                    AND (m.kind, m.id) IN (SELECT 'account', \(subject) UNION ALL SELECT 'device', device
                        FROM devices)
                RETURNING kind, (hashtext(id) & 3)::smallint AS shard
            ),
            grouped AS (SELECT kind, shard, count(*) AS n FROM gone GROUP BY 1, 2),
            fixed AS (
                UPDATE insight_totals t SET subjects = t.subjects - g.n FROM grouped g
                WHERE t.app = \(app) AND t.kind = g.kind AND t.shard = g.shard RETURNING 1
            )
            SELECT count(*)::bigint FROM gone
            """)
        // Records, and their standings (the trigger follows inserts and updates only).
        try await run(
            "account_flows",
            """
            WITH gone AS (
                DELETE FROM account_flows WHERE app = \(app) AND account = \(subject) RETURNING flow, standing
            ),
            -- As the standings trigger moves them (its shard is the connection's; only the sum
            -- means anything), in the order of the standings, as every move takes them.
            fixed AS (
                SELECT insight_standing_add(\(app), flow, standing, -count(*)) FROM gone
                GROUP BY flow, standing ORDER BY standing, flow
            )
            SELECT (SELECT count(*) FROM gone)::bigint + 0 * (SELECT count(*) FROM fixed)::bigint
            """)
        return removed
    }
}
