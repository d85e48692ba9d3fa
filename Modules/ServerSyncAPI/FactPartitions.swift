/// Migration `v19-partitioned-facts`: `pushes` and `facts` partitioned by
/// `HASH (account)`, eight partitions each, migrated in place with every row, key and index as it
/// was. The keys are unchanged (PostgreSQL requires the partition key in every unique key, and
/// `account` is in both), so a retried push still lands on its duplicate in its own partition;
/// every query keeps its text, and the ones that name an account read one partition.
///
/// Why: both tables grow with every event, and vacuum, backups and retention then work a
/// partition at a time instead of one table of everything (Docs/Operating.md, "Past one machine").
/// Retention (`FactRetention`) deletes in bounded batches through each partition's `xact` index.
package enum FactPartitions {
    static let count = 8

    static func partitions(of table: String) -> [String] {
        (0..<count).map {
            """
            CREATE TABLE \(table)_p\($0) PARTITION OF \(table) FOR VALUES WITH (MODULUS \(count), \
            REMAINDER \($0))
            """
        }
    }

    package static let v19: [String] =
        [
            // The old tables step aside (their names and their indexes' names), rows and all.
            "ALTER TABLE facts DROP CONSTRAINT facts_app_account_device_seq_fkey",
            "ALTER TABLE pushes RENAME TO pushes_v18",
            "ALTER TABLE facts RENAME TO facts_v18",
            "ALTER INDEX pushes_pkey RENAME TO pushes_v18_pkey",
            "ALTER INDEX pushes_by_device RENAME TO pushes_v18_by_device",
            "ALTER INDEX pushes_by_xact RENAME TO pushes_v18_by_xact",
            "ALTER INDEX facts_pkey RENAME TO facts_v18_pkey",
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
                app_version TEXT,
                xact xid8 NOT NULL DEFAULT pg_current_xact_id(),
                PRIMARY KEY (app, account, device, seq)
            ) PARTITION BY HASH (account)
            """,
        ] + partitions(of: "pushes") + [
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
            ) PARTITION BY HASH (account)
            """
        ] + partitions(of: "facts") + [
            // Every row, as it was (the transaction ids the insights job and retention count by included).
            """
            INSERT INTO pushes (app, account, device, seq, time, event, catalog_version, received_at, \
            app_version, xact)
            SELECT app, account, device, seq, time, event, catalog_version, received_at, app_version, xact \
            FROM pushes_v18
            """,
            """
            INSERT INTO facts (app, account, device, seq, idx, kind, flow, step, step_index, ending, body)
            SELECT app, account, device, seq, idx, kind, flow, step, step_index, ending, body FROM facts_v18
            """,
            // The indexes after the rows (faster than row by row), on every partition.
            "CREATE INDEX pushes_by_device ON pushes (app, device)",
            "CREATE INDEX pushes_by_xact ON pushes (xact)",
            "DROP TABLE facts_v18",
            "DROP TABLE pushes_v18",
            "ANALYZE pushes",
            "ANALYZE facts",
        ]

    /// Migration `v28-facts-reference-their-partition`: each partition of `facts` references the
    /// partition of `pushes` that holds its pushes (`facts_pN` → `pushes_pN`), in place of one key
    /// from `facts` to the partitioned `pushes`. The same rows are allowed: both tables are split by
    /// `HASH (account)` into the same eight remainders, so a fact and its push always share one.
    ///
    /// Why: PostgreSQL checks a foreign key with a cached query per connection. Against a
    /// partitioned table its generic plan covers all eight partitions and costs eight lookups, so
    /// PostgreSQL kept planning the check afresh for every fact (or kept a sequential scan planned
    /// while the partitions were empty); the check took a third of the cores at three times
    /// capacity. Against one plain partition the cached plan is one index lookup.
    package static let v28: [String] =
        ["ALTER TABLE facts DROP CONSTRAINT facts_app_account_device_seq_fkey"]
        + (0..<count).map {
            "ALTER TABLE facts_p\($0) ADD CONSTRAINT facts_p\($0)_push_fkey "
                + "FOREIGN KEY (app, account, device, seq) REFERENCES pushes_p\($0)"
        }
}
