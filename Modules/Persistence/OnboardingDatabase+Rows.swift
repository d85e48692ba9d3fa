import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a session maps to rows: loading a user's view of the app (install- and user-scoped rows),
/// saving only what changed, and appending the journal row, all inside the caller's transaction.
extension OnboardingDatabase {

    /// What the device remembers outside the product for `app` (permission answers), without the
    /// rest of a session.
    public func deviceValues(app: String) throws -> [String: TourValue] {
        try read { db in try Self.loadDevice(db, app: app) }
    }

    /// Sets one of the device's values for `app` outside an event (a setting such as analytics consent).
    public func setDeviceValue(app: String, key: String, value: TourValue) throws {
        try write { db in
            try db.run(
                """
                INSERT INTO device_state (app, key, value_json) VALUES (?, ?, ?)
                ON CONFLICT (app, key) DO UPDATE SET value_json = excluded.value_json
                """, [.text(app), .text(key), .text(try JSONCoding.text(value))])
        }
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
        try db.query(
            """
            SELECT subject, experiment, flow, variant, assignee, exposed, goal_reached FROM experiment_state
            WHERE app = ? AND subject IN (?, ?)
            """,
            [.text(key.app), .text(SessionKey.installSubject), .text(key.user)]
        ) { row in
            let flow = FlowID(row.text(2) ?? "")
            guard row.text(0) == key.subject(for: scopes[flow] ?? .install) else { return }
            session.tour.experiments[row.text(1) ?? ""] = ExperimentMark(
                flow: flow, variant: row.text(3) ?? "", subject: row.text(4) ?? "", exposed: row.int(5) == 1,
                goalReached: row.int(6) == 1)
        }
        try db.query("SELECT app_version, virtual_now FROM install_state WHERE app = ?", [.text(key.app)]) {
            row in
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
        try db.query("SELECT format FROM domain_format WHERE app = ?", [.text(key.app)]) { row in
            session.domainFormat = row.int(0)
        }
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
        var flows: [FlowID] = []
        for (flow, state) in after.tour.flows where stored(before.tour.flows[flow]) != stored(state) {
            flows.append(flow)
        }
        for (flow, state) in before.tour.flows where after.tour.flows[flow] == nil && stored(state) != nil {
            flows.append(flow)
        }
        for flow in flows.count > 1 ? flows.sorted() : flows {
            let subject = key.subject(for: scopes[flow] ?? .install)
            guard let state = stored(after.tour.flows[flow]) else {
                try db.run(
                    "DELETE FROM flow_state WHERE app = ? AND subject = ? AND flow = ?",
                    [.text(key.app), .text(subject), .text(flow.rawValue)])
                changed.append((flow, nil))
                continue
            }
            let text = try JSONCoding.stored(state)
            changed.append((flow, text))
            try db.run(
                """
                INSERT INTO flow_state (app, subject, flow, status, step, state_json, updated_at,
                    catalog_version)
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
        for (experiment, mark) in after.tour.experiments where before.tour.experiments[experiment] != mark {
            try db.run(
                """
                INSERT INTO experiment_state (app, subject, experiment, flow, variant, assignee, exposed,
                    goal_reached)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app, subject, experiment) DO UPDATE SET
                    flow = excluded.flow, variant = excluded.variant, assignee = excluded.assignee,
                    exposed = excluded.exposed, goal_reached = excluded.goal_reached
                """,
                [
                    .text(key.app), .text(key.subject(for: scopes[mark.flow] ?? .install)), .text(experiment),
                    .text(mark.flow.rawValue), .text(mark.variant), .text(mark.subject),
                    .integer(mark.exposed ? 1 : 0), .integer(mark.goalReached ? 1 : 0),
                ])
        }
        if before.tour.appVersion != after.tour.appVersion || before.virtualNow != after.virtualNow {
            try db.run(
                """
                INSERT INTO install_state (app, app_version, virtual_now) VALUES (?, ?, ?)
                ON CONFLICT (app) DO UPDATE SET app_version = excluded.app_version,
                    virtual_now = excluded.virtual_now
                """,
                [
                    .text(key.app), SQLValue(after.tour.appVersion),
                    SQLValue(after.virtualNow?.timeIntervalSince1970),
                ])
        }
        if let format = after.domainFormat, format != before.domainFormat {
            try db.run(
                """
                INSERT INTO domain_format (app, format) VALUES (?, ?)
                ON CONFLICT (app) DO UPDATE SET format = excluded.format
                """, [.text(key.app), .integer(Int64(format))])
        }
        // Each changed key under its scope's subject.
        for name in Self.changedKeys(before.domain, after.domain) {
            let scope = scopes.state.scope(of: name)
            let subject = key.subject(for: scope)
            if let value = after.domain[name] {
                try db.run(
                    """
                    INSERT INTO domain_state (app, subject, key, value_json) VALUES (?, ?, ?, ?)
                    ON CONFLICT (app, subject, key) DO UPDATE SET value_json = excluded.value_json
                    """, [.text(key.app), .text(subject), .text(name), .text(try JSONCoding.text(value))])
            } else {
                try db.run(
                    "DELETE FROM domain_state WHERE app = ? AND subject = ? AND key = ?",
                    [.text(key.app), .text(subject), .text(name)])
            }
            if scope == .install, key.user != SessionKey.installSubject {
                // A changed install-scoped key no longer has a per-user copy from before 0.4.
                try db.run(
                    "DELETE FROM domain_state WHERE app = ? AND subject = ? AND key = ?",
                    [.text(key.app), .text(key.user), .text(name)])
            }
        }
        for name in Self.changedKeys(before.device, after.device) {
            if let value = after.device[name] {
                try db.run(
                    """
                    INSERT INTO device_state (app, key, value_json) VALUES (?, ?, ?)
                    ON CONFLICT (app, key) DO UPDATE SET value_json = excluded.value_json
                    """, [.text(key.app), .text(name), .text(try JSONCoding.text(value))])
            } else {
                try db.run(
                    "DELETE FROM device_state WHERE app = ? AND key = ?", [.text(key.app), .text(name)])
            }
        }
        if let account = after.account, account != before.account {
            try saveAccount(db, key, account, before: before.account)
        }
        return changed
    }

    /// The keys whose values differ between two states (added, changed or removed), sorted.
    static func changedKeys(_ before: [String: TourValue], _ after: [String: TourValue]) -> [String] {
        var changed: [String] = []
        for (name, value) in after where before[name] != value { changed.append(name) }
        for name in before.keys where after[name] == nil { changed.append(name) }
        return changed.count > 1 ? changed.sorted() : changed
    }

    /// Appends the event's journal row, with the stored form of each flow the event changed.
    static func append(
        _ db: SQLiteConnection, _ key: SessionKey, _ entry: JournalAppend,
        states: [(flow: FlowID, stored: String?)],
        contextText: String? = nil
    ) throws {
        try db.run(
            """
            INSERT INTO journal (time, app, user, flow, step, event, outcome, event_json, context_json,
                effects_json, catalog_version, facts_json, states_json, catalog_fingerprint, app_version,
                analytics, start_context_json)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .real(entry.time.timeIntervalSince1970), .text(key.app), .text(key.user),
                SQLValue(entry.record.flow?.rawValue), SQLValue(entry.record.step?.rawValue),
                .text(entry.record.event.name), .text(entry.record.outcome),
                .text(try JSONCoding.stored(entry.record.event)),
                .text(try contextText ?? JSONCoding.text(entry.context)),
                .text(try JSONCoding.stored(entry.effects)), SQLValue(entry.catalogVersion),
                .text(try JSONCoding.stored(entry.record.facts)), .text(RecordedStates.text(states)),
                SQLValue(entry.catalogFingerprint), SQLValue(entry.appVersion),
                entry.analyticsAllowed.map { .integer($0 ? 1 : 0) } ?? .null,
                SQLValue(entry.startContextJSON),
            ])
        if let records = entry.outbox {
            try db.run(
                "INSERT INTO outbox (journal_id, app, user, records_json) VALUES (?, ?, ?, ?)",
                [
                    .integer(db.lastInsertedRowID), .text(key.app), .text(key.user),
                    .text(try JSONCoding.text(records.byName)),
                ])
        }
    }
}
