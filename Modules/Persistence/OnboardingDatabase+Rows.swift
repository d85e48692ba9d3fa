#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TourCore

/// How a session maps to rows: loading a user's view of the app (install- and user-scoped rows),
/// saving only what changed, and appending the journal row, all inside the caller's transaction.
extension OnboardingDatabase {

    /// What the device remembers outside the product for `app` (permission answers), without the
    /// rest of a session.
    public func deviceValues(app: String) throws -> [String: TourValue] {
        try read { db in try Self.loadDevice(db, app: app) }
    }

    static func loadDevice(_ db: SQLiteConnection, app: String) throws -> [String: TourValue] {
        var values: [String: TourValue] = [:]
        try db.query("SELECT key, value_json FROM device_state WHERE app = ?", [.text(app)]) { row in
            values[row.text(0) ?? ""] = try JSONCoding.value(from: row.text(1) ?? "")
        }
        return values
    }

    static func load(_ db: SQLiteConnection, _ key: SessionKey, scopes: Scopes) throws -> Session {
        var session = Session()
        try db.query(
            "SELECT subject, flow, state_json FROM flow_state WHERE app = ? AND subject IN (?, ?)",
            [.text(key.app), .text(SessionKey.installSubject), .text(key.user)]
        ) { row in
            let flow = FlowID(row.text(1) ?? "")
            guard row.text(0) == key.subject(for: scopes[flow] ?? .install) else { return }
            session.tour.flows[flow] = try JSONCoding.value(FlowState.self, from: row.text(2) ?? "")
        }
        try db.query("SELECT app_version, virtual_now FROM install_state WHERE app = ?", [.text(key.app)]) { row in
            session.tour.appVersion = row.text(0)
            session.virtualNow = row.double(1).map(Date.init(timeIntervalSince1970:))
        }
        // Each key from its scope's subject. An install-scoped key that a release before 0.4 kept
        // per user is read from the user's row until it is next written (then under @install).
        var legacy: [String: TourValue] = [:]
        try db.query(
            "SELECT subject, key, value_json FROM domain_state WHERE app = ? AND subject IN (?, ?)",
            [.text(key.app), .text(SessionKey.installSubject), .text(key.user)]
        ) { row in
            let name = row.text(1) ?? ""
            let value = try JSONCoding.value(from: row.text(2) ?? "")
            let subject = row.text(0)
            if subject == key.subject(for: scopes.state.scope(of: name)) {
                session.domain[name] = value
            } else if subject == key.user {
                legacy[name] = value
            }
        }
        session.domain.merge(legacy) { current, _ in current }
        session.device = try loadDevice(db, app: key.app)
        session.account = try loadAccount(db, key)
        return session
    }

