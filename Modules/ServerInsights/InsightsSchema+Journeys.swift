/// Migration `v16-journeys`: what a funnel a product manager reads needs beyond first
/// reaches by day: each subject's first run as a *journey* (the cohort it started in: day, catalog
/// and app version, experiment variant, locale, accessibility settings, device kind), how far it
/// got, whether it was skipped or is still waiting there, and how long each stage took from its
/// start.
///
/// - `insight_journeys`: one row per (app, flow, subject), from its first `flowStarted`: the
///   cohort, the furthest step reached, and its standing (waiting at the furthest step, skipped
///   there, or completed). The drill-down reads it by standing and step, through partial indexes.
/// - `insight_cohorts`: counters by split (`all`, `catalog`, `app`, `variant`, `locale`,
///   `accessibility`, `device`) and value, the day the journey started, the measure and the stage:
///   `started`, `step` and `completed` count first reaches (only ever added to); `waiting` and
///   `skipped` count journeys by standing (a journey moves: -1 where it was, +1 where it is). One
///   row per key, no shards: only the catch-up (serialised on the watermark's lock) and erasure
///   (which takes that lock) write them.
/// - `insight_stage_times`: how many journeys first reached each stage how long after their start,
///   the time kept to two significant figures of milliseconds (``bucketSQL``), so a percentile is
///   read from a few hundred rows, not from every subject.
/// - `insight_arm_days`: each experiment variant's first assignments per day (the page projects
///   when a variant reaches its sample size from the last 7 days).
/// - `insight_firsts` gains `cohort` (the first reach was counted in its journey's cohort) and
///   `millis` (its stage time bucket), so erasure takes back exactly what was counted.
///
/// Counted from this migration on by a new `insight_catch_up()`; what was counted before is carried
/// over by the migration from the first-reach rows and the stored starts (times of reaches counted
/// before it are unknown, so they are in no percentile).
extension InsightsSchema {
    /// The splits a journey is counted under, as a `VALUES` list over a row `j` with its cohort.
    static let splits = """
        (VALUES ('all', ''), ('catalog', j.catalog_version::text), ('app', j.app_version), ('variant', \
        j.variant),
            ('locale', j.locale), ('accessibility', j.accessibility), ('device', j.device_kind)) AS s(split, \
        value)
        """

    /// Adds `source`'s rows (app, flow, measure, step, step_index, delta, and the journey's cohort
    /// columns, as `j`) to the cohort counters, under every split.
    package static func addToCohorts(_ source: String) -> String {
        """
        INSERT INTO insight_cohorts (app, flow, split, value, start_day, measure, step, step_index, subjects)
        SELECT j.app, j.flow, s.split, s.value, j.start_day, j.measure, j.step, j.step_index, sum(j.delta)
        FROM \(source) j CROSS JOIN LATERAL \(splits)
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
        ON CONFLICT (app, flow, split, value, start_day, measure, step, step_index)
        DO UPDATE SET subjects = insight_cohorts.subjects + EXCLUDED.subjects
        """
    }

    /// A journey's cohort columns, from a row `j` of `insight_journeys`.
    package static let cohortColumns =
        "j.start_day, j.catalog_version, j.app_version, j.variant, j.locale, j.accessibility, j.device_kind"

    /// The UTC day of a time in seconds since 1970, clamped as the counters clamp it.
    package static func day(_ seconds: String) -> String {
        "(to_timestamp(least(greatest(\(seconds), 0), 253402300799)) AT TIME ZONE 'UTC')::date"
    }

    /// A member of a start's `context` object as text, '' when it is absent or not a string (the
    /// server refuses a malformed context; rows stored otherwise are read defensively).
    static func contextText(_ key: String) -> String {
        """
        left(CASE WHEN jsonb_typeof(s.context->'\(key)') = 'string' THEN s.context->>'\(key)' ELSE '' END, \
        64)
        """
    }

