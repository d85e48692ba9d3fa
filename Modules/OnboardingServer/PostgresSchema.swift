import Logging
import PostgresNIO
import SchemaMigrations
import ServerControlPlane
import ServerDatabase
import ServerInsights
import ServerKit
import ServerPublishing
import ServerSyncAPI

/// The server's versioned schema, in the shape the device's shares (`SchemaHistory`;
/// `Modules/Persistence/Schema.swift`): each migration has an id and never changes after it lands; a
/// change is a new migration appended here. Applied at start-up (and by `onboarding-server migrate`)
/// under an advisory lock, so several processes starting together apply each migration once.
public enum PostgresSchema {
    /// Each migration's statements run one by one (the extended protocol takes one statement per
    /// query) in one transaction.
    public static let migrations: [(id: String, statements: [String])] = [
        (
            "v1-pushes-facts-account-flows",
            [
                """
                CREATE TABLE pushes (
                    app TEXT NOT NULL,
                    account TEXT NOT NULL,
                    device TEXT NOT NULL,
                    seq BIGINT NOT NULL,
                    time DOUBLE PRECISION NOT NULL,
                    event TEXT NOT NULL,
                    catalog_version BIGINT NOT NULL,
                    received_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                    PRIMARY KEY (app, account, device, seq)
                )
                """,
                """
                CREATE TABLE facts (
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
                    PRIMARY KEY (app, account, device, seq, idx),
                    FOREIGN KEY (app, account, device, seq) REFERENCES pushes
                )
                """,
                """
                CREATE INDEX facts_by_app_flow_kind ON facts (app, flow, kind)
                """,
                """
                CREATE TABLE account_flows (
                    app TEXT NOT NULL,
                    account TEXT NOT NULL,
                    flow TEXT NOT NULL,
                    order_key TEXT COLLATE "C" NOT NULL,
                    epoch BIGINT NOT NULL,
                    standing TEXT NOT NULL,
                    version TEXT,
                    at_ms BIGINT NOT NULL,
                    device TEXT NOT NULL,
                    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                    PRIMARY KEY (app, account, flow)
                )
                """,
            ]
        ),
        (
            // "Sign out everywhere": an account's tokens issued before `not_before` are refused.
            "v2-token-cutoffs",
            [
                """
                CREATE TABLE token_cutoffs (
                    app TEXT NOT NULL,
                    account TEXT NOT NULL,
                    not_before DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (app, account)
                )
                """
            ]
        ),
        (
            // Catalog documents per app and version: those compiled into the app's binaries
            // (registered: the vocabulary and history a publication is checked against) and those
            // published, with their rollout. A withdrawn publication stays, for the history.
            "v3-catalogs",
            [
                """
                CREATE TABLE catalogs (
                    app TEXT NOT NULL,
                    version BIGINT NOT NULL CHECK (version >= 1),
                    source TEXT NOT NULL CHECK (source IN ('compiled', 'published')),
                    fingerprint TEXT NOT NULL,
                    document TEXT NOT NULL,
                    rollout INTEGER NOT NULL DEFAULT 0 CHECK (rollout BETWEEN 0 AND 100),
                    recorded_at DOUBLE PRECISION NOT NULL,
                    recorded_by TEXT NOT NULL,
                    withdrawn_at DOUBLE PRECISION,
                    PRIMARY KEY (app, version)
                )
                """
            ]
        ),
        // The aggregates reports and the dashboard read, counted by an incremental job (InsightsSchema).
        ("v4-insights", InsightsSchema.v4),
        (
            // The dashboard's sign-in sessions: only the SHA-256 of the cookie's random value is
            // stored, so the table gives no one a session. Signing out deletes the row.
            "v5-dashboard-sessions",
            [
                """
                CREATE TABLE dashboard_sessions (
                    id_hash TEXT PRIMARY KEY,
                    app TEXT,
                    created_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL
                )
                """
            ]
        ),
        // Standings counted without two pushes waiting on one counter row (InsightsSchema.v6).
        ("v6-standings-per-connection", InsightsSchema.v6),
        (
            // The display budget across an account's devices (Docs/DisplayBudget.md): each device's
            // grow-only count of flow starts per UTC day, and that day's last start. The account's in
            // every app of the family, so the key has no app.
            "v7-display-budget",
            [
                """
                CREATE TABLE budget_counts (
                    account TEXT NOT NULL,
                    device TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    starts INTEGER NOT NULL CHECK (starts >= 0),
                    last_start DOUBLE PRECISION,
                    PRIMARY KEY (account, day, device)
                )
                """
            ]
        ),
        (
            // Facts are read by their key only: by the insights job (joined to the pushes it counts)
            // and by `reportByScan`, which reads an app's facts through the key's first column. The
            // index on (app, flow, kind) only cost every push an index entry per fact, and on a
            // young table with stale statistics the planner chose it for the insights job's join,
            // reading every fact of the app once per push counted (650 ms runs under
            // `scripts/bench --sections 5`).
            "v8-facts-by-key-only",
            ["DROP INDEX IF EXISTS facts_by_app_flow_kind"]
        ),
        // People, roles, credentials, the audit trail and signed publications (ControlPlaneSchema).
        ("v9-control-plane", ControlPlaneSchema.v9),
        // A watermark only this database's transactions hold back (InsightsSchema.v10).
        ("v10-watermark-per-database", InsightsSchema.v10),
        // Enrollment keys and installs: apps without sign-in (Installs.v11).
        ("v11-enrollment-keys-installs", Installs.v11),
        // Facts no catalog of the app declares, kept apart (TrackingPlan.v12).
        ("v12-unplanned-facts", TrackingPlan.v12),
        // Lookups by subject, for erasure (Erasure.v13).
        ("v13-erasure-indexes", Erasure.v13),
        // Retention's watermark (FactRetention.v14).
        ("v14-fact-retention", FactRetention.v14),
        // Flows off the overview (FlowArchive.v15).
        ("v15-archived-flows", FlowArchive.v15),
        // Journeys: cohorts, splits, stage times, standings, assignment days (InsightsSchema.v16).
        ("v16-journeys", InsightsSchema.v16),
        // A journey is its first run only: its end, replays left out; assignment days kept
        // (InsightsSchema.v17).
        ("v17-journey-ends", InsightsSchema.v17),
        // The studio's drafts, a revision per save (CatalogDrafts.v18).
        ("v18-catalog-drafts", CatalogDrafts.v18),
        // Pushes and facts partitioned by HASH (account), migrated in place (FactPartitions.v19).
        ("v19-partitioned-facts", FactPartitions.v19),
        // Requests sent again get their first answer (ServerDatabase's Idempotency).
        ("v20-idempotent-requests", Idempotency.migration),
        // An erasure or a sign-out fences its subject's pushes (SubjectFence.v21).
        ("v21-subject-fence", SubjectFence.v21),
        // Cut-offs under the subject's pseudonyms, not its id (SubjectFence.v22).
        ("v22-pseudonymous-cutoffs", SubjectFence.v22),
        // Readiness writes a row to know that commits complete (CommitProbe.v23).
        ("v23-readiness-probe", CommitProbe.v23),
        // Guarded rollouts: a publication's stages, guardrail and the guard's looks (GuardedRollouts.v24).
        ("v24-guarded-rollouts", GuardedRollouts.v24),
        // A draft's name, one per draft (CatalogDrafts.v25).
        ("v25-draft-names", CatalogDrafts.v25),
        // Facts set apart are held whole, and admitted when a plan declares them (HeldFacts.v26).
        ("v26-held-facts", HeldFacts.v26),
        // The catch-up looks up each counted push's facts by its key, without JIT (InsightsSchema.v27).
        ("v27-count-by-push", InsightsSchema.v27),
        // Each partition of facts references its own partition of pushes (FactPartitions.v28).
        ("v28-facts-reference-their-partition", FactPartitions.v28),
    ]

