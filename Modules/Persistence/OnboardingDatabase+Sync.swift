import Foundation
import GRDB
import TourCore

/// One outbox row with its journal row: what a push sends.
public struct OutboxRow: Equatable, Sendable {
    public var journalID: Int64
    public var time: Date
    public var event: String
    public var catalogVersion: Int
    /// The journal row's facts as stored (a JSON array).
    public var factsJSON: String
    public var records: [FlowID: AccountFlowRecord]
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
}

extension [FlowID: AccountFlowRecord] {
    /// Keyed by the flow's name, as stored in JSON.
    var byName: [String: AccountFlowRecord] {
        [String: AccountFlowRecord](uniqueKeysWithValues: map { ($0.key.rawValue, $0.value) })
    }
}

/// Account sync's rows: the device id, the accounts enrolled, their known records and the outbox.
extension OnboardingDatabase {
    static func loadAccount(_ db: Database, _ key: SessionKey) throws -> AccountKnowledge? {
        guard
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM sync_account WHERE app = ? AND user = ?"),
                arguments: [key.app, key.user]) != nil,
            let device = try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM sync_device"))
        else { return nil }
        var knowledge = AccountKnowledge(device: device)
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT flow, record_json FROM account_flow WHERE app = ? AND user = ?"),
            arguments: [key.app, key.user])
        {
            knowledge.records[FlowID(row["flow"] as String)] = try JSONCoding.value(
                AccountFlowRecord.self, from: row["record_json"])
        }
        return knowledge
    }

    static func saveAccount(_ db: Database, _ key: SessionKey, _ account: AccountKnowledge, before: AccountKnowledge?)
        throws
    {
        for (flow, record) in account.records where before?.records[flow] != record {
            try db.cachedStatement(
                sql: """
                    INSERT INTO account_flow (app, user, flow, record_json) VALUES (?, ?, ?, ?)
                    ON CONFLICT (app, user, flow) DO UPDATE SET record_json = excluded.record_json
                    """
            ).execute(arguments: [key.app, key.user, flow.rawValue, try JSONCoding.string(record)])
        }
    }

    /// Starts syncing `key`'s account from this file, once: makes the device id, and queues every
    /// journal row of the user written so far, the newest with `records` (what the user's state
    /// says now), so the account server hears the history that came before syncing was turned on.
    ///
    /// - Returns: the device id, and how many rows were queued now (0 when already enrolled).
    @discardableResult
    public func enroll(_ key: SessionKey, records: [FlowID: AccountFlowRecord], now: Date) throws -> (
        device: String, queued: Int
    ) {
        try createdWriter().write { db in
            let device = try Self.deviceID(db)
            guard
                try Row.fetchOne(
                    db, sql: "SELECT 1 FROM sync_account WHERE app = ? AND user = ?", arguments: [key.app, key.user])
                    == nil
            else { return (device, 0) }
            try db.execute(
                sql: "INSERT INTO sync_account (app, user, enrolled_at) VALUES (?, ?, ?)",
                arguments: [key.app, key.user, now.timeIntervalSince1970])
            let stamped = records.mapValues { record -> AccountFlowRecord in
                var record = record
                record.device = device
                return record
            }
            try db.execute(
                sql: """
                    INSERT INTO outbox (journal_id, app, user, records_json)
                    SELECT id, app, user, '{}' FROM journal WHERE app = ? AND user = ?
                    """, arguments: [key.app, key.user])
            let queued = db.changesCount
            if let newest = try Int64.fetchOne(
                db, sql: "SELECT max(journal_id) FROM outbox WHERE app = ? AND user = ?", arguments: [key.app, key.user])
            {
                try db.execute(
                    sql: "UPDATE outbox SET records_json = ? WHERE journal_id = ?",
                    arguments: [try JSONCoding.string(stamped.byName), newest])
            }
            try Self.saveAccount(db, key, AccountKnowledge(device: device, records: stamped), before: nil)
            return (device, queued)
        }
    }

    /// The device's id, made on first use: random, so it says nothing about the device.
    static func deviceID(_ db: Database) throws -> String {
        if let id = try String.fetchOne(db, sql: "SELECT id FROM sync_device") { return id }
        let id = UUID().uuidString.lowercased()
        try db.execute(sql: "INSERT INTO sync_device (singleton, id) VALUES (1, ?)", arguments: [id])
        return id
    }

    /// The oldest rows waiting to be pushed for `key`, at most `limit`.
    public func outbox(_ key: SessionKey, limit: Int) throws -> [OutboxRow] {
        let reader = try reader()
        return try reader.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT o.journal_id, j.time, j.event, j.catalog_version, j.facts_json, o.records_json
                    FROM outbox o JOIN journal j ON j.id = o.journal_id
                    WHERE o.app = ? AND o.user = ? ORDER BY o.journal_id LIMIT ?
                    """, arguments: [key.app, key.user, limit]
            ).map { row in
                let records = try JSONCoding.value([String: AccountFlowRecord].self, from: row["records_json"])
                return OutboxRow(
                    journalID: row["journal_id"], time: Date(timeIntervalSince1970: row["time"]),
                    event: row["event"], catalogVersion: row["catalog_version"] ?? 1,
                    factsJSON: row["facts_json"] ?? "[]",
                    records: Dictionary(uniqueKeysWithValues: records.map { (FlowID($0.key), $0.value) }))
            }
        }
    }

    /// The server stored rows up to `journalID`: they leave the outbox, and the failures count restarts.
    public func acknowledge(_ key: SessionKey, through journalID: Int64, at now: Date) throws {
        try createdWriter().write { db in
            try db.execute(
                sql: "DELETE FROM outbox WHERE app = ? AND user = ? AND journal_id <= ?",
                arguments: [key.app, key.user, journalID])
            try db.execute(
                sql: """
                    UPDATE sync_account SET failures = 0, retry_at = NULL, last_error = NULL, last_push_at = ?
                    WHERE app = ? AND user = ?
                    """, arguments: [now.timeIntervalSince1970, key.app, key.user])
        }
    }

    public func notePull(_ key: SessionKey, at now: Date) throws {
        try createdWriter().write { db in
            try db.execute(
                sql: "UPDATE sync_account SET last_pull_at = ? WHERE app = ? AND user = ?",
                arguments: [now.timeIntervalSince1970, key.app, key.user])
        }
    }

    /// A failed attempt: the next automatic one waits until `retryAt`.
    public func noteSyncFailure(_ key: SessionKey, error: String, retryAt: Date) throws {
        try createdWriter().write { db in
            try db.execute(
                sql: """
                    UPDATE sync_account SET failures = failures + 1, retry_at = ?, last_error = ?
                    WHERE app = ? AND user = ?
                    """, arguments: [retryAt.timeIntervalSince1970, error, key.app, key.user])
        }
    }

    /// Nil when `key`'s account does not sync from this file.
    public func syncStatus(_ key: SessionKey) throws -> SyncStatus? {
        let reader = try reader()
        return try reader.read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT s.failures, s.retry_at, s.last_error, s.last_push_at, s.last_pull_at, d.id AS device,
                            (SELECT count(*) FROM outbox o WHERE o.app = s.app AND o.user = s.user) AS waiting,
                            (SELECT min(j.time) FROM outbox o JOIN journal j ON j.id = o.journal_id
                                WHERE o.app = s.app AND o.user = s.user) AS oldest
                        FROM sync_account s, sync_device d WHERE s.app = ? AND s.user = ?
                        """, arguments: [key.app, key.user])
            else { return nil }
            func date(_ column: String) -> Date? { (row[column] as Double?).map(Date.init(timeIntervalSince1970:)) }
            return SyncStatus(
                device: row["device"], waiting: row["waiting"], oldestWaiting: date("oldest"), failures: row["failures"],
                retryAt: date("retry_at"), lastError: row["last_error"], lastPush: date("last_push_at"),
                lastPull: date("last_pull_at"))
        }
    }
}