    /// Journeys: each subject's first start of a flow in `source`, and its `started` and `waiting`.
    static func countJourneys(_ source: String) -> String {
        """
        WITH starts AS (
            SELECT DISTINCT ON (f.app, f.flow, f.account) f.app, f.flow, f.account AS subject, f.device, \
        f.time,
                f.catalog_version, coalesce(f.app_version, '') AS app_version,
                CASE WHEN jsonb_typeof(f.body->'context') = 'object' THEN f.body->'context' END AS context
            FROM \(source) f
            WHERE f.kind = 'flowStarted'
            ORDER BY f.app, f.flow, f.account, f.time, f.seq, f.idx
        ),
        fresh AS (
            INSERT INTO insight_journeys (app, flow, subject, started_at, start_day, catalog_version, \
        app_version, variant,
                locale, accessibility, device_kind)
            SELECT s.app, s.flow, s.subject, s.time, \(day("s.time")), s.catalog_version, s.app_version,
                coalesce((
                    SELECT a.variant FROM insight_assignments a
                    WHERE a.app = s.app AND a.account = s.subject AND a.device = s.device AND a.flow = s.flow
                    ORDER BY a.experiment LIMIT 1), ''),
                \(contextText("locale")), \(contextText("accessibility")), \(contextText("device"))
            FROM starts s
            ON CONFLICT DO NOTHING
            RETURNING app, flow, subject, \(cohortColumns.replacingOccurrences(of: "j.", with: ""))
        )
        \(addToCohorts("""
            (SELECT f.*, m.measure, '' AS step, 0::bigint AS step_index, 1 AS delta
            FROM fresh f CROSS JOIN (VALUES ('started'), ('waiting')) AS m(measure))
            """))
        """
    }

    /// Each milestone's first reach, as v4 counts it, and for a subject with a journey its reach in
    /// the journey's cohort, its stage time, and its move to a further step or to completed.
    static func countFirstReaches(_ source: String) -> String {
        """
        WITH marks AS (
            SELECT f.app, f.seq, f.idx, f.flow, f.step_index, f.time, f.catalog_version, f.app_version,
                \(milestone) AS milestone,
                CASE WHEN f.kind = 'stepEntered' THEN coalesce(f.step, '') ELSE '' END AS step, \
        f.account AS subject
            FROM \(source) f
            UNION ALL
            SELECT f.app, f.seq, f.idx, f.flow, 0, f.time, f.catalog_version, f.app_version, 'device', '', \
        f.device
            FROM \(source) f
        ),
        earliest AS (
            SELECT DISTINCT ON (m.app, m.flow, m.milestone, m.step, m.subject)
                m.app, m.flow, m.milestone, m.step, m.subject, m.step_index, m.time, \(day("m.time")) AS day,
                m.catalog_version, coalesce(m.app_version, '') AS app_version
            FROM marks m
            WHERE m.milestone IS NOT NULL
            ORDER BY m.app, m.flow, m.milestone, m.step, m.subject, m.time, m.seq, m.idx
        ),
        firsts AS (
            INSERT INTO insight_firsts (app, flow, milestone, step, subject, step_index, day, \
        catalog_version, app_version,
                cohort, millis)
            SELECT e.app, e.flow, e.milestone, e.step, e.subject, e.step_index, e.day, e.catalog_version, \
        e.app_version,
                j.subject IS NOT NULL,
                CASE WHEN e.time >= j.started_at THEN \(bucketSQL("e.time - j.started_at")) END
            FROM earliest e LEFT JOIN insight_journeys j
                ON e.milestone IN ('step', 'completed') AND j.app = e.app AND j.flow = e.flow \
        AND j.subject = e.subject
            ON CONFLICT DO NOTHING
            RETURNING app, flow, milestone, step, subject, step_index, day, catalog_version, app_version, \
        cohort, millis
        ),
        reach AS (SELECT * FROM firsts WHERE cohort),
        progress AS (
            SELECT app, flow, subject, max(step_index) FILTER (WHERE milestone = 'step') AS step_index,
                (array_agg(step ORDER BY step_index DESC, step) FILTER (WHERE milestone = 'step'))[1] AS step,
                bool_or(milestone = 'completed') AS completed
            FROM reach GROUP BY app, flow, subject
        ),
        moved AS (
            UPDATE insight_journeys j SET
                furthest_index = CASE WHEN p.step_index > o.furthest_index THEN p.step_index \
        ELSE o.furthest_index END,
                furthest_step = CASE WHEN p.step_index > o.furthest_index THEN p.step ELSE o.furthest_step \
        END,
                completed = o.completed OR p.completed
            FROM progress p JOIN insight_journeys o ON o.app = p.app AND o.flow = p.flow \
        AND o.subject = p.subject
            WHERE j.app = p.app AND j.flow = p.flow AND j.subject = p.subject
            RETURNING j.app, j.flow, j.subject, o.furthest_step AS old_step, o.furthest_index AS old_index,
                j.furthest_step AS new_step, j.furthest_index AS new_index,
                o.completed OR o.skipped_step IS NOT NULL AS was_ended, j.completed AS now_completed
        ),
        deltas AS (
            SELECT app, flow, subject, milestone AS measure, step, step_index, 1 AS delta FROM reach
            UNION ALL
            SELECT app, flow, subject, 'waiting', old_step, old_index, -1 FROM moved
            WHERE NOT was_ended AND (now_completed OR new_step <> old_step OR new_index <> old_index)
            UNION ALL
            SELECT app, flow, subject, 'waiting', new_step, new_index, 1 FROM moved
            WHERE NOT was_ended AND NOT now_completed AND (new_step <> old_step OR new_index <> old_index)
        ),
        cohorts AS (
            \(addToCohorts("""
                (SELECT d.app, d.flow, d.measure, d.step, d.step_index, d.delta, \(cohortColumns)
                FROM deltas d JOIN insight_journeys j ON j.app = d.app AND j.flow = d.flow \
                AND j.subject = d.subject)
                """))
            RETURNING 1
        ),
        times AS (
            INSERT INTO insight_stage_times (app, flow, milestone, step, start_day, millis, subjects)
            SELECT r.app, r.flow, r.milestone, r.step, j.start_day, r.millis, count(*)
            FROM reach r JOIN insight_journeys j ON j.app = r.app AND j.flow = r.flow \
        AND j.subject = r.subject
            WHERE r.millis IS NOT NULL
            GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
            ON CONFLICT (app, flow, milestone, step, start_day, millis)
            DO UPDATE SET subjects = insight_stage_times.subjects + EXCLUDED.subjects
            RETURNING 1
        )
        INSERT INTO insight_counts (app, flow, milestone, step, step_index, day, catalog_version, \
        app_version, shard, subjects)
        SELECT app, flow, milestone, step, step_index, day, catalog_version, app_version,
            (hashtext(subject) & 3)::smallint, count(*)
        FROM firsts
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9 ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9
        ON CONFLICT (app, flow, milestone, step, step_index, day, catalog_version, app_version, shard)
        DO UPDATE SET subjects = insight_counts.subjects + EXCLUDED.subjects
        """
    }

