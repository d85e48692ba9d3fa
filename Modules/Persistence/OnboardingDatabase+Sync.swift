import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One outbox row with its journal row: what a push sends.
public struct OutboxRow: Equatable, Sendable {
    public var journalID: Int64
    public var time: Date
    public var event: String
    public var catalogVersion: Int
    /// The journal row's facts as stored (a JSON array).
    public var factsJSON: String
    public var records: [FlowID: AccountFlowRecord]
    /// The app version that ran the event (nil for rows written before 0.13).
    public var appVersion: String?
    /// Records of a set-aside row riding with this one (pushed joined with ``records``).
    public var carried: [FlowID: AccountFlowRecord] = [:]
    /// The journal row's context as stored (its accessibility settings go with a start it pushes).
    public var contextJSON: String? = nil
    /// Whether analytics was allowed when the row was written (nil: a row from before 0.30).
    public var analyticsAllowed: Bool? = nil
    /// The locale and device kind a start was recorded in (nil: before 0.30, or not a start).
    public var startContextJSON: String? = nil
}

/// A journal row the account server refused for what it carries, kept aside
/// (``OnboardingDatabase/setAside(_:row:status:reason:carry:at:)``).
public struct SetAsideRow: Equatable, Sendable {
    public var journalID: Int64
    public var event: String
    public var time: Date
    /// The server's HTTP status and its reason.
    public var status: Int
    public var reason: String
    public var setAsideAt: Date
}

/// Where one account's syncing stands on this device, for `status` and the backoff.
public struct SyncStatus: Equatable, Sendable {
    public var device: String
    /// Journal rows waiting for the account server's acknowledgement.
    public var waiting: Int
    /// When the oldest of them happened.
    public var oldestWaiting: Date?
    /// Failed attempts in a row; a push waits until ``retryAt`` before trying again by itself.
    public var failures: Int
    public var retryAt: Date?
    public var lastError: String?
    public var lastPush: Date?
    public var lastPull: Date?
    /// Rows the server refused, kept aside; the newest one's reason.
    public var setAside = 0
    public var lastSetAsideReason: String?
}

extension [FlowID: AccountFlowRecord] {
    /// Keyed by the flow's name, as stored in JSON.
    var byName: [String: AccountFlowRecord] {
        [String: AccountFlowRecord](uniqueKeysWithValues: map { ($0.key.rawValue, $0.value) })
    }
}

/// Account sync's rows: the device id, the accounts enrolled, their known records and the outbox.
extension OnboardingDatabase {
    static func loadAccount(_ db: SQLiteConnection, _ key: SessionKey) throws -> AccountKnowledge? {
        let account: [SQLValue] = [.text(key.app), .text(key.user)]
        guard
            try db.first("SELECT 1 FROM sync_account WHERE app = ? AND user = ?", account, { _ in true })
                != nil,
            let device = try db.first("SELECT id FROM sync_device", [], { $0.text(0) }) ?? nil
        else { return nil }
        var knowledge = AccountKnowledge(device: device)
        try db.query("SELECT flow, record_json FROM account_flow WHERE app = ? AND user = ?", account) {
            row in
            knowledge.records[FlowID(row.text(0) ?? "")] = try JSONCoding.value(
                AccountFlowRecord.self, from: row.text(1) ?? "")
        }
        return knowledge
    }

    static func saveAccount(
        _ db: SQLiteConnection, _ key: SessionKey, _ account: AccountKnowledge, before: AccountKnowledge?
    ) throws {
        for (flow, record) in account.records where before?.records[flow] != record {
            try db.run(
                """
                INSERT INTO account_flow (app, user, flow, record_json) VALUES (?, ?, ?, ?)
                ON CONFLICT (app, user, flow) DO UPDATE SET record_json = excluded.record_json
                """,
                [.text(key.app), .text(key.user), .text(flow.rawValue), .text(try JSONCoding.text(record))])
        }
    }

