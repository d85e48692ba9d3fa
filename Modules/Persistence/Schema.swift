import GRDB

/// The versioned schema. Each migration has a string id and never changes after it lands; a change
/// is a new migration appended here.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-flows-journal-domain") { db in
            try db.execute(
                sql: """
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
                    """)
        }
        // 0.6.0: versioned catalogs and a journal of facts. Stored runs carry the catalog version
        // they were written under (every earlier run is version 1); journal rows carry their
        // catalog version and their facts. Rows from before have neither; their facts may be
        // filled in once (by replay while the catalog is still version 1), and nothing else about
        // a journal row may ever change.
        migrator.registerMigration("v2-catalog-versions-journal-facts") { db in
            try db.execute(
                sql: """
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
                    """)
        }
        // 0.7.0: account sync. The device's random id; the accounts syncing from this file; what
        // each account's devices together know of each user-scoped flow; and the outbox: journal
        // rows not yet acknowledged by the account server, with the records each reached.
        migrator.registerMigration("v3-account-sync") { db in
            try db.execute(
                sql: """
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
                    """)
        }
        return migrator
    }
}