    /// A skip or dismissal ends a waiting journey where it stands: `waiting` -1, `skipped` +1 there.
    static func countSkips(_ source: String) -> String {
        """
        WITH skips AS (
            SELECT DISTINCT f.app, f.flow, f.account AS subject FROM \(source) f
            WHERE f.kind = 'flowEnded' AND f.ending IN ('skipped', 'dismissed')
        ),
        ended AS (
            UPDATE insight_journeys j SET skipped_step = j.furthest_step, skipped_index = j.furthest_index
            FROM skips s
            WHERE j.app = s.app AND j.flow = s.flow AND j.subject = s.subject AND NOT j.completed \
        AND j.skipped_step IS NULL
            RETURNING j.app, j.flow, j.furthest_step AS step, j.furthest_index AS step_index, \(cohortColumns)
        )
        \(addToCohorts("""
            (SELECT e.*, m.measure, m.delta FROM ended e CROSS JOIN (VALUES ('waiting', -1), ('skipped', 1)) \
            AS m(measure, delta))
            """))
        """
    }

    /// Each experiment subject's first assignment to a variant, by the day it happened (before the
    /// arms' first reaches are written, so a first is told by its absence there).
    static func countAssignmentDays(_ source: String) -> String {
        """
        INSERT INTO insight_arm_days (app, experiment, variant, day, subjects)
        SELECT a.app, a.experiment, a.variant, a.day, count(*)
        FROM (
            SELECT DISTINCT ON (f.app, f.body->>'experiment', f.body->>'variant', f.body->>'subject')
                f.app, f.body->>'experiment' AS experiment, f.body->>'variant' AS variant, \
        f.body->>'subject' AS subject,
                \(day("f.time")) AS day
            FROM \(source) f
            WHERE f.kind = 'assigned' AND f.body->>'experiment' IS NOT NULL AND f.body->>'variant' IS NOT NULL
                AND f.body->>'subject' IS NOT NULL
            ORDER BY f.app, f.body->>'experiment', f.body->>'variant', f.body->>'subject', f.time, f.seq, \
        f.idx
        ) a
        WHERE NOT EXISTS (
            SELECT 1 FROM insight_arm_firsts x
            WHERE x.app = a.app AND x.experiment = a.experiment AND x.variant = a.variant \
        AND x.milestone = 'assigned'
                AND x.step = '' AND x.subject = a.subject)
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (app, experiment, variant, day) DO UPDATE SET subjects = insight_arm_days.subjects + \
        EXCLUDED.subjects
        """
    }