    /// An arbitrary constant: the advisory lock that serialises migrations across processes.
    static let lockID: Int64 = 0x0B0A_4D16

    /// The migrations as the shared shape.
    public static let history = SchemaHistory(migrations.map { SchemaMigration($0.id, $0.statements) })

    /// Applies the migrations not applied yet, each in its own transaction under the advisory lock,
    /// looking again inside it (another process may have applied it meanwhile), up to `last` when
    /// given.
    /// - Returns: the ids applied now.
    @discardableResult
    public static func migrate(_ client: PostgresClient, logger: Logger, through last: String? = nil)
        async throws
        -> [String]
    {
        // Only a database that has never been migrated gets the table: a server running as a role
        // that may not create tables (Docs/Security.md, "Separation of duties") starts on a
        // database its owner migrated, reading what was applied and writing nothing.
        var exists = false
        for try await found in try await client.query(
            "SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger
        ).decode(Bool.self) { exists = found }
        if !exists {
            _ = try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        id TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
                    """, logger: logger)
            }
        }
        var recorded: [String] = []
        for try await id in try await client.query("SELECT id FROM schema_migrations", logger: logger).decode(
            String.self)
        {
            recorded.append(id)
        }
        var applied: [String] = []
        for migration in history.pending(applied: recorded, through: last) {
            let done = try await client.withTransaction(logger: logger) { connection -> Bool in
                try await connection.query("SELECT pg_advisory_xact_lock(\(lockID))", logger: logger)
                let rows = try await connection.query(
                    "SELECT 1 FROM schema_migrations WHERE id = \(migration.id)", logger: logger)
                for try await _ in rows { return true }
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO schema_migrations (id) VALUES (\(migration.id))", logger: logger)
                return false
            }
            if !done {
                applied.append(migration.id)
                logger.info("applied migration", metadata: ["migration": "\(migration.id)"])
            }
        }
        return applied
    }
}
