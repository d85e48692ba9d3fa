import Foundation
import GRDB
import TourCore

/// How a session maps to rows: loading a user's view of the app (install- and user-scoped rows),
/// saving only what changed, and appending the journal row, all inside the caller's transaction.
extension OnboardingDatabase {

    static func load(_ db: Database, _ key: SessionKey, scopes: Scopes) throws -> Session
    {
        var session = Session()
        for row in try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT subject, flow, state_json FROM flow_state WHERE app = ? AND subject IN (?, ?)"),
            arguments: [key.app, SessionKey.installSubject, key.user])
        {
            let flow = FlowID(row["flow"] as String)
            let subject: String = row["subject"]
            guard subject == key.subject(for: scopes[flow] ?? .install) else { continue }
            session.tour.flows[flow] = try JSONCoding.value(FlowState.self, from: row["state_json"])
        }
        if let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT app_version, virtual_now FROM install_state WHERE app = ?"),
            arguments: [key.app])
        {
            session.tour.appVersion = row["app_version"]
            session.virtualNow = (row["virtual_now"] as Double?).map(Date.init(timeIntervalSince1970:))
        }
        // Each key from its scope's subject. An install-scoped key that a release before 0.4 kept
        // per user is read from the user's row until it is next written (then under @install).
        var legacy: [String: TourValue] = [:]
        for row in try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT subject, key, value_json FROM domain_state WHERE app = ? AND subject IN (?, ?)"),
            arguments: [key.app, SessionKey.installSubject, key.user])
        {
            let name: String = row["key"]
            let value = try JSONCoding.value(TourValue.self, from: row["value_json"])
            let subject: String = row["subject"]
            if subject == key.subject(for: scopes.state.scope(of: name)) {
                session.domain[name] = value
            } else if subject == key.user {
                legacy[name] = value
            }
        }
        session.domain.merge(legacy) { current, _ in current }
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT key, value_json FROM device_state WHERE app = ?"),
            arguments: [key.app])
        {
            session.device[row["key"]] = try JSONCoding.value(TourValue.self, from: row["value_json"])
        }
        session.account = try loadAccount(db, key)
        return session
    }

    static func save(
        _ db: Database, _ key: SessionKey, scopes: Scopes, before: Session, after: Session
    ) throws {
        let now = Date().timeIntervalSince1970
        // A flow in its initial state is stored as no row at all.
        func stored(_ state: FlowState?) -> FlowState? { state == FlowState() ? nil : state }
        for flow in Set(before.tour.flows.keys).union(after.tour.flows.keys).sorted()
        where stored(before.tour.flows[flow]) != stored(after.tour.flows[flow]) {
            let subject = key.subject(for: scopes[flow] ?? .install)
            guard let state = stored(after.tour.flows[flow]) else {
                try db.cachedStatement(
                    sql: "DELETE FROM flow_state WHERE app = ? AND subject = ? AND flow = ?"
                ).execute(
                    arguments: [key.app, subject, flow.rawValue])
                continue
            }
            try db.cachedStatement(
                sql: """
                    INSERT INTO flow_state (app, subject, flow, status, step, state_json, updated_at, catalog_version)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (app, subject, flow) DO UPDATE SET
                        status = excluded.status, step = excluded.step, state_json = excluded.state_json,
                        updated_at = excluded.updated_at, catalog_version = excluded.catalog_version
                    """
            ).execute(
                arguments: [
                    key.app, subject, flow.rawValue, state.status.rawValue, state.currentStep?.rawValue,
                    try JSONCoding.string(state), now, state.run?.catalogVersion,
                ])
        }
        if before.tour.appVersion != after.tour.appVersion || before.virtualNow != after.virtualNow {
            try db.cachedStatement(
                sql: """
                    INSERT INTO install_state (app, app_version, virtual_now) VALUES (?, ?, ?)
                    ON CONFLICT (app) DO UPDATE SET app_version = excluded.app_version, virtual_now = excluded.virtual_now
                    """
            ).execute(
                arguments: [key.app, after.tour.appVersion, after.virtualNow?.timeIntervalSince1970])
        }
        for scope in [FlowScope.install, .user] {
            let keys = Set(before.domain.keys).union(after.domain.keys).filter {
                scopes.state.scope(of: $0) == scope
            }
            try saveValues(
                db, table: "domain_state", scope: ("subject", key.subject(for: scope)), app: key.app,
                before: before.domain.filter { keys.contains($0.key) },
                after: after.domain.filter { keys.contains($0.key) })
            if scope == .install, key.user != SessionKey.installSubject {
                // A changed install-scoped key no longer has a per-user copy from before 0.4.
                for name in keys.sorted() where before.domain[name] != after.domain[name] {
                    try db.cachedStatement(
                        sql: "DELETE FROM domain_state WHERE app = ? AND subject = ? AND key = ?"
                    ).execute(arguments: [key.app, key.user, name])
                }
            }
        }
        try saveValues(
            db, table: "device_state", scope: nil, app: key.app, before: before.device, after: after.device)
        if let account = after.account, account != before.account {
            try saveAccount(db, key, account, before: before.account)
        }
    }

    static func saveValues(
        _ db: Database, table: String, scope: (column: String, value: String)?, app: String,
        before: [String: TourValue], after: [String: TourValue]
    ) throws {
        let scopeColumns = scope.map { ", \($0.column)" } ?? ""
        let scopeValues = scope == nil ? "" : ", ?"
        let scopeFilter = scope.map { " AND \($0.column) = ?" } ?? ""
        let conflict = scope.map { "app, \($0.column), key" } ?? "app, key"
        for name in Set(before.keys).union(after.keys).sorted() where before[name] != after[name] {
            if let value = after[name] {
                var arguments: StatementArguments = [app]
                if let scope { arguments += [scope.value] }
                arguments += [name, try JSONCoding.string(value)]
                try db.cachedStatement(
                    sql: """
                        INSERT INTO \(table) (app\(scopeColumns), key, value_json) VALUES (?\(scopeValues), ?, ?)
                        ON CONFLICT (\(conflict)) DO UPDATE SET value_json = excluded.value_json
                        """
                ).execute(
                    arguments: arguments)
            } else {
                var arguments: StatementArguments = [app, name]
                if let scope { arguments += [scope.value] }
                try db.cachedStatement(
                    sql: "DELETE FROM \(table) WHERE app = ? AND key = ?\(scopeFilter)"
                ).execute(arguments: arguments)
            }
        }
    }

    static func append(_ db: Database, _ key: SessionKey, _ entry: JournalAppend) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO journal (time, app, user, flow, step, event, outcome, event_json, context_json, effects_json, catalog_version, facts_json)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [
                entry.time.timeIntervalSince1970, key.app, key.user, entry.record.flow?.rawValue,
                entry.record.step?.rawValue, entry.record.event.name, entry.record.outcome,
                try JSONCoding.string(entry.record.event), try JSONCoding.string(entry.context),
                try JSONCoding.string(entry.effects), entry.catalogVersion, try JSONCoding.string(entry.record.facts),
            ])
        if let records = entry.outbox {
            try db.cachedStatement(
                sql: "INSERT INTO outbox (journal_id, app, user, records_json) VALUES (?, ?, ?, ?)"
            ).execute(arguments: [db.lastInsertedRowID, key.app, key.user, try JSONCoding.string(records.byName)])
        }
    }
}