    /// A duration in seconds as its stage-time bucket: whole milliseconds below 100 ms, else two
    /// significant figures of milliseconds, halves rounded up (1,234 ms → 1,200; 1,250 → 1,300).
    /// ``StageTimes/bucket(milliseconds:)`` is the same rule in Swift.
    static func bucketSQL(_ seconds: String) -> String {
        "insight_time_bucket(\(seconds))"
    }

    package static let v16: [String] = [
        """
        CREATE FUNCTION insight_time_bucket(seconds DOUBLE PRECISION) RETURNS BIGINT
        LANGUAGE sql IMMUTABLE STRICT AS $body$
            SELECT CASE WHEN ms < 100 THEN ms ELSE (ms + p / 2) / p * p END
            FROM (SELECT ms, (10::bigint ^ (length(ms::text) - 2))::bigint AS p
                FROM (SELECT least(greatest(round(seconds * 1000), 0), 1e15)::bigint AS ms) a) b
        $body$
        """,
        """
        CREATE TABLE insight_journeys (
            app TEXT NOT NULL,
            flow TEXT NOT NULL,
            subject TEXT NOT NULL,
            started_at DOUBLE PRECISION NOT NULL,
            start_day DATE NOT NULL,
            catalog_version BIGINT NOT NULL,
            app_version TEXT NOT NULL,
            variant TEXT NOT NULL,
            locale TEXT NOT NULL,
            accessibility TEXT NOT NULL,
            device_kind TEXT NOT NULL,
            furthest_step TEXT NOT NULL DEFAULT '',
            furthest_index BIGINT NOT NULL DEFAULT 0,
            completed BOOLEAN NOT NULL DEFAULT false,
            skipped_step TEXT,
            skipped_index BIGINT,
            PRIMARY KEY (app, flow, subject)
        )
        """,
        // The drill-down: who waits (abandoned) at a step, who skipped at it, a page at a time.
        """
        CREATE INDEX insight_journeys_waiting ON insight_journeys (app, flow, furthest_step, subject)
        WHERE NOT completed AND skipped_step IS NULL
        """,
        """
        CREATE INDEX insight_journeys_skipped ON insight_journeys (app, flow, skipped_step, subject)
        WHERE skipped_step IS NOT NULL
        """,
        "CREATE INDEX insight_journeys_by_subject ON insight_journeys (app, subject)",
        """
        CREATE TABLE insight_cohorts (
            app TEXT NOT NULL,
            flow TEXT NOT NULL,
            split TEXT NOT NULL,
            value TEXT NOT NULL,
            start_day DATE NOT NULL,
            measure TEXT NOT NULL,
            step TEXT NOT NULL,
            step_index BIGINT NOT NULL,
            subjects BIGINT NOT NULL,
            PRIMARY KEY (app, flow, split, value, start_day, measure, step, step_index)
        )
        """,
        """
        CREATE TABLE insight_stage_times (
            app TEXT NOT NULL,
            flow TEXT NOT NULL,
            milestone TEXT NOT NULL,
            step TEXT NOT NULL,
            start_day DATE NOT NULL,
            millis BIGINT NOT NULL,
            subjects BIGINT NOT NULL,
            PRIMARY KEY (app, flow, milestone, step, start_day, millis)
        )
        """,
        """
        CREATE TABLE insight_arm_days (
            app TEXT NOT NULL,
            experiment TEXT NOT NULL,
            variant TEXT NOT NULL,
            day DATE NOT NULL,
            subjects BIGINT NOT NULL,
            PRIMARY KEY (app, experiment, variant, day)
        )
        """,
        """
        ALTER TABLE insight_firsts ADD COLUMN cohort BOOLEAN NOT NULL DEFAULT false, ADD COLUMN millis BIGINT
        """,
        // Carried over: journeys from the stored starts, their furthest step and standing from the
        // first reaches, and the counters from both.
        countJourneys(
            """
            (SELECT f.*, p.time, p.catalog_version, p.app_version FROM pushes p JOIN facts f
                ON f.app = p.app AND f.account = p.account AND f.device = p.device AND f.seq = p.seq)
            """),
        "DELETE FROM insight_cohorts WHERE measure = 'waiting'",
        """
        UPDATE insight_journeys j SET furthest_index = p.step_index, furthest_step = p.step, \
        completed = p.completed,
            skipped_step = CASE WHEN p.skipped AND NOT p.completed THEN p.step END,
            skipped_index = CASE WHEN p.skipped AND NOT p.completed THEN p.step_index END
        FROM (
            SELECT fi.app, fi.flow, fi.subject,
                coalesce(max(fi.step_index) FILTER (WHERE fi.milestone = 'step'), 0) AS step_index,
                coalesce((array_agg(fi.step ORDER BY fi.step_index DESC, fi.step) FILTER (WHERE fi.milestone \
        = 'step'))[1], '') AS step,
                bool_or(fi.milestone = 'completed') AS completed, bool_or(fi.milestone = 'skipped') AS skipped
            FROM insight_firsts fi JOIN insight_journeys j0
                ON j0.app = fi.app AND j0.flow = fi.flow AND j0.subject = fi.subject
            GROUP BY 1, 2, 3
        ) p
        WHERE j.app = p.app AND j.flow = p.flow AND j.subject = p.subject
        """,
        """
        UPDATE insight_firsts fi SET cohort = true FROM insight_journeys j
        WHERE fi.milestone IN ('step', 'completed') AND j.app = fi.app AND j.flow = fi.flow \
        AND j.subject = fi.subject
        """,
        addToCohorts(
            """
            (SELECT fi.app, fi.flow, fi.milestone AS measure, fi.step, fi.step_index, 1 AS delta, \
            \(cohortColumns)
            FROM insight_firsts fi JOIN insight_journeys j ON j.app = fi.app AND j.flow = fi.flow \
            AND j.subject = fi.subject
            WHERE fi.cohort
            UNION ALL
            SELECT j.app, j.flow, CASE WHEN j.skipped_step IS NULL THEN 'waiting' ELSE 'skipped' END, \
            j.furthest_step,
                j.furthest_index, 1, \(cohortColumns)
            FROM insight_journeys j WHERE NOT j.completed)
            """),
        """
        INSERT INTO insight_arm_days (app, experiment, variant, day, subjects)
        SELECT a.app, a.experiment, a.variant, a.day, count(*)
        FROM (
            SELECT DISTINCT ON (f.app, f.body->>'experiment', f.body->>'variant', f.body->>'subject')
                f.app, f.body->>'experiment' AS experiment, f.body->>'variant' AS variant, \
        \(day("p.time")) AS day
            FROM facts f JOIN pushes p ON p.app = f.app AND p.account = f.account AND p.device = f.device \
        AND p.seq = f.seq
            WHERE f.kind = 'assigned' AND f.body->>'experiment' IS NOT NULL AND f.body->>'variant' IS NOT NULL
                AND f.body->>'subject' IS NOT NULL
            ORDER BY f.app, f.body->>'experiment', f.body->>'variant', f.body->>'subject', p.time, f.seq, \
        f.idx
        ) a
        GROUP BY 1, 2, 3, 4
        """,
        catchUpFunction(
            counting: [
                "\(countMembers(pushesInRange));", "\(countFacts(factsInRange)[0]);",
                "\(countJourneys(factsInRange));",
                "\(countFirstReaches(factsInRange));", "\(countAssignmentDays(factsInRange));",
                "\(countFacts(factsInRange)[2]);", "\(countSkips(factsInRange));",
            ]),
    ]
}
