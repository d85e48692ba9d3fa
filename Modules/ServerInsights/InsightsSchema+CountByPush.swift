/// Migration `v27-count-by-push`: the catch-up reads the facts of the pushes it counts through
/// each push's key, and without JIT compilation. What it counts is unchanged: the same facts, with
/// the same columns, reach every counting statement.
///
/// Why, measured on the pushes of ten seconds at 3,000 a second (1,728 pushes left to count among
/// 27,000 stored, 39,000 facts):
/// - `factsInRange` joins the pushes of the run to `facts`. PostgreSQL estimates the pushes of a
///   transaction range past its statistics at a few rows, and so hashed every partition of
///   `facts`, twice in the statement that reads the source twice: a run cost what the whole table
///   holds, not what it counts, and grew with every fact stored (about 230 ms for that run).
///   Looked up per push (its account picks the partition, its key the rows), the run costs what
///   it counts.
/// - Once those lookups' estimates pass `jit_above_cost`, PostgreSQL compiles each counting
///   statement with LLVM at every run (`plan_cache_mode = force_custom_plan` plans every run
///   afresh): 520 ms for the same run, for statements that take a few milliseconds each. With
///   `jit = off` the run took 100-130 ms.
extension InsightsSchema {
    /// The facts of the pushes of the transactions in [lo, hi), with their push's time and
    /// versions: each push's facts looked up by its key. `OFFSET 0` keeps the lookup a lookup
    /// (without it the planner pulls the subquery up into a join and may hash `facts` again).
    static let factsOfPushesInRange = """
        (SELECT f.*, p.time, p.catalog_version, p.app_version FROM pushes p
            CROSS JOIN LATERAL (
                SELECT * FROM facts f
                WHERE f.app = p.app AND f.account = p.account AND f.device = p.device AND f.seq = p.seq
                OFFSET 0) f
        WHERE p.xact >= lo AND p.xact < hi)
        """

    package static let v27: [String] = [
        catchUpFunction(
            facts: factsOfPushesInRange, settings: "SET plan_cache_mode = force_custom_plan SET jit = off")
    ]
}
