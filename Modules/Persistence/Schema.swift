import SchemaMigrations

/// The device's versioned schema (the shape the server's shares: `SchemaHistory`). Each migration
/// has a string id and never changes after it lands; a change is a new migration appended here.
///
/// Applied ids are recorded in `grdb_migrations`, the table GRDB's migrator kept them in while this
/// package used GRDB (until 0.8): the name stays because every file written since 0.1 records its
/// migrations there, and renaming it would be a migration every install runs for no gain.
enum Schema {
    static let migrations: [(id: String, sql: String)] = [
        (
            "v1-flows-journal-domain",
            """
            CREATE TABLE flow_state (
                app TEXT NOT NULL,
                subject TEXT NOT NULL,
                flow TEXT NOT NULL,
                status TEXT NOT NULL,
                step TEXT,
                state_json TEXT NOT NULL,
                updated_at REAL NOT NULL,
                PRIMARY KEY (app, subject, flow)
            );
            CREATE TABLE install_state (
                app TEXT PRIMARY KEY NOT NULL,
                app_version TEXT,
                virtual_now REAL
            );
            CREATE TABLE domain_state (
                app TEXT NOT NULL,
                subject TEXT NOT NULL,
                key TEXT NOT NULL,
                value_json TEXT NOT NULL,
                PRIMARY KEY (app, subject, key)
            );
            CREATE TABLE device_state (
                app TEXT NOT NULL,
                key TEXT NOT NULL,
                value_json TEXT NOT NULL,
                PRIMARY KEY (app, key)
            );
            CREATE TABLE journal (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                time REAL NOT NULL,
                app TEXT NOT NULL,
                user TEXT NOT NULL,
                flow TEXT,
                step TEXT,
                event TEXT NOT NULL,
                outcome TEXT NOT NULL,
                event_json TEXT NOT NULL,
                context_json TEXT NOT NULL,
                effects_json TEXT NOT NULL
            );
            CREATE INDEX journal_by_app_user ON journal (app, user, id);
            CREATE TRIGGER journal_is_append_only_update BEFORE UPDATE ON journal
            BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
            CREATE TRIGGER journal_is_append_only_delete BEFORE DELETE ON journal
            BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
            """
        ),
        // 0.6.0: versioned catalogs and a journal of facts. Stored runs carry the catalog version
        // they were written under (every earlier run is version 1); journal rows carry their
        // catalog version and their facts. Rows from before have neither; their facts may be
        // filled in once (by replay while the catalog is still version 1), and nothing else about
        // a journal row may ever change.
        (
            "v2-catalog-versions-journal-facts",
            """
            ALTER TABLE flow_state ADD COLUMN catalog_version INTEGER;
            UPDATE flow_state SET catalog_version = 1 WHERE status = 'active';
            ALTER TABLE journal ADD COLUMN catalog_version INTEGER;
            ALTER TABLE journal ADD COLUMN facts_json TEXT;
            CREATE INDEX journal_without_facts ON journal (app, user, id) WHERE facts_json IS NULL;
            DROP TRIGGER journal_is_append_only_update;
            CREATE TRIGGER journal_is_append_only_update BEFORE UPDATE ON journal
            WHEN NOT (
                OLD.facts_json IS NULL AND NEW.facts_json IS NOT NULL
                AND OLD.catalog_version IS NULL AND NEW.catalog_version = 1
                AND NEW.id = OLD.id AND NEW.time = OLD.time AND NEW.app = OLD.app
                AND NEW.user = OLD.user AND NEW.flow IS OLD.flow AND NEW.step IS OLD.step
                AND NEW.event = OLD.event AND NEW.outcome = OLD.outcome
                AND NEW.event_json = OLD.event_json AND NEW.context_json = OLD.context_json
                AND NEW.effects_json = OLD.effects_json)
            BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
            """
        ),
        // 0.7.0: account sync. The device's random id; the accounts syncing from this file; what
        // each account's devices together know of each user-scoped flow; and the outbox: journal
        // rows not yet acknowledged by the account server, with the records each reached.
        (
            "v3-account-sync",
            """
            CREATE TABLE sync_device (
                singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
                id TEXT NOT NULL
            );
            CREATE TABLE sync_account (
                app TEXT NOT NULL,
                user TEXT NOT NULL,
                enrolled_at REAL NOT NULL,
                failures INTEGER NOT NULL DEFAULT 0,
                retry_at REAL,
                last_error TEXT,
                last_push_at REAL,
                last_pull_at REAL,
                PRIMARY KEY (app, user)
            );
            CREATE TABLE account_flow (
                app TEXT NOT NULL,
                user TEXT NOT NULL,
                flow TEXT NOT NULL,
                record_json TEXT NOT NULL,
                PRIMARY KEY (app, user, flow)
            );
            CREATE TABLE outbox (
                journal_id INTEGER PRIMARY KEY REFERENCES journal (id),
                app TEXT NOT NULL,
                user TEXT NOT NULL,
                records_json TEXT NOT NULL
            );
            CREATE INDEX outbox_by_account ON outbox (app, user, journal_id);
            """
        ),
        // 0.8.0: each journal row records the stored form of every flow its event changed (null for a
        // flow whose row was deleted), so a rebuild folds rows without replaying them through the
        // engine. Rows written before have none (NULL); they are replayed or folded from their facts
        // as before. The append-only rule now covers the new column too.
        (
            "v4-journal-recorded-states",
            """
            ALTER TABLE journal ADD COLUMN states_json TEXT;
            CREATE INDEX journal_without_states ON journal (app, id) WHERE states_json IS NULL;
            DROP TRIGGER journal_is_append_only_update;
            CREATE TRIGGER journal_is_append_only_update BEFORE UPDATE ON journal
            WHEN NOT (
                OLD.facts_json IS NULL AND NEW.facts_json IS NOT NULL
                AND OLD.catalog_version IS NULL AND NEW.catalog_version = 1
                AND NEW.id = OLD.id AND NEW.time = OLD.time AND NEW.app = OLD.app
                AND NEW.user = OLD.user AND NEW.flow IS OLD.flow AND NEW.step IS OLD.step
                AND NEW.event = OLD.event AND NEW.outcome = OLD.outcome
                AND NEW.event_json = OLD.event_json AND NEW.context_json = OLD.context_json
                AND NEW.effects_json = OLD.effects_json AND NEW.states_json IS OLD.states_json)
            BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
            """
        ),
        // 0.9.0: each journal row records the fingerprint of the catalog document that reduced its
        // event (rows from before have none: NULL). A row is replayed only through the catalog it
        // was written under; a row of the same version and another document is folded from its
        // facts. The append-only rule covers the new column too.
        (
            "v5-journal-catalog-fingerprint",
            """
            ALTER TABLE journal ADD COLUMN catalog_fingerprint TEXT;
            DROP TRIGGER journal_is_append_only_update;
            CREATE TRIGGER journal_is_append_only_update BEFORE UPDATE ON journal
            WHEN NOT (
                OLD.facts_json IS NULL AND NEW.facts_json IS NOT NULL
                AND OLD.catalog_version IS NULL AND NEW.catalog_version = 1
                AND NEW.id = OLD.id AND NEW.time = OLD.time AND NEW.app = OLD.app
                AND NEW.user = OLD.user AND NEW.flow IS OLD.flow AND NEW.step IS OLD.step
                AND NEW.event = OLD.event AND NEW.outcome = OLD.outcome
                AND NEW.event_json = OLD.event_json AND NEW.context_json = OLD.context_json
                AND NEW.effects_json = OLD.effects_json AND NEW.states_json IS OLD.states_json
                AND NEW.catalog_fingerprint IS OLD.catalog_fingerprint)
            BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
            """
        ),
        (
            // The format each app's domain state was written in (DomainStateVocabulary).
            "v6-domain-state-format",
            """
            CREATE TABLE domain_format (
                app TEXT PRIMARY KEY NOT NULL,
                format INTEGER NOT NULL CHECK (format >= 1)
            );
            """
        ),
        (
            // Catalog documents published for the app, as this device last pulled and verified
            // them (Docs/Publishing.md), and the entity tag of that pull.
            "v7-published-catalogs",
            """
            CREATE TABLE published_catalog (
                app TEXT NOT NULL,
                version INTEGER NOT NULL CHECK (version >= 1),
                fingerprint TEXT NOT NULL,
                rollout INTEGER NOT NULL CHECK (rollout BETWEEN 0 AND 100),
                salt TEXT NOT NULL,
                document TEXT NOT NULL,
                PRIMARY KEY (app, version)
            );
            CREATE TABLE catalog_pull (
                app TEXT PRIMARY KEY NOT NULL,
                entity_tag TEXT,
                pulled_at REAL NOT NULL,
                refused TEXT
            );
            """
        ),
        (
            // The binary (its compiled catalog's fingerprint) that made the last pull: a new binary
            // pulls afresh instead of trusting a 304 to a list an older one refused.
            "v8-catalog-pull-binary",
            """
            ALTER TABLE catalog_pull ADD COLUMN binary TEXT;
            """
        ),
        (
            // Each experiment a subject was assigned to (Docs/Publishing.md): the variant, kept so
            // it never changes under the user, and whether its exposure and goal are journalled.
            // `subject` is the row's owner as in flow_state ("@install" or a user, by the flow's
            // scope); `assignee` the subject the variant was computed for (install:… or account:…).
            "v9-experiments",
            """
            CREATE TABLE experiment_state (
                app TEXT NOT NULL,
                subject TEXT NOT NULL,
                experiment TEXT NOT NULL,
                flow TEXT NOT NULL,
                variant TEXT NOT NULL,
                assignee TEXT NOT NULL,
                exposed INTEGER NOT NULL DEFAULT 0 CHECK (exposed IN (0, 1)),
                goal_reached INTEGER NOT NULL DEFAULT 0 CHECK (goal_reached IN (0, 1)),
                PRIMARY KEY (app, subject, experiment)
            );
            """
        ),
        (
            // The app version that ran each event (the state's, after it): pushed with the row, so
            // the account server's funnels split by app version.
            "v10-journal-app-version",
            """
            ALTER TABLE journal ADD COLUMN app_version TEXT;
            """
        ),
        (
            // Signed publications (Docs/Security.md): each kept publication's signatures, checked
            // before every use; the retirements of the app's publication keys the device heard of
            // (only ever more refusals); and every refusal of a published catalog, append-only like
            // the journal, each naming the version, why, and what ran instead.
            "v11-signed-publications",
            """
            ALTER TABLE published_catalog ADD COLUMN signatures_json TEXT NOT NULL DEFAULT '[]';
            CREATE TABLE publication_key_retirement (
                app TEXT NOT NULL,
                key_id TEXT NOT NULL,
                retired_at REAL NOT NULL,
                PRIMARY KEY (app, key_id)
            );
            CREATE TABLE catalog_refusal (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                time REAL NOT NULL,
                app TEXT NOT NULL,
                version INTEGER NOT NULL,
                fingerprint TEXT NOT NULL,
                reason TEXT NOT NULL,
                runs_instead TEXT NOT NULL
            );
            CREATE INDEX catalog_refusal_by_app ON catalog_refusal (app, version, id);
            CREATE TRIGGER catalog_refusal_is_append_only_update BEFORE UPDATE ON catalog_refusal
            BEGIN SELECT RAISE(ABORT, 'catalog refusals are append-only'); END;
            CREATE TRIGGER catalog_refusal_is_append_only_delete BEFORE DELETE ON catalog_refusal
            BEGIN SELECT RAISE(ABORT, 'catalog refusals are append-only'); END;
            """
        ),
        (
            // Sync that never jams (Docs/Reliability.md): a row the account server refuses for
            // what it carries moves here with the server's status and reason, and the rows after it
            // go on. Nothing leaves this table but by `sync --retry-set-aside`, which moves rows
            // back to the outbox. `carried_json`: records of a set-aside row riding with a later
            // row (a record goes one hop, so one refused record cannot set aside every row after
            // it); `carry_json`: records still waiting for a later row to ride with.
            "v12-outbox-set-aside",
            """
            ALTER TABLE outbox ADD COLUMN carried_json TEXT NOT NULL DEFAULT '{}';
            CREATE TABLE outbox_set_aside (
                journal_id INTEGER PRIMARY KEY REFERENCES journal (id),
                app TEXT NOT NULL,
                user TEXT NOT NULL,
                records_json TEXT NOT NULL,
                carried_json TEXT NOT NULL,
                carry_json TEXT NOT NULL,
                status INTEGER NOT NULL,
                reason TEXT NOT NULL,
                set_aside_at REAL NOT NULL
            );
            CREATE INDEX outbox_set_aside_by_account ON outbox_set_aside (app, user, journal_id);
            """
        ),
        (
            // Installs as subjects (Docs/Server.md, "Installs"): `by_install` marks a user that
            // syncs as the install (an app without sign-in; its rollouts draw by the install), and
            // `secret_store` keeps secrets sealed by a key that is not in this file (the install's
            // credential; SealedSecrets). `fresh_until`: the publications list needs no pull before
            // then (the server's Cache-Control max-age).
            "v13-installs-secrets-freshness",
            """
            ALTER TABLE sync_account ADD COLUMN by_install INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE catalog_pull ADD COLUMN fresh_until REAL;
            CREATE TABLE secret_store (
                app TEXT NOT NULL,
                name TEXT NOT NULL,
                sealed TEXT NOT NULL,
                stored_at REAL NOT NULL,
                PRIMARY KEY (app, name)
            );
            """
        ),
        (
            // Consent and context as they were when the event happened (Docs/Privacy.md): whether
            // analytics was allowed (1) or not (0) when the row was written (NULL: written before
            // 0.30, when consent was read at push time), and the locale and device kind of a row
            // that starts a flow (a JSON object; the accessibility summary is in its context). The
            // append-only rule covers them, and the app version, too.
            "v14-journal-consent-and-start-context",
            """
            ALTER TABLE journal ADD COLUMN analytics INTEGER CHECK (analytics IN (0, 1));
            ALTER TABLE journal ADD COLUMN start_context_json TEXT;
            DROP TRIGGER journal_is_append_only_update;
            CREATE TRIGGER journal_is_append_only_update BEFORE UPDATE ON journal
            WHEN NOT (
                OLD.facts_json IS NULL AND NEW.facts_json IS NOT NULL
                AND OLD.catalog_version IS NULL AND NEW.catalog_version = 1
                AND NEW.id = OLD.id AND NEW.time = OLD.time AND NEW.app = OLD.app
                AND NEW.user = OLD.user AND NEW.flow IS OLD.flow AND NEW.step IS OLD.step
                AND NEW.event = OLD.event AND NEW.outcome = OLD.outcome
                AND NEW.event_json = OLD.event_json AND NEW.context_json = OLD.context_json
                AND NEW.effects_json = OLD.effects_json AND NEW.states_json IS OLD.states_json
                AND NEW.catalog_fingerprint IS OLD.catalog_fingerprint AND NEW.app_version IS OLD.app_version
                AND NEW.analytics IS OLD.analytics AND NEW.start_context_json IS OLD.start_context_json)
            BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
            """
        ),
    ]