    /// Starts syncing `key`'s account from this file, once: makes the device id, and queues every
    /// journal row of the user written so far, the newest with `records` (what the user's state
    /// says now), so the account server hears the history that came before syncing was turned on.
    ///
    /// `byInstall`: the user syncs as the install (an app without sign-in), so its rollouts keep
    /// drawing by the install; an enrolled user that later syncs the other way is marked anew.
    ///
    /// - Returns: the device id, and how many rows were queued now (0 when already enrolled).
    @discardableResult
    public func enroll(
        _ key: SessionKey, records: [FlowID: AccountFlowRecord], now: Date, byInstall: Bool = false
    ) throws -> (
        device: String, queued: Int
    ) {
        let account: [SQLValue] = [.text(key.app), .text(key.user)]
        return try write { db in
            let device = try Self.deviceID(db)
            if let marked = try db.first(
                "SELECT by_install FROM sync_account WHERE app = ? AND user = ?", account, { $0.int(0) })
            {
                switch (marked == 1, byInstall) {
                case (true, false):
                    // Signed in after syncing as the install: the account starts afresh and hears
                    // the user's whole history, as a first enrolment does (the install's server
                    // rows stay the install's).
                    for table in ["outbox_set_aside", "outbox", "account_flow", "sync_account"] {
                        try db.run("DELETE FROM \(table) WHERE app = ? AND user = ?", account)
                    }
                case (false, true):
                    // Signed out, syncing as the install from now on: the outbox goes on there.
                    try db.run("UPDATE sync_account SET by_install = 1 WHERE app = ? AND user = ?", account)
                    return (device, 0)
                default:
                    return (device, 0)
                }
            }
            try db.run(
                "INSERT INTO sync_account (app, user, enrolled_at, by_install) VALUES (?, ?, ?, ?)",
                account + [.real(now.timeIntervalSince1970), .integer(byInstall ? 1 : 0)])
            let stamped = records.mapValues { record -> AccountFlowRecord in
                var record = record
                record.device = device
                return record
            }
            try db.run(
                """
                INSERT INTO outbox (journal_id, app, user, records_json)
                SELECT id, app, user, '{}' FROM journal WHERE app = ? AND user = ?
                """, account)
            let queued = db.changes
            if let newest = try db.first(
                "SELECT max(journal_id) FROM outbox WHERE app = ? AND user = ?", account, { $0.integer(0) })
                ?? nil
            {
                try db.run(
                    "UPDATE outbox SET records_json = ? WHERE journal_id = ?",
                    [.text(try JSONCoding.text(stamped.byName)), .integer(newest)])
            }
            try Self.saveAccount(db, key, AccountKnowledge(device: device, records: stamped), before: nil)
            return (device, queued)
        }
    }

    /// The device's id, made on first use: random, so it says nothing about the device.
    static func deviceID(_ db: SQLiteConnection) throws -> String {
        if let id = try db.first("SELECT id FROM sync_device", [], { $0.text(0) }) ?? nil { return id }
        let id = UUID().uuidString.lowercased()
        try db.run("INSERT INTO sync_device (singleton, id) VALUES (1, ?)", [.text(id)])
        return id
    }

    /// The oldest rows waiting to be pushed for `key`, at most `limit`.
    public func outbox(_ key: SessionKey, limit: Int) throws -> [OutboxRow] {
        try read { db in
            try db.all(
                """
                SELECT o.journal_id, j.time, j.event, j.catalog_version, j.facts_json, o.records_json,
                    j.app_version,
                    o.carried_json, j.context_json, j.analytics, j.start_context_json
                FROM outbox o JOIN journal j ON j.id = o.journal_id
                WHERE o.app = ? AND o.user = ? ORDER BY o.journal_id LIMIT ?
                """, [.text(key.app), .text(key.user), SQLValue(limit)]
            ) { row in
                OutboxRow(
                    journalID: row.integer(0) ?? 0, time: Date(timeIntervalSince1970: row.double(1) ?? 0),
                    event: row.text(2) ?? "", catalogVersion: row.int(3) ?? 1, factsJSON: row.text(4) ?? "[]",
                    records: try Self.records(row.text(5)), appVersion: row.text(6),
                    carried: try Self.records(row.text(7)),
                    contextJSON: row.text(8), analyticsAllowed: row.int(9).map { $0 == 1 },
                    startContextJSON: row.text(10))
            }
        }
    }

    static func records(_ json: String?) throws -> [FlowID: AccountFlowRecord] {
        let records = try JSONCoding.object(from: json ?? "{}").mapValues(AccountFlowRecord.init(tourValue:))
        return Dictionary(uniqueKeysWithValues: records.map { (FlowID($0.key), $0.value) })
    }

