import Logging
import PostgresNIO
import ServerDatabase
import ServerInsights
import ServerKit
import ServiceLifecycle
import TourCodec

/// Facts set apart are held, not dropped (Docs/Server.md, "Facts no catalog declares"): a push
/// keeps each fact outside the app's tracking plan in `held_facts`, whole, stamped with the plan
/// generation that set it apart; `unplanned_facts` keeps the team's list of them. When a catalog
/// that declares such a fact lands, the fact is *admitted*: moved to `facts` and counted once.
///
/// The plan's generation (`tracking_plan_generations`) grows by one with every catalog stored, by a
/// trigger, so no path that stores a catalog can forget it. Admission reads the plan under the
/// generation row's lock and examines only facts stamped with an older generation, so a fact is
/// examined once per plan change, whoever set it apart and whenever its push committed:
///
/// - a push that classified its facts before a catalog committed and commits after it leaves
///   facts stamped with the older generation, which the next admission examines;
/// - the store that stored a catalog admits at once (after its own commit), and every server
///   admits whatever is left every few seconds (``HeldFactsAdmission``), so a store that died
///   between its commit and its admission loses nothing.
///
/// Counting an admitted fact is the insights catch-up's job, as for any push: admission moves the
/// pushes of each device from the first admitted row on to its own transaction (`pushes.xact`), and
/// the catch-up counts them again. Counting a push again is idempotent (every counter adds only the
/// first reach of a subject, kept in a membership table), and counting the later pushes again
/// lets a step entered after a newly declared experiment's assignment count for its variant.
/// Admission takes the insights watermark's lock, as erasure does, so an erasure never misses a
/// fact admitted while it ran.
package enum HeldFacts {
    /// v26: held facts, the plan's generations and the trigger that moves them.
    package static let v26 = [
        """
        CREATE TABLE held_facts (
            app TEXT NOT NULL,
            account TEXT NOT NULL,
            device TEXT NOT NULL,
            seq BIGINT NOT NULL,
            idx BIGINT NOT NULL,
            kind TEXT NOT NULL,
            flow TEXT NOT NULL,
            step TEXT,
            step_index BIGINT NOT NULL DEFAULT 0,
            ending TEXT,
            body JSONB NOT NULL,
            generation BIGINT NOT NULL,
            PRIMARY KEY (app, account, device, seq, idx),
            FOREIGN KEY (app, account, device, seq) REFERENCES pushes ON DELETE CASCADE
        )
        """,
        "CREATE INDEX held_facts_by_generation ON held_facts (app, generation)",
        """
        CREATE TABLE tracking_plan_generations (
            app TEXT PRIMARY KEY,
            generation BIGINT NOT NULL
        )
        """,
        """
        INSERT INTO tracking_plan_generations (app, generation) SELECT app, count(*) FROM catalogs \
        GROUP BY app
        """,
        """
        CREATE FUNCTION tracking_plan_grown() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            INSERT INTO tracking_plan_generations (app, generation) VALUES (NEW.app, 1)
            ON CONFLICT (app) DO UPDATE SET generation = tracking_plan_generations.generation + 1;
            RETURN NULL;
        END
        $body$
        """,
        """
        CREATE TRIGGER catalogs_grow_the_plan AFTER INSERT ON catalogs
        FOR EACH ROW EXECUTE FUNCTION tracking_plan_grown()
        """,
    ]

    /// How many held facts one admission's transaction moves at most: a large backlog is admitted
    /// over several transactions, each within a write's bounds.
    static let batch = 5_000

    /// Admits every held fact of `app` that its plan now declares; how many were admitted.
    @discardableResult
    static func admit(app: String, writes: WritableDatabase) async throws -> Int {
        var total = 0
        while true {
            let (admitted, more) = try await admitBatch(app: app, writes: writes)
            total += admitted
            if !more { return total }
        }
    }

    /// One transaction of ``admit(app:writes:)``: the facts admitted, and whether facts of an older
    /// generation are left (a batch's limit was reached).
    private static func admitBatch(app: String, writes: WritableDatabase) async throws -> (Int, Bool) {
        try await writes.write { connection, logger in
            // The watermark's lock first, as erasure and the catch-up take it, then the plan's.
            try await InsightsProgress.lock(on: connection, logger: logger)
            var generation: Int64?
            for try await current in try await connection.query(
                "SELECT generation FROM tracking_plan_generations WHERE app = \(app) FOR UPDATE",
                logger: logger
            ).decode(Int64.self) {
                generation = current
            }
            guard let generation else { return (0, false) }
            var documents: [String] = []
            for try await document in try await connection.query(
                "SELECT document FROM catalogs WHERE app = \(app)", logger: logger
            ).decode(String.self) {
                documents.append(document)
            }
            let plan = TrackingPlan(documents: documents)
            // What the held facts name, once per distinct name: the plan decides in Swift.
            var flows: [String] = []
            var steps: [String] = []
            var experiments: [String] = []
            for try await (flow, step, experiment) in try await connection.query(
                """
                SELECT DISTINCT flow, coalesce(step, ''), coalesce(body->>'experiment', '')
                FROM held_facts WHERE app = \(app) AND generation < \(generation)
                """, logger: logger
            ).decode((String, String, String).self)
            where plan.declares(
                flow: flow, step: step.isEmpty ? nil : step, experiment: experiment.isEmpty ? nil : experiment
            ) {
                flows.append(flow)
                steps.append(step)
                experiments.append(experiment)
            }
            var admitted = 0
            if !flows.isEmpty {
                for try await count in try await connection.query(
                    """
                    WITH declared AS (
                        SELECT * FROM UNNEST(\(flows)::text[], \(steps)::text[], \(experiments)::text[]) AS \
                    d(flow, step, experiment)
                    ),
                    chosen AS (
                        SELECT h.app, h.account, h.device, h.seq, h.idx FROM held_facts h JOIN declared d
                            ON h.flow = d.flow AND coalesce(h.step, '') = d.step
                            AND coalesce(h.body->>'experiment', '') = d.experiment
                        WHERE h.app = \(app) AND h.generation < \(generation)
                        ORDER BY h.account, h.device, h.seq, h.idx
                        LIMIT \(Self.batch)
                    ),
                    admitted AS (
                        DELETE FROM held_facts h USING chosen c
                        WHERE h.app = c.app AND h.account = c.account AND h.device = c.device \
                    AND h.seq = c.seq AND h.idx = c.idx
                        RETURNING h.*
                    ),
                    stored AS (
                        INSERT INTO facts (app, account, device, seq, idx, kind, flow, step, step_index, \
                    ending, body)
                        SELECT app, account, device, seq, idx, kind, flow, step, step_index, ending, body \
                    FROM admitted
                        ON CONFLICT DO NOTHING
                        RETURNING 1
                    ),
                    firsts AS (SELECT app, account, device, min(seq) AS seq FROM admitted GROUP BY 1, 2, 3),
                    recounted AS (
                        UPDATE pushes p SET xact = pg_current_xact_id() FROM firsts a
                        WHERE p.app = a.app AND p.account = a.account AND p.device = a.device \
                    AND p.seq >= a.seq
                        RETURNING 1
                    ),
                    listed AS (
                        SELECT app, account, device, left(flow, 128) AS flow,
                            left(coalesce(step, body->>'experiment', ''), 128) AS step, left(kind, \
                    64) AS kind, count(*) AS n
                        FROM admitted GROUP BY 1, 2, 3, 4, 5, 6
                    ),
                    unlisted AS (
                        UPDATE unplanned_facts u SET facts = u.facts - l.n FROM listed l
                        WHERE u.app = l.app AND u.account = l.account AND u.device = l.device \
                    AND u.flow = l.flow
                            AND u.step = l.step AND u.kind = l.kind
                        RETURNING 1
                    )
                    SELECT (SELECT count(*) FROM admitted)::bigint + 0 * (SELECT count(*) FROM stored)::bigint
                        + 0 * (SELECT count(*) FROM recounted)::bigint + 0 * (SELECT count(*) \
                    FROM unlisted)::bigint
                    """, logger: logger
                ).decode(Int64.self) {
                    admitted = Int(count)
                }
                try await connection.query(
                    "DELETE FROM unplanned_facts WHERE app = \(app) AND facts <= 0", logger: logger)
            }
            if admitted >= Self.batch { return (admitted, true) }
            // Whatever is left is outside the newest plan: examined again only when it grows.
            try await connection.query(
                """
                UPDATE held_facts SET generation = \(generation) WHERE app = \(app) \
                AND generation < \(generation)
                """,
                logger: logger)
            return (admitted, false)
        }
    }

    /// The apps with held facts of an older plan generation than their app's: a read on the
    /// primary (`reads` shares its pool), which takes no writer's lease; each app found is then
    /// admitted in a write of its own.
    static func appsToExamine(reads: ReadOnlyDatabase) async throws -> [String] {
        try await reads.read { connection, logger in
            var apps: [String] = []
            for try await app in try await connection.query(
                """
                SELECT g.app FROM tracking_plan_generations g
                WHERE EXISTS (SELECT 1 FROM held_facts h WHERE h.app = g.app AND h.generation < g.generation)
                ORDER BY g.app
                """, logger: logger
            ).decode(String.self) {
                apps.append(app)
            }
            return apps
        }
    }
}

/// Every few seconds, the held facts a plan now declares are admitted (``HeldFacts``): the net
/// under the admission a catalog's store runs at once. Several servers may run it: each admission
/// takes its app's plan row, and facts admitted are gone for the next.
package struct HeldFactsAdmission: Service {
    let writes: WritableDatabase
    /// Reads on the primary: what a replica shows may lag the catalog that was just stored.
    let reads: ReadOnlyDatabase
    let ready: SchemaReady?
    let interval: Duration
    let logger: Logger

    package init(
        writes: WritableDatabase, reads: ReadOnlyDatabase, ready: SchemaReady?, interval: Duration,
        logger: Logger
    ) {
        self.writes = writes
        self.reads = reads
        self.ready = ready
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await ready?.wait()
            while !Task.isCancelled {
                do {
                    for app in try await HeldFacts.appsToExamine(reads: reads) {
                        let admitted = try await HeldFacts.admit(app: app, writes: writes)
                        if admitted > 0 {
                            logger.info(
                                "held facts admitted", metadata: ["app": "\(app)", "facts": "\(admitted)"])
                        }
                    }
                } catch {
                    logger.warning(
                        "held facts could not be examined",
                        metadata: ["cause": "\(DatabaseUnavailable.describe(error))"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
