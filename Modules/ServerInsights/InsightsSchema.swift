/// Migration `v4-insights`: the aggregates every report and dashboard page reads (Docs/Server.md,
/// "Insights"), so no page scans facts.
///
/// Counting is an incremental job, not part of the push: a push only stamps its rows with its
/// transaction id (`pushes.xact`), and `insight_catch_up()` counts every push of the transactions
/// that finished since it last ran, in one transaction that also moves its watermark
/// (`insight_progress`). Transactions below the snapshot's `xmin` are all finished, so none is
/// skipped however commits interleave, and none is counted twice. The server runs it every quarter second
/// and before answering a report or a page, so what a page shows includes every push answered
/// before it was asked for.
///
/// Distinct counts are made incremental by a membership table: a subject (account, device or
/// experiment subject) is counted the first time it reaches a milestone, when its row is inserted
/// there, and never again. The counters are split by day (UTC, of the device's event time), catalog
/// version and app version, and spread over four shards (a hash of the subject). Standings follow
/// each account's merged record through row triggers on `account_flows` (an update moves the
/// account from its old standing to its new one).
///
/// Frozen as it landed, like every migration: a change is a new migration that replaces a function.
package enum InsightsSchema {
    /// The CASE that names a fact's milestone: `started`, `step`, `completed`, `skipped` (a skip or a
    /// dismissal), `heldOut`; NULL for facts that are no milestone.
    static let milestone = """
        CASE f.kind WHEN 'flowStarted' THEN 'started' WHEN 'stepEntered' THEN 'step'
            WHEN 'flowEnded' THEN CASE WHEN f.ending = 'completed' THEN 'completed'
                WHEN f.ending IN ('skipped', 'dismissed') THEN 'skipped'
                WHEN f.ending = 'heldOut' THEN 'heldOut' END END
        """

    /// Counts the facts of `source` (a subquery: the facts of the pushes being counted).
    static func countFacts(_ source: String) -> [String] {
        [
            // Experiment assignments first: a step in the same push counts for the variant assigned before
            // it.
            """
            INSERT INTO insight_assignments (app, account, device, flow, experiment, variant, subject, seq, \
            idx)
            SELECT DISTINCT ON (f.app, f.account, f.device, f.flow, f.body->>'experiment')
                f.app, f.account, f.device, f.flow, f.body->>'experiment', f.body->>'variant', \
            f.body->>'subject', f.seq, f.idx
            FROM \(source) f
            WHERE f.kind = 'assigned' AND f.body->>'experiment' IS NOT NULL AND f.body->>'variant' IS NOT NULL
                AND f.body->>'subject' IS NOT NULL
            ORDER BY f.app, f.account, f.device, f.flow, f.body->>'experiment', f.seq, f.idx
            ON CONFLICT DO NOTHING
            """,
            // Each flow milestone, and each device that ran the flow, counted on its first reach.
            """
            WITH marks AS (
                SELECT f.app, f.seq, f.idx, f.flow, f.step_index, f.time, f.catalog_version, f.app_version,
                    \(milestone) AS milestone,
                    CASE WHEN f.kind = 'stepEntered' THEN coalesce(f.step, '') ELSE '' END AS step, \
            f.account AS subject
                FROM \(source) f
                UNION ALL
                SELECT f.app, f.seq, f.idx, f.flow, 0, f.time, f.catalog_version, f.app_version, 'device', \
            '', f.device
                FROM \(source) f
            ),
            earliest AS (
                SELECT DISTINCT ON (m.app, m.flow, m.milestone, m.step, m.subject)
                    m.app, m.flow, m.milestone, m.step, m.subject, m.step_index,
                    (to_timestamp(least(greatest(m.time, 0), 253402300799)) AT TIME ZONE 'UTC')::date AS day,
                    m.catalog_version, coalesce(m.app_version, '') AS app_version
                FROM marks m
                WHERE m.milestone IS NOT NULL
                ORDER BY m.app, m.flow, m.milestone, m.step, m.subject, m.time, m.seq, m.idx
            ),
            -- The first reach keeps what it is counted under, so counting it needs no join back.
            firsts AS (
                INSERT INTO insight_firsts (app, flow, milestone, step, subject, step_index, day, \
            catalog_version, app_version)
                SELECT app, flow, milestone, step, subject, step_index, day, catalog_version, app_version \
            FROM earliest
                ON CONFLICT DO NOTHING
                RETURNING app, flow, milestone, step, subject, step_index, day, catalog_version, app_version
            )
            INSERT INTO insight_counts (app, flow, milestone, step, step_index, day, catalog_version, \
            app_version, shard, subjects)
            SELECT app, flow, milestone, step, step_index, day, catalog_version, app_version,
                (hashtext(subject) & 3)::smallint, count(*)
            FROM firsts
            GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9 ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
            ON CONFLICT (app, flow, milestone, step, step_index, day, catalog_version, app_version, shard)
            DO UPDATE SET subjects = insight_counts.subjects + EXCLUDED.subjects
            """,
            // Each experiment subject's assignment, exposure, goal, and steps entered after its assignment
            // on the device that assigned it, counted once per variant.
            """
            WITH marks AS (
                SELECT f.app, f.flow, f.body->>'experiment' AS experiment, f.body->>'variant' AS variant,
                    f.kind AS milestone, '' AS step, 0::bigint AS step_index, f.body->>'subject' AS subject
                FROM \(source) f
                WHERE f.kind IN ('assigned', 'exposed', 'goalReached') AND f.body->>'experiment' IS NOT NULL
                    AND f.body->>'variant' IS NOT NULL AND f.body->>'subject' IS NOT NULL
                UNION ALL
                SELECT f.app, f.flow, a.experiment, a.variant, 'step', coalesce(f.step, ''), f.step_index, \
            a.subject
                FROM \(source) f JOIN insight_assignments a
                    ON a.app = f.app AND a.account = f.account AND a.device = f.device AND a.flow = f.flow
                    AND (a.seq, a.idx) < (f.seq, f.idx)
                WHERE f.kind = 'stepEntered'
            ),
            earliest AS (
                SELECT DISTINCT ON (app, experiment, variant, milestone, step, subject) *
                FROM marks ORDER BY app, experiment, variant, milestone, step, subject, step_index
            ),
            firsts AS (
                INSERT INTO insight_arm_firsts (app, experiment, variant, milestone, step, subject, \
            step_index, flow)
                SELECT app, experiment, variant, milestone, step, subject, step_index, flow FROM earliest
                ON CONFLICT DO NOTHING
                RETURNING app, experiment, variant, milestone, step, subject, step_index, flow
            )
            INSERT INTO insight_arm_counts (app, experiment, variant, milestone, step, step_index, flow, \
            shard, subjects)
            SELECT app, experiment, variant, milestone, step, step_index, flow, (hashtext(subject) & \
            3)::smallint, count(*)
            FROM firsts
            GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
            ON CONFLICT (app, experiment, variant, milestone, step, step_index, flow, shard)
            DO UPDATE SET subjects = insight_arm_counts.subjects + EXCLUDED.subjects
            """,
        ]
    }

    /// Counts the accounts and devices of `source` (pushes) the app had not seen.
    static func countMembers(_ source: String) -> String {
        """
        WITH seen AS (
            SELECT DISTINCT app, 'account' AS kind, account AS id FROM \(source) m
            UNION SELECT DISTINCT app, 'device', device FROM \(source) m
        ),
        fresh AS (
            INSERT INTO insight_members (app, kind, id) SELECT app, kind, id FROM seen
            ON CONFLICT DO NOTHING RETURNING app, kind, id
        )
        INSERT INTO insight_totals (app, kind, shard, subjects)
        SELECT app, kind, (hashtext(id) & 3)::smallint, count(*) FROM fresh GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (app, kind, shard) DO UPDATE SET subjects = insight_totals.subjects + EXCLUDED.subjects
        """
    }

    /// The pushes of the transactions in [lo, hi), and their facts.
    static let pushesInRange = "(SELECT * FROM pushes WHERE xact >= lo AND xact < hi)"
    static let factsInRange = """
        (SELECT f.*, p.time, p.catalog_version, p.app_version FROM pushes p JOIN facts f
            ON f.app = p.app AND f.account = p.account AND f.device = p.device AND f.seq = p.seq
        WHERE p.xact >= lo AND p.xact < hi)
        """

    /// Counts what the pushes of every transaction finished since the last run stored; returns the
    /// watermark: every transaction below it is counted. Concurrent callers queue on the
    /// watermark's row lock, so each transaction's pushes are counted once.
    static let catchUp = """
        CREATE FUNCTION insight_catch_up() RETURNS xid8 LANGUAGE plpgsql
        SET plan_cache_mode = force_custom_plan AS $body$
        DECLARE
            lo xid8;
            hi xid8;
        BEGIN
            SELECT counted_below INTO lo FROM insight_progress WHERE singleton FOR UPDATE;
            hi := pg_snapshot_xmin(pg_current_snapshot());
            IF hi <= lo THEN RETURN lo; END IF;
            IF EXISTS (SELECT 1 FROM pushes WHERE xact >= lo AND xact < hi) THEN
                \(countMembers(pushesInRange));
                \(countFacts(factsInRange).joined(separator: ";\n"));
            END IF;
            UPDATE insight_progress SET counted_below = hi, counted_at = now() WHERE singleton;
            RETURN hi;
        END
        $body$
        """

    /// Migration `v10-watermark-per-database`: the same count, with a watermark that only this
    /// database's transactions hold back. `v4`'s watermark was the snapshot's `xmin`, which any
    /// transaction of the whole PostgreSQL cluster holds back: a long transaction in another
    /// database (a dump, a report, another service) kept every report waiting, then answering
    /// without the latest pushes. Transaction ids are unique across the cluster, so an id that
    /// `pg_stat_activity` shows running in another database, read *before* the snapshot is taken,
    /// can write no push here and is passed over. Every other transaction running at the snapshot
    /// still holds the watermark back (also one whose database this role may not see), so no push
    /// is skipped.
    package static let v10: [String] = [
        catchUpFunction(
            counting: [
                "\(countMembers(pushesInRange));", "\(countFacts(factsInRange).joined(separator: ";\n"));",
            ])
    ]

    /// `insight_catch_up()` as v10 shaped it (the watermark this database's transactions hold
    /// back; v16, v17 and v27 define it again): under `settings`, it runs `counting` (statements,
    /// each ending with its semicolon) when the transactions in [lo, hi) stored pushes, then moves
    /// the watermark to hi.
    static func catchUpFunction(
        settings: String = "SET plan_cache_mode = force_custom_plan", counting: [String]
    ) -> String {
        """
        CREATE OR REPLACE FUNCTION insight_catch_up() RETURNS xid8 LANGUAGE plpgsql
        \(settings) AS $body$
        DECLARE
            lo xid8;
            hi xid8;
            elsewhere xid[];
            snap pg_snapshot;
        BEGIN
            SELECT counted_below INTO lo FROM insight_progress WHERE singleton FOR UPDATE;
            SELECT coalesce(array_agg(backend_xid), '{}') INTO elsewhere FROM pg_stat_activity
                WHERE backend_xid IS NOT NULL AND datname IS DISTINCT FROM current_database();
            snap := pg_current_snapshot();
            SELECT coalesce(min(x), pg_snapshot_xmax(snap)) INTO hi
                FROM pg_snapshot_xip(snap) AS x WHERE NOT (xid(x) = ANY (elsewhere));
            IF hi <= lo THEN RETURN lo; END IF;
            IF EXISTS (SELECT 1 FROM pushes WHERE xact >= lo AND xact < hi) THEN
        \(counting.map { "        " + $0 }.joined(separator: "\n"))
            END IF;
            UPDATE insight_progress SET counted_below = hi, counted_at = now() WHERE singleton;
            RETURN hi;
        END
        $body$
        """
    }

    /// Row triggers: an account's record inserted (+1 to its standing) or moved (-1, +1).
    static let standings = """
        CREATE FUNCTION insight_standing_moved() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            IF TG_OP = 'UPDATE' THEN
                IF OLD.standing = NEW.standing THEN RETURN NULL; END IF;
                UPDATE insight_standings SET accounts = accounts - 1
                WHERE app = OLD.app AND flow = OLD.flow AND standing = OLD.standing
                    AND shard = (hashtext(OLD.account) & 3)::smallint;
            END IF;
            INSERT INTO insight_standings (app, flow, standing, shard, accounts)
            VALUES (NEW.app, NEW.flow, NEW.standing, (hashtext(NEW.account) & 3)::smallint, 1)
            ON CONFLICT (app, flow, standing, shard) DO UPDATE SET accounts = insight_standings.accounts + 1;
            RETURN NULL;
        END
        $body$
        """

    /// The standings trigger of v4 kept four counter rows per (app, flow, standing), chosen by the
    /// account, so pushes of different accounts waited on each other's row locks until commit,
    /// and two pushes moving accounts in opposite directions could deadlock (one waits for A while
    /// holding B). Now each connection adds to its own shard (its backend's pid), so concurrent
    /// pushes do not share a counter row; a decrement is an upsert too (the shard that counted an
    /// account need not be the one that uncounts it: only the sum over shards means anything);
    /// and the two rows of a move are taken in the order of their standings, one order for every
    /// transaction, so moves cannot deadlock.
    package static let v6: [String] = [
        """
        CREATE FUNCTION insight_standing_add(p_app TEXT, p_flow TEXT, p_standing TEXT, p_delta BIGINT)
        RETURNS void LANGUAGE sql AS $body$
            INSERT INTO insight_standings (app, flow, standing, shard, accounts)
            VALUES (p_app, p_flow, p_standing, (pg_backend_pid() & 31)::smallint, p_delta)
            ON CONFLICT (app, flow, standing, shard) DO UPDATE SET accounts = insight_standings.accounts + \
        p_delta
        $body$
        """,
        """
        CREATE OR REPLACE FUNCTION insight_standing_moved() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                PERFORM insight_standing_add(NEW.app, NEW.flow, NEW.standing, 1);
            ELSIF OLD.standing < NEW.standing THEN
                PERFORM insight_standing_add(OLD.app, OLD.flow, OLD.standing, -1);
                PERFORM insight_standing_add(NEW.app, NEW.flow, NEW.standing, 1);
            ELSIF OLD.standing > NEW.standing THEN
                PERFORM insight_standing_add(NEW.app, NEW.flow, NEW.standing, 1);
                PERFORM insight_standing_add(OLD.app, OLD.flow, OLD.standing, -1);
            END IF;
            RETURN NULL;
        END
        $body$
        """,
    ]
}
