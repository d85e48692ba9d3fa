/// Migration `v27-count-by-push`: each catch-up reads the facts it counts once, each push's facts
/// through its key, into a scratch table that every counting statement then reads; and its
/// statements are not compiled by JIT. What it counts is unchanged: the same facts, with the same
/// columns, reach every counting statement.
///
/// Why, measured on the pushes of ten seconds at 3,000 a second (1,728 pushes left to count among
/// 27,000 stored, 39,000 facts):
/// - Each of the nine counting statements joined the pushes of the run to `facts` afresh.
///   PostgreSQL estimates the pushes of a transaction range past its statistics at a few rows,
///   and costs a lookup per push in every one of the eight partitions (it does not foresee that
///   the account picks one), so it hashed every partition of `facts` instead, twice in the
///   statement that reads the source twice: a run cost what the whole table holds, not what it
///   counts (about 230 ms for that run), growing with every fact stored until the plans turned.
/// - Looked up per push inside each statement instead, the estimate of one row per lookup made the
///   planner rescan the lookups inside nested loops: a run of 25,000 pending pushes (after a pause)
///   took over 40 s. Read once into `insight_run_facts`, the counting statements are planned on a
///   table whose size PostgreSQL sees.
/// - Once a statement's estimate passes `jit_above_cost`, PostgreSQL compiles it with LLVM at every
///   run (`plan_cache_mode = force_custom_plan` plans every run afresh): 520 ms for the same run,
///   for statements that take a few milliseconds each.
///
/// The scratch table is unlogged (its rows are never in the WAL, and a standby has it empty): the
/// catch-up runs on the primary only, holding the watermark's lock, so one run uses it at a time,
/// and each run leaves it empty.
extension InsightsSchema {
    package static let v27: [String] = [
        // A fact's columns, then its push's time and versions, in `factsInRange`'s order (the
        // run's insert fills them by position).
        """
        CREATE UNLOGGED TABLE insight_run_facts (
            LIKE facts,
            time DOUBLE PRECISION NOT NULL,
            catalog_version BIGINT NOT NULL,
            app_version TEXT
        )
        """,
        catchUpFunction(
            settings: "SET plan_cache_mode = force_custom_plan SET jit = off",
            counting: [
                """
                INSERT INTO insight_run_facts
                SELECT f.*, p.time, p.catalog_version, p.app_version
                FROM pushes p CROSS JOIN LATERAL (
                    SELECT * FROM facts f
                    WHERE f.app = p.app AND f.account = p.account AND f.device = p.device AND f.seq = p.seq
                    OFFSET 0) f
                WHERE p.xact >= lo AND p.xact < hi;
                """
            ] + countingJourneyEnds("insight_run_facts") + ["DELETE FROM insight_run_facts;"]),
    ]
}
