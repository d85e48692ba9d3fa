import PostgresNIO

/// Erasure's share of the journey aggregates (`InsightsSchema.v16`), run before the subject's
/// first-reach rows and facts go, since both say what was counted.
extension InsightsErasure {
    /// Takes the subject's journeys and everything counted from them out: its start, each first
    /// reach counted in its cohort (`insight_firsts.cohort`), its standing (waiting where it is, or
    /// skipped where it skipped), and its stage times. Answers the journeys removed.
    static func journeys(app: String, subject: String) -> PostgresQuery {
        PostgresQuery(
            unsafeSQL: """
                WITH j AS (DELETE FROM insight_journeys WHERE app = $1 AND subject = $2 RETURNING *),
                reach AS (
                    SELECT fi.flow, fi.milestone, fi.step, fi.step_index, fi.millis FROM insight_firsts fi
                    WHERE fi.app = $1 AND fi.subject = $2 AND fi.cohort
                ),
                deltas AS (
                    SELECT j.app, j.flow, 'started' AS measure, '' AS step, 0::bigint AS step_index,
                        -1 AS delta, \(InsightsSchema.cohortColumns)
                    FROM j
                    UNION ALL
                    SELECT j.app, j.flow, r.milestone, r.step, r.step_index, -1,
                        \(InsightsSchema.cohortColumns)
                    FROM reach r JOIN j ON j.flow = r.flow
                    UNION ALL
                    SELECT j.app, j.flow, 'skipped', j.skipped_step, j.skipped_index, -1,
                        \(InsightsSchema.cohortColumns)
                    FROM j WHERE j.skipped_step IS NOT NULL
                    UNION ALL
                    SELECT j.app, j.flow, 'waiting', j.furthest_step, j.furthest_index, -1,
                        \(InsightsSchema.cohortColumns)
                    FROM j WHERE NOT j.completed AND j.skipped_step IS NULL
                ),
                cohorts AS (
                    \(InsightsSchema.addToCohorts("deltas"))
                    RETURNING 1
                ),
                times AS (
                    UPDATE insight_stage_times t SET subjects = t.subjects - g.n
                    FROM (
                        SELECT r.flow, r.milestone, r.step, j.start_day, r.millis, count(*) AS n
                        FROM reach r JOIN j ON j.flow = r.flow WHERE r.millis IS NOT NULL
                        GROUP BY 1, 2, 3, 4, 5
                    ) g
                    WHERE t.app = $1 AND t.flow = g.flow AND t.milestone = g.milestone AND t.step = g.step
                        AND t.start_day = g.start_day AND t.millis = g.millis
                    RETURNING 1
                )
                SELECT count(*)::bigint FROM j
                """, binds: bindings(app, subject))
    }

    /// Takes the first assignments of the account's experiment subjects (as its devices reported
    /// them, `insight_assignments`) off the days they were counted on (`insight_arm_first_days`,
    /// v17). Answers the first assignments removed.
    static func assignmentDays(app: String, subject: String) -> PostgresQuery {
        PostgresQuery(
            unsafeSQL: """
                WITH gone AS (
                    DELETE FROM insight_arm_first_days d
                    WHERE d.app = $1 AND d.subject IN (
                        SELECT DISTINCT a.subject FROM insight_assignments a WHERE a.app = $1
                            AND a.account = $2)
                    RETURNING d.experiment, d.variant, d.day
                ),
                fixed AS (
                    UPDATE insight_arm_days a SET subjects = a.subjects - g.n
                    FROM (SELECT experiment, variant, day, count(*) AS n FROM gone GROUP BY 1, 2, 3) g
                    WHERE a.app = $1 AND a.experiment = g.experiment AND a.variant = g.variant
                        AND a.day = g.day
                    RETURNING 1
                )
                SELECT count(*)::bigint FROM gone
                """, binds: bindings(app, subject))
    }

    /// `$1` the app, `$2` the subject.
    private static func bindings(_ app: String, _ subject: String) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(app)
        binds.append(subject)
        return binds
    }
}
