/// Migration v4: the insights tables, their counting functions and triggers (PostgresSchema).
extension InsightsSchema {
    package static let v4: [String] = [
        // The app version that ran each pushed event (devices from 0.13 send it), and the pushing
        // transaction (rows already stored get this migration's, so the first run counts them).
        "ALTER TABLE pushes ADD COLUMN app_version TEXT",
        "ALTER TABLE pushes ADD COLUMN xact xid8 NOT NULL DEFAULT pg_current_xact_id()",
        "CREATE INDEX pushes_by_xact ON pushes (xact)",
        """
        CREATE TABLE insight_progress (
            singleton BOOLEAN PRIMARY KEY DEFAULT true CHECK (singleton),
            counted_below xid8 NOT NULL,
            counted_at TIMESTAMPTZ
        )
        """,
        "INSERT INTO insight_progress (singleton, counted_below) VALUES (true, '0'::xid8)",
        """
        CREATE TABLE insight_firsts (
            app TEXT NOT NULL,
            flow TEXT NOT NULL,
            milestone TEXT NOT NULL,
            step TEXT NOT NULL,
            subject TEXT NOT NULL,
            step_index BIGINT NOT NULL,
            day DATE NOT NULL,
            catalog_version BIGINT NOT NULL,
            app_version TEXT NOT NULL,
            PRIMARY KEY (app, flow, milestone, step, subject)
        )
        """,
        """
        CREATE TABLE insight_counts (
            app TEXT NOT NULL,
            flow TEXT NOT NULL,
            milestone TEXT NOT NULL,
            step TEXT NOT NULL,
            step_index BIGINT NOT NULL,
            day DATE NOT NULL,
            catalog_version BIGINT NOT NULL,
            app_version TEXT NOT NULL,
            shard SMALLINT NOT NULL,
            subjects BIGINT NOT NULL,
            PRIMARY KEY (app, flow, milestone, step, step_index, day, catalog_version, app_version, shard)
        )
        """,
        "CREATE INDEX insight_counts_by_day ON insight_counts (app, day)",
        """
        CREATE TABLE insight_assignments (
            app TEXT NOT NULL,
            account TEXT NOT NULL,
            device TEXT NOT NULL,
            flow TEXT NOT NULL,
            experiment TEXT NOT NULL,
            variant TEXT NOT NULL,
            subject TEXT NOT NULL,
            seq BIGINT NOT NULL,
            idx BIGINT NOT NULL,
            PRIMARY KEY (app, account, device, flow, experiment)
        )
        """,
        """
        CREATE TABLE insight_arm_firsts (
            app TEXT NOT NULL,
            experiment TEXT NOT NULL,
            variant TEXT NOT NULL,
            milestone TEXT NOT NULL,
            step TEXT NOT NULL,
            subject TEXT NOT NULL,
            step_index BIGINT NOT NULL,
            flow TEXT NOT NULL,
            PRIMARY KEY (app, experiment, variant, milestone, step, subject)
        )
        """,
        """
        CREATE TABLE insight_arm_counts (
            app TEXT NOT NULL,
            experiment TEXT NOT NULL,
            variant TEXT NOT NULL,
            milestone TEXT NOT NULL,
            step TEXT NOT NULL,
            step_index BIGINT NOT NULL,
            flow TEXT NOT NULL,
            shard SMALLINT NOT NULL,
            subjects BIGINT NOT NULL,
            PRIMARY KEY (app, experiment, variant, milestone, step, step_index, flow, shard)
        )
        """,
        """
        CREATE TABLE insight_members (
            app TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('account', 'device')),
            id TEXT NOT NULL,
            PRIMARY KEY (app, kind, id)
        )
        """,
        """
        CREATE TABLE insight_totals (
            app TEXT NOT NULL,
            kind TEXT NOT NULL,
            shard SMALLINT NOT NULL,
            subjects BIGINT NOT NULL,
            PRIMARY KEY (app, kind, shard)
        )
        """,
        """
        CREATE TABLE insight_standings (
            app TEXT NOT NULL,
            flow TEXT NOT NULL,
            standing TEXT NOT NULL,
            shard SMALLINT NOT NULL,
            accounts BIGINT NOT NULL,
            PRIMARY KEY (app, flow, standing, shard)
        )
        """,
        catchUp,
        standings,
        // The accounts' records already stored, then the triggers that follow them from now on.
        """
        INSERT INTO insight_standings (app, flow, standing, shard, accounts)
        SELECT app, flow, standing, (hashtext(account) & 3)::smallint, count(*) FROM account_flows \
        GROUP BY 1, 2, 3, 4
        """,
        """
        CREATE TRIGGER insight_standings AFTER INSERT OR UPDATE OF standing ON account_flows
        FOR EACH ROW EXECUTE FUNCTION insight_standing_moved()
        """,
    ]
}
