/// Migration `v17-journey-ends`: a journey is the subject's *first run* and
/// nothing after it. v16 kept moving a journey with every later run: a subject that skipped at
/// step a, started again and finished was counted skipped at a *and* completed (or only completed,
/// when both runs arrived in one catch-up), and a replay could start a journey.
///
/// - `insight_journeys.ended_at`: the time of the run's first ending (any `flowEnded`: completed,
///   skipped, dismissed, dropped, finished elsewhere, held out) at or after its start, fixed by the
///   first catch-up that sees one. Only reaches at or before it count in the journey (its cohort,
///   furthest step, standing and stage times); only a skip or dismissal at or before it skips it.
///   Completed and skipped exclude each other. A run that ended otherwise (dropped by a relaunch
///   or a migration that restarts it) stays abandoned at its furthest step.
/// - A replay's start (`replay: true`) never starts a journey.
/// - A late reach (from another device, counted after the skip) moves a skipped journey's skip to
///   the further step, as it moves a waiting one.
/// - `insight_arm_first_days`: each experiment subject's first assignment and the day it was
///   counted on, so erasure takes it off that day (v16 worked the day out again from the facts,
///   which could name another day than the one counted).
///
/// Carried over: every journey's end from the stored facts; a journey v16 left both completed and
/// skipped keeps whichever came first (from the facts; with neither stored, it stays as counted);
/// the first assignments' days from `insight_arm_firsts` and the earliest stored `assigned` fact,
/// and the assignment days recounted from them. Reaches of later runs that v16 counted into a
/// journey's furthest step are not taken back (their times were not kept); Docs/Server.md says so.
extension InsightsSchema {
    /// A start that may begin a journey: not a replay of a finished flow.
    static let journeyStart = "f.kind = 'flowStarted' AND (f.body->>'replay') IS DISTINCT FROM 'true'"

    /// Journeys: each subject's first start of a flow in `source` (replays left out), `started`
    /// and `waiting` in its cohort.
    static func countJourneyStarts(_ source: String) -> String {
        let v16 = countJourneys(source)
        let starts = v16.replacingOccurrences(
            of: "WHERE f.kind = 'flowStarted'\n", with: "WHERE \(journeyStart)\n")
        precondition(starts != v16, "countJourneys no longer reads its starts as countJourneyStarts expects")
        return starts
    }

    /// Fixes each open journey's end: its first `flowEnded` at or after its start in `source`.
    static func countJourneyEnds(_ source: String) -> String {
        """
        UPDATE insight_journeys j SET ended_at = e.time
        FROM (
            SELECT o.app, o.flow, o.subject, min(f.time) AS time
            FROM \(source) f JOIN insight_journeys o ON o.app = f.app AND o.flow = f.flow \
        AND o.subject = f.account
            WHERE f.kind = 'flowEnded' AND o.ended_at IS NULL AND f.time >= o.started_at
            GROUP BY 1, 2, 3
        ) e
        WHERE j.app = e.app AND j.flow = e.flow AND j.subject = e.subject
        """
    }