    static let table = "grdb_migrations"

    /// The migrations as the shared shape: each one SQL script (SQLite runs a script's statements in
    /// order).
    static let history = SchemaHistory(migrations.map { SchemaMigration($0.id, [$0.sql]) })

    /// The ids applied to the database (recorded in `table`), in the order they were applied.
    static func appliedMigrations(_ connection: SQLiteConnection, table: String = table) throws -> [String] {
        // A new file, or one that is not ours yet: nothing applied.
        guard try connection.tableExists(table) else { return [] }
        return try connection.all("SELECT identifier FROM \(table) ORDER BY rowid") { $0.text(0) ?? "" }
    }

    /// Applied ids this build does not know: a newer build migrated the file.
    static func unknownMigrations(_ connection: SQLiteConnection) throws -> [String] {
        history.unknown(applied: try appliedMigrations(connection))
    }

    /// Applies the migrations the database lacks, each in its own immediate transaction (SQLite's
    /// write lock) with its id. Two processes creating one new file race to migrate it: each looks
    /// again inside its transaction, so the second sees what the first applied and does nothing.
    ///
    /// Returns whether this connection applied the first migration: of two processes that found
    /// the file missing at the same moment, only that one made the database.
    ///
    /// The one runner of the device's SQLite files: the product's database (`history`, `table`)
    /// and the shared display budget file (``SharedBudgetFile``) each pass their own.
    @discardableResult
    static func migrate(
        _ connection: SQLiteConnection, history: SchemaHistory = history, table: String = table
    ) throws -> Bool {
        var appliedFirst = false
        for migration in history.pending(applied: try appliedMigrations(connection, table: table)) {
            let applied = try connection.transaction(.immediate) {
                try connection.execute(
                    "CREATE TABLE IF NOT EXISTS \(table) (identifier TEXT NOT NULL PRIMARY KEY)")
                guard !(try appliedMigrations(connection, table: table).contains(migration.id)) else {
                    return (false, commit: true)
                }
                for statement in migration.statements { try connection.execute(statement) }
                try connection.run("INSERT INTO \(table) (identifier) VALUES (?)", [.text(migration.id)])
                return (true, commit: true)
            }
            if applied && migration.id == history.migrations.first?.id { appliedFirst = true }
        }
        return appliedFirst
    }
}