    // MARK: - Rows set aside

    /// Moves `row` out of the outbox, with the server's `status` and `reason`, in one transaction:
    /// the rows after it go on. `carry` (records of the row the server would take) rides with the
    /// next row waiting, now or when one is written.
    public func setAside(
        _ key: SessionKey, row: OutboxRow, status: Int, reason: String, carry: [FlowID: AccountFlowRecord],
        at now: Date
    ) throws {
        try write { db in
            try db.run(
                """
                INSERT INTO outbox_set_aside
                    (journal_id, app, user, records_json, carried_json, carry_json, status, reason,
                        set_aside_at)
                SELECT journal_id, app, user, records_json, carried_json, ?, ?, ?, ? FROM outbox
                WHERE journal_id = ? AND app = ? AND user = ?
                """,
                [
                    .text(try JSONCoding.text(carry.byName)), SQLValue(status),
                    .text(String(reason.prefix(2_000))),
                    .real(now.timeIntervalSince1970), .integer(row.journalID), .text(key.app),
                    .text(key.user),
                ])
            guard db.changes == 1 else {
                throw StorageError("journal row \(row.journalID) is not in the outbox")
            }
            try db.run("DELETE FROM outbox WHERE journal_id = ?", [.integer(row.journalID)])
            try Self.carryWaitingRecords(db, key)
        }
    }

    /// Records of set-aside rows waiting to ride: joined into the oldest row in the outbox.
    public func carryWaitingRecords(_ key: SessionKey) throws {
        try write { db in try Self.carryWaitingRecords(db, key) }
    }

    static func carryWaitingRecords(_ db: SQLiteConnection, _ key: SessionKey) throws {
        let account: [SQLValue] = [.text(key.app), .text(key.user)]
        let waiting = try db.all(
            """
            SELECT journal_id, carry_json FROM outbox_set_aside WHERE app = ? AND user = ?
                AND carry_json <> '{}'
            """,
            account
        ) { row in (row.integer(0) ?? 0, try records(row.text(1))) }
        guard !waiting.isEmpty,
            let next = try db.first(
                """
                SELECT journal_id, carried_json FROM outbox WHERE app = ? AND user = ? ORDER BY journal_id
                    LIMIT 1
                """,
                account,
                { ($0.integer(0) ?? 0, $0.text(1)) })
        else { return }
        let (oldest, carriedJSON) = next
        var carried = try records(carriedJSON)
        for (_, records) in waiting {
            for (flow, record) in records {
                carried[flow] = carried[flow].map { $0.merged(with: record) } ?? record
            }
        }
        try db.run(
            "UPDATE outbox SET carried_json = ? WHERE journal_id = ?",
            [.text(try JSONCoding.text(carried.byName)), .integer(oldest)])
        for (id, _) in waiting {
            try db.run("UPDATE outbox_set_aside SET carry_json = '{}' WHERE journal_id = ?", [.integer(id)])
        }
    }

    /// The rows set aside for `key`, oldest first.
    public func setAsideRows(_ key: SessionKey) throws -> [SetAsideRow] {
        try read { db in
            try db.all(
                """
                SELECT s.journal_id, j.event, j.time, s.status, s.reason, s.set_aside_at
                FROM outbox_set_aside s JOIN journal j ON j.id = s.journal_id
                WHERE s.app = ? AND s.user = ? ORDER BY s.journal_id
                """, [.text(key.app), .text(key.user)]
            ) { row in
                SetAsideRow(
                    journalID: row.integer(0) ?? 0, event: row.text(1) ?? "",
                    time: Date(timeIntervalSince1970: row.double(2) ?? 0),
                    status: row.int(3) ?? 0, reason: row.text(4) ?? "",
                    setAsideAt: Date(timeIntervalSince1970: row.double(5) ?? 0))
            }
        }
    }