    /// Writes what changed between `before` and `after`.
    ///
    /// - Returns: the stored form of each flow whose row changed (nil for a row deleted), in flow
    ///   order: what the event's journal row records.
    @discardableResult
    static func save(
        _ db: SQLiteConnection, _ key: SessionKey, scopes: Scopes, before: Session, after: Session
    ) throws -> [(flow: FlowID, stored: String?)] {
        let now = Date().timeIntervalSince1970
        var changed: [(flow: FlowID, stored: String?)] = []
        // A flow in its initial state is stored as no row at all.
        func stored(_ state: FlowState?) -> FlowState? { state == FlowState() ? nil : state }
        for flow in Set(before.tour.flows.keys).union(after.tour.flows.keys).sorted()
        where stored(before.tour.flows[flow]) != stored(after.tour.flows[flow]) {
            let subject = key.subject(for: scopes[flow] ?? .install)
            guard let state = stored(after.tour.flows[flow]) else {
                try db.run(
                    "DELETE FROM flow_state WHERE app = ? AND subject = ? AND flow = ?",
                    [.text(key.app), .text(subject), .text(flow.rawValue)])
                changed.append((flow, nil))
                continue
            }
            let text = try JSONCoding.text(state)
            changed.append((flow, text))
            try db.run(
                """
                INSERT INTO flow_state (app, subject, flow, status, step, state_json, updated_at, catalog_version)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app, subject, flow) DO UPDATE SET
                    status = excluded.status, step = excluded.step, state_json = excluded.state_json,
                    updated_at = excluded.updated_at, catalog_version = excluded.catalog_version
                """,
                [
                    .text(key.app), .text(subject), .text(flow.rawValue), .text(state.status.rawValue),
                    SQLValue(state.currentStep?.rawValue), .text(text), .real(now),
                    SQLValue(state.run?.catalogVersion),
                ])
        }
        if before.tour.appVersion != after.tour.appVersion || before.virtualNow != after.virtualNow {
            try db.run(
                """
                INSERT INTO install_state (app, app_version, virtual_now) VALUES (?, ?, ?)
                ON CONFLICT (app) DO UPDATE SET app_version = excluded.app_version, virtual_now = excluded.virtual_now
                """,
                [.text(key.app), SQLValue(after.tour.appVersion), SQLValue(after.virtualNow?.timeIntervalSince1970)])
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
                    try db.run(
                        "DELETE FROM domain_state WHERE app = ? AND subject = ? AND key = ?",
                        [.text(key.app), .text(key.user), .text(name)])
                }
            }
        }
        try saveValues(
            db, table: "device_state", scope: nil, app: key.app, before: before.device, after: after.device)
        if let account = after.account, account != before.account {
            try saveAccount(db, key, account, before: before.account)
        }
        return changed
    }

    static func saveValues(
        _ db: SQLiteConnection, table: String, scope: (column: String, value: String)?, app: String,
        before: [String: TourValue], after: [String: TourValue]
    ) throws {
        let scopeColumns = scope.map { ", \($0.column)" } ?? ""
        let scopeValues = scope == nil ? "" : ", ?"
        let scopeFilter = scope.map { " AND \($0.column) = ?" } ?? ""
        let conflict = scope.map { "app, \($0.column), key" } ?? "app, key"
        for name in Set(before.keys).union(after.keys).sorted() where before[name] != after[name] {
            if let value = after[name] {
                var arguments: [SQLValue] = [.text(app)]
                if let scope { arguments.append(.text(scope.value)) }
                arguments += [.text(name), .text(try JSONCoding.text(value))]
                try db.run(
                    """
                    INSERT INTO \(table) (app\(scopeColumns), key, value_json) VALUES (?\(scopeValues), ?, ?)
                    ON CONFLICT (\(conflict)) DO UPDATE SET value_json = excluded.value_json
                    """, arguments)
            } else {
                var arguments: [SQLValue] = [.text(app), .text(name)]
                if let scope { arguments.append(.text(scope.value)) }
                try db.run("DELETE FROM \(table) WHERE app = ? AND key = ?\(scopeFilter)", arguments)
            }
        }
    }

    /// Appends the event's journal row, with the stored form of each flow the event changed.
    static func append(
        _ db: SQLiteConnection, _ key: SessionKey, _ entry: JournalAppend, states: [(flow: FlowID, stored: String?)]
    ) throws {
        try db.run(
            """
            INSERT INTO journal (time, app, user, flow, step, event, outcome, event_json, context_json, effects_json, catalog_version, facts_json, states_json)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .real(entry.time.timeIntervalSince1970), .text(key.app), .text(key.user),
                SQLValue(entry.record.flow?.rawValue), SQLValue(entry.record.step?.rawValue),
                .text(entry.record.event.name), .text(entry.record.outcome),
                .text(try JSONCoding.text(entry.record.event)), .text(try JSONCoding.text(entry.context)),
                .text(try JSONCoding.text(entry.effects)), SQLValue(entry.catalogVersion),
                .text(try JSONCoding.text(entry.record.facts)), .text(RecordedStates.text(states)),
            ])
        if let records = entry.outbox {
            try db.run(
                "INSERT INTO outbox (journal_id, app, user, records_json) VALUES (?, ?, ?, ?)",
                [.integer(db.lastInsertedRowID), .text(key.app), .text(key.user), .text(try JSONCoding.text(records.byName))])
        }
    }
}
