/// Migration `v9-control-plane` (Docs/Security.md): named people with roles per app, their
/// credentials (revocable one by one), dashboard sessions that name their person, the audit trail
/// (append-only: a trigger refuses UPDATE, DELETE and TRUNCATE, whoever asks), the public keys that
/// may sign an app's publications, and the signatures stored with each publication.
package enum ControlPlaneSchema {
    package static let v9: [String] = [
        """
        CREATE TABLE people (
            name TEXT PRIMARY KEY,
            identity TEXT UNIQUE,
            created_at DOUBLE PRECISION NOT NULL,
            created_by TEXT NOT NULL
        )
        """,
        // `app` is an app id, or '*' for every app (an operator).
        """
        CREATE TABLE person_roles (
            person TEXT NOT NULL REFERENCES people ON DELETE CASCADE,
            app TEXT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'publisher', 'owner')),
            PRIMARY KEY (person, app)
        )
        """,
        // A credential is a token naming its row; revoking the row refuses the token at once.
        """
        CREATE TABLE person_credentials (
            id TEXT PRIMARY KEY,
            person TEXT NOT NULL REFERENCES people ON DELETE CASCADE,
            created_at DOUBLE PRECISION NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            revoked_at DOUBLE PRECISION
        )
        """,
        "CREATE INDEX person_credentials_by_person ON person_credentials (person)",
        // Sessions opened by an admin token before 0.19 name no person: they are ended.
        "DELETE FROM dashboard_sessions",
        "ALTER TABLE dashboard_sessions ADD COLUMN person TEXT NOT NULL REFERENCES people ON DELETE CASCADE",
        "ALTER TABLE dashboard_sessions ADD COLUMN credential TEXT",
        "CREATE INDEX dashboard_sessions_by_person ON dashboard_sessions (person)",
        // Each row's hash covers the previous row's: `onboarding-server audit --verify` finds a
        // row changed, removed or inserted by anyone who went around the trigger.
        """
        CREATE TABLE audit_log (
            id BIGSERIAL PRIMARY KEY,
            at DOUBLE PRECISION NOT NULL,
            actor TEXT NOT NULL,
            source TEXT NOT NULL,
            app TEXT,
            action TEXT NOT NULL,
            target TEXT,
            details TEXT NOT NULL,
            previous_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        )
        """,
        "CREATE INDEX audit_log_by_app ON audit_log (app, id)",
        "CREATE INDEX audit_log_by_actor ON audit_log (actor, id)",
        """
        CREATE FUNCTION audit_log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'the audit log is append-only: % is refused', TG_OP USING ERRCODE = \
        'insufficient_privilege';
        END
        $$
        """,
        """
        CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
        FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_change()
        """,
        """
        CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
        FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse_change()
        """,
        // Public keys whose signatures the server accepts on an app's publications. Devices trust
        // the keys compiled into them, not these; the server learns retirements here and tells
        // devices, which only ever refuse more because of it.
        """
        CREATE TABLE publication_keys (
            app TEXT NOT NULL,
            key_id TEXT NOT NULL,
            public_key TEXT NOT NULL,
            registered_at DOUBLE PRECISION NOT NULL,
            registered_by TEXT NOT NULL,
            retired_at DOUBLE PRECISION,
            PRIMARY KEY (app, key_id)
        )
        """,
        "ALTER TABLE catalogs ADD COLUMN signatures TEXT NOT NULL DEFAULT '[]'",
    ]
}