    /// Each milestone's first reach, as v4 counts it; a reach at or before its journey's end (and a
    /// completion of a journey not skipped) counts in the journey: its cohort, its stage time, and
    /// its move to a further step (a skipped journey's skip moves with it) or to completed.
    static func countJourneyReaches(_ source: String) -> String {
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
        placed AS (
            SELECT e.*, j.started_at,
                j.subject IS NOT NULL AND (j.ended_at IS NULL OR e.time <= j.ended_at)
                    AND (e.milestone <> 'completed' OR j.skipped_step IS NULL) AS cohort
            FROM earliest e LEFT JOIN insight_journeys j
                ON e.milestone IN ('step', 'completed') AND j.app = e.app AND j.flow = e.flow \
        AND j.subject = e.subject
        ),
        firsts AS (
            INSERT INTO insight_firsts (app, flow, milestone, step, subject, step_index, day, \
        catalog_version, app_version,
                cohort, millis)
            SELECT p.app, p.flow, p.milestone, p.step, p.subject, p.step_index, p.day, p.catalog_version, \
        p.app_version,
                p.cohort, CASE WHEN p.cohort AND p.time >= p.started_at THEN \
        \(bucketSQL("p.time - p.started_at")) END
            FROM placed p
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
                completed = o.completed OR p.completed,
                skipped_step = CASE WHEN o.skipped_step IS NOT NULL AND p.step_index > o.furthest_index
                    THEN p.step ELSE o.skipped_step END,
                skipped_index = CASE WHEN o.skipped_step IS NOT NULL AND p.step_index > o.furthest_index
                    THEN p.step_index ELSE o.skipped_index END
            FROM progress p JOIN insight_journeys o ON o.app = p.app AND o.flow = p.flow \
        AND o.subject = p.subject
            WHERE j.app = p.app AND j.flow = p.flow AND j.subject = p.subject
            RETURNING j.app, j.flow, j.subject, o.furthest_step AS old_step, o.furthest_index AS old_index,
                j.furthest_step AS new_step, j.furthest_index AS new_index,
                o.completed OR o.skipped_step IS NOT NULL AS was_ended, j.completed AS now_completed,
                o.skipped_step AS old_skip, o.skipped_index AS old_skip_index,
                j.skipped_step AS new_skip, j.skipped_index AS new_skip_index
        ),
        deltas AS (
            SELECT app, flow, subject, milestone AS measure, step, step_index, 1 AS delta FROM reach
            UNION ALL
            SELECT app, flow, subject, 'waiting', old_step, old_index, -1 FROM moved
            WHERE NOT was_ended AND (now_completed OR new_step <> old_step OR new_index <> old_index)
            UNION ALL
            SELECT app, flow, subject, 'waiting', new_step, new_index, 1 FROM moved
            WHERE NOT was_ended AND NOT now_completed AND (new_step <> old_step OR new_index <> old_index)
            UNION ALL
            SELECT app, flow, subject, 'skipped', old_skip, old_skip_index, -1 FROM moved
            WHERE old_skip IS NOT NULL AND new_skip_index <> old_skip_index
            UNION ALL
            SELECT app, flow, subject, 'skipped', new_skip, new_skip_index, 1 FROM moved
            WHERE old_skip IS NOT NULL AND new_skip_index <> old_skip_index
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

    /// A skip or dismissal at or before its journey's end (after ``countJourneyEnds(_:)``) ends a
    /// waiting journey where it stands: `waiting` -1, `skipped` +1 there.
    static func countJourneySkips(_ source: String) -> String {
        """
        WITH skips AS (
            SELECT DISTINCT f.app, f.flow, f.account AS subject
            FROM \(source) f JOIN insight_journeys o ON o.app = f.app AND o.flow = f.flow \
        AND o.subject = f.account
            WHERE f.kind = 'flowEnded' AND f.ending IN ('skipped', 'dismissed')
                AND f.time >= o.started_at AND f.time <= o.ended_at
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

    /// Each experiment subject's first assignment to a variant, kept with the day it is counted on
    /// (`insight_arm_first_days`), and counted on that day.
    static func countFirstAssignments(_ source: String) -> String {
        """
        WITH firsts AS (
            INSERT INTO insight_arm_first_days (app, experiment, variant, subject, day)
            SELECT DISTINCT ON (f.app, f.body->>'experiment', f.body->>'variant', f.body->>'subject')
                f.app, f.body->>'experiment', f.body->>'variant', f.body->>'subject', \(day("f.time"))
            FROM \(source) f
            WHERE f.kind = 'assigned' AND f.body->>'experiment' IS NOT NULL AND f.body->>'variant' IS NOT NULL
                AND f.body->>'subject' IS NOT NULL
            ORDER BY f.app, f.body->>'experiment', f.body->>'variant', f.body->>'subject', f.time, f.seq, \
        f.idx
            ON CONFLICT DO NOTHING
            RETURNING app, experiment, variant, day
        )
        INSERT INTO insight_arm_days (app, experiment, variant, day, subjects)
        SELECT app, experiment, variant, day, count(*) FROM firsts
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (app, experiment, variant, day) DO UPDATE SET subjects = insight_arm_days.subjects + \
        EXCLUDED.subjects
        """
    }

    /// Every stored fact with its push's time and versions, for the carry-over.
    static let storedFacts = """
        (SELECT f.*, p.time, p.catalog_version, p.app_version FROM pushes p JOIN facts f
            ON f.app = p.app AND f.account = p.account AND f.device = p.device AND f.seq = p.seq)
        """

    /// What v17's `insight_catch_up()` counts, reading the facts of the pushes in [lo, hi) from
    /// `facts` (with their push's time and versions): v27 reads them from elsewhere.
    static func countingJourneyEnds(_ facts: String) -> [String] {
        [
            "\(countMembers(pushesInRange));", "\(countFacts(facts)[0]);", "\(countJourneyStarts(facts));",
            "\(countJourneyEnds(facts));", "\(countJourneyReaches(facts));",
            "\(countFirstAssignments(facts));",
            "\(countFacts(facts)[2]);", "\(countJourneySkips(facts));",
        ]
    }

    package static let v17: [String] = [
        "ALTER TABLE insight_journeys ADD COLUMN ended_at DOUBLE PRECISION",
        """
        CREATE TABLE insight_arm_first_days (
            app TEXT NOT NULL,
            experiment TEXT NOT NULL,
            variant TEXT NOT NULL,
            subject TEXT NOT NULL,
            day DATE NOT NULL,
            PRIMARY KEY (app, experiment, variant, subject)
        )
        """,
        "CREATE INDEX insight_arm_first_days_by_subject ON insight_arm_first_days (app, subject)",
        // Carried over: each journey's end from the stored facts.
        countJourneyEnds(storedFacts),
        // A journey v16 left both completed and skipped keeps the ending that came first.
        """
        CREATE TEMPORARY TABLE v17_both ON COMMIT DROP AS
        SELECT j.app, j.flow, j.subject, j.skipped_step, j.skipped_index, \(cohortColumns),
            (SELECT f.ending FROM \(storedFacts) f
                WHERE f.app = j.app AND f.flow = j.flow AND f.account = j.subject AND f.kind = 'flowEnded'
                    AND f.time >= j.started_at
                ORDER BY f.time, f.seq, f.idx LIMIT 1) AS first_ending
        FROM insight_journeys j WHERE j.completed AND j.skipped_step IS NOT NULL
        """,
        """
        UPDATE insight_journeys j SET skipped_step = NULL, skipped_index = NULL
        FROM v17_both b WHERE b.first_ending = 'completed' AND j.app = b.app AND j.flow = b.flow \
        AND j.subject = b.subject
        """,
        addToCohorts(
            """
            (SELECT b.app, b.flow, 'skipped' AS measure, b.skipped_step AS step, b.skipped_index AS \
            step_index, -1 AS delta,
                \(cohortColumns.replacingOccurrences(of: "j.", with: "b."))
            FROM v17_both b WHERE b.first_ending = 'completed')
            """),
        """
        UPDATE insight_journeys j SET completed = false
        FROM v17_both b WHERE b.first_ending IN ('skipped', 'dismissed')
            AND j.app = b.app AND j.flow = b.flow AND j.subject = b.subject
        """,
        """
        WITH gone AS (
            UPDATE insight_firsts fi SET cohort = false, millis = NULL
            FROM v17_both b, insight_firsts o
            WHERE b.first_ending IN ('skipped', 'dismissed') AND fi.app = b.app AND fi.flow = b.flow
                AND fi.subject = b.subject AND fi.milestone = 'completed' AND fi.cohort
                AND o.app = fi.app AND o.flow = fi.flow AND o.milestone = fi.milestone AND o.step = fi.step
                AND o.subject = fi.subject
            RETURNING fi.app, fi.flow, o.millis, \(cohortColumns.replacingOccurrences(of: "j.", with: "b."))
        ),
        times AS (
            UPDATE insight_stage_times t SET subjects = t.subjects - g.n
            FROM (SELECT app, flow, start_day, millis, count(*) AS n FROM gone WHERE millis IS NOT NULL \
        GROUP BY 1, 2, 3, 4) g
            WHERE t.app = g.app AND t.flow = g.flow AND t.milestone = 'completed' AND t.step = ''
                AND t.start_day = g.start_day AND t.millis = g.millis
            RETURNING 1
        )
        \(addToCohorts("""
            (SELECT g.app, g.flow, 'completed' AS measure, '' AS step, 0::bigint AS step_index, -1 AS delta, \
            \(cohortColumns.replacingOccurrences(of: "j.", with: "g.")) FROM gone g)
            """))
        """,
        // The first assignments with the day each was counted on (the earliest stored fact's), and
        // the days recounted from them.
        """
        INSERT INTO insight_arm_first_days (app, experiment, variant, subject, day)
        SELECT * FROM (SELECT x.app, x.experiment, x.variant, x.subject, coalesce((
            SELECT \(day("f.time")) FROM \(storedFacts) f
            WHERE f.app = x.app AND f.kind = 'assigned' AND f.body->>'experiment' = x.experiment
                AND f.body->>'variant' = x.variant AND f.body->>'subject' = x.subject
            ORDER BY f.time, f.seq, f.idx LIMIT 1), (
            SELECT min(d.day) FROM insight_arm_days d
            WHERE d.app = x.app AND d.experiment = x.experiment AND d.variant = x.variant)) AS day
        FROM insight_arm_firsts x WHERE x.milestone = 'assigned' AND x.step = '') s
        WHERE s.day IS NOT NULL
        ON CONFLICT DO NOTHING
        """,
        "DELETE FROM insight_arm_days",
        """
        INSERT INTO insight_arm_days (app, experiment, variant, day, subjects)
        SELECT app, experiment, variant, day, count(*) FROM insight_arm_first_days GROUP BY 1, 2, 3, 4
        """,
        catchUpFunction(counting: countingJourneyEnds(factsInRange)),
    ]
}
