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
        return migrator
    }
}