    /// Moves every set-aside row of `key` back to the outbox (after a server fix): the next push
    /// sends them again. Returns how many moved.
    @discardableResult
    public func retrySetAside(_ key: SessionKey) throws -> Int {
        try write { db in
            let account: [SQLValue] = [.text(key.app), .text(key.user)]
            try db.run(
                """
                INSERT INTO outbox (journal_id, app, user, records_json, carried_json)
                SELECT journal_id, app, user, records_json, carried_json FROM outbox_set_aside WHERE app = ?
                    AND user = ?
                """, account)
            let moved = db.changes
            try db.run("DELETE FROM outbox_set_aside WHERE app = ? AND user = ?", account)
            try db.run("UPDATE sync_account SET retry_at = NULL WHERE app = ? AND user = ?", account)
            return moved
        }
    }

    /// The next automatic push may go now (the server answered: whatever failed before may not
    /// any more).
    public func clearBackoff(_ key: SessionKey) throws {
        try write { db in
            try db.run(
                "UPDATE sync_account SET retry_at = NULL WHERE app = ? AND user = ? AND retry_at IS NOT NULL",
                [.text(key.app), .text(key.user)])
        }
    }

    /// The server stored rows up to `journalID`: they leave the outbox, and the failures count restarts.
    public func acknowledge(_ key: SessionKey, through journalID: Int64, at now: Date) throws {
        try write { db in
            try db.run(
                "DELETE FROM outbox WHERE app = ? AND user = ? AND journal_id <= ?",
                [.text(key.app), .text(key.user), .integer(journalID)])
            try db.run(
                """
                UPDATE sync_account SET failures = 0, retry_at = NULL, last_error = NULL, last_push_at = ?
                WHERE app = ? AND user = ?
                """, [.real(now.timeIntervalSince1970), .text(key.app), .text(key.user)])
        }
    }

    public func notePull(_ key: SessionKey, at now: Date) throws {
        try write { db in
            try db.run(
                "UPDATE sync_account SET last_pull_at = ? WHERE app = ? AND user = ?",
                [.real(now.timeIntervalSince1970), .text(key.app), .text(key.user)])
        }
    }

    /// A failed attempt: the next automatic one waits until `retryAt`.
    public func noteSyncFailure(_ key: SessionKey, error: String, retryAt: Date) throws {
        try write { db in
            try db.run(
                """
                UPDATE sync_account SET failures = failures + 1, retry_at = ?, last_error = ?
                WHERE app = ? AND user = ?
                """, [.real(retryAt.timeIntervalSince1970), .text(error), .text(key.app), .text(key.user)])
        }
    }

    /// Nil when `key`'s account does not sync from this file.
    public func syncStatus(_ key: SessionKey) throws -> SyncStatus? {
        try read { db in
            // Most users do not sync: the statement the session's load uses tells, before the query
            // that joins the outbox and the journal is compiled.
            let account: [SQLValue] = [.text(key.app), .text(key.user)]
            guard
                try db.first("SELECT 1 FROM sync_account WHERE app = ? AND user = ?", account, { _ in true })
                    != nil
            else { return nil }
            return try db.first(
                """
                SELECT s.failures, s.retry_at, s.last_error, s.last_push_at, s.last_pull_at, d.id AS device,
                    (SELECT count(*) FROM outbox o WHERE o.app = s.app AND o.user = s.user) AS waiting,
                    (SELECT min(j.time) FROM outbox o JOIN journal j ON j.id = o.journal_id
                        WHERE o.app = s.app AND o.user = s.user) AS oldest,
                    (SELECT count(*) FROM outbox_set_aside a WHERE a.app = s.app AND a.user = s.user) AS
                        set_aside,
                    (SELECT a.status || ' ' || a.reason FROM outbox_set_aside a WHERE a.app = s.app
                        AND a.user = s.user
                        ORDER BY a.set_aside_at DESC, a.journal_id DESC LIMIT 1) AS set_aside_reason
                FROM sync_account s, sync_device d WHERE s.app = ? AND s.user = ?
                """, [.text(key.app), .text(key.user)]
            ) { row in
                func date(_ column: Int32) -> Date? {
                    row.double(column).map(Date.init(timeIntervalSince1970:))
                }
                return SyncStatus(
                    device: row.text(5) ?? "", waiting: row.int(6) ?? 0, oldestWaiting: date(7),
                    failures: row.int(0) ?? 0, retryAt: date(1), lastError: row.text(2), lastPush: date(3),
                    lastPull: date(4), setAside: row.int(8) ?? 0, lastSetAsideReason: row.text(9))
            }
        }
    }
}
