import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The journal: its rows, and the one change a row ever takes (facts filled in, once, for rows
/// written before facts existed).
extension OnboardingDatabase {
    /// The journal rows, oldest first, optionally for one app and user.
    public func journal(app: String? = nil, user: String? = nil) throws -> [JournalRow] {
        try read { db in
            var sql = "SELECT \(JournalRow.columns) FROM journal WHERE 1"
            var arguments: [SQLValue] = []
            if let app {
                sql += " AND app = ?"
                arguments.append(.text(app))
            }
            if let user {
                sql += " AND user = ?"
                arguments.append(.text(user))
            }
            return try db.all(sql + " ORDER BY id", arguments, JournalRow.init(row:))
        }
    }

    /// The app's rows up to `id` (all when nil), oldest first.
    func journal(app: String, through id: Int64) throws -> [JournalRow] {
        try read { db in
            try db.all(
                "SELECT \(JournalRow.columns) FROM journal WHERE app = ? AND id <= ? ORDER BY id",
                [.text(app), .integer(id)], JournalRow.init(row:))
        }
    }

    /// The last of the app's rows written before rows recorded the states they changed (0.8.0).
    func lastRowWithoutRecordedStates(app: String) throws -> Int64? {
        try read { db in
            try db.first("SELECT max(id) FROM journal WHERE app = ? AND states_json IS NULL", [.text(app)]) {
                $0.integer(0)
            } ?? nil
        }
    }

    /// Calls `visit` with the user and the recorded states of each of the app's rows after `id`,
    /// newest first, without making a row value of each (a rebuild reads a million).
    func forEachRecordedStatesNewestFirst(
        app: String, after id: Int64,
        _ visit: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        try read { db in
            try db.query(
                "SELECT user, states_json FROM journal WHERE app = ? AND id > ? ORDER BY id DESC",
                [.text(app), .integer(id)]
            ) { row in
                // Both as bytes, valid until the row moves on: the fold makes a String of a user only
                // when the user changes.
                try row.withBytes(1) { states in
                    let user = row.withBytes(0) { $0 } ?? UnsafeBufferPointer(start: nil, count: 0)
                    try visit(user, states)
                }
            }
        }
    }

    /// Whether some of the app's journal rows were written before facts existed and have none yet.
    public func hasRowsWithoutFacts(app: String) throws -> Bool {
        guard exists else { return false }
        return try read { db in
            try db.first("SELECT 1 FROM journal WHERE app = ? AND facts_json IS NULL LIMIT 1", [.text(app)]) {
                _ in true
            }
                ?? false
        }
    }

    /// Records the facts of rows written before facts existed (by row id, as JSON arrays). The only
    /// change a journal row ever takes: its facts, once, from none.
    public func fillLegacyFacts(_ facts: [Int64: String]) throws {
        guard !facts.isEmpty, exists else { return }
        try write { db in
            for (id, json) in facts.sorted(by: { $0.key < $1.key }) {
                try db.run(
                    """
                    UPDATE journal SET facts_json = ?, catalog_version = 1 WHERE id = ?
                        AND facts_json IS NULL
                    """,
                    [.text(json), .integer(id)])
            }
        }
    }
}

extension JournalRow {
    /// The columns ``init(row:)`` reads, in its order.
    static let columns =
        """
        id, time, app, user, flow, step, event, outcome, event_json, context_json, effects_json, \
        catalog_version, facts_json, catalog_fingerprint
        """

    init(row: SQLiteRow) {
        self.init(
            id: row.integer(0) ?? 0, time: Date(timeIntervalSince1970: row.double(1) ?? 0),
            app: row.text(2) ?? "",
            user: row.text(3) ?? "", flow: row.text(4), step: row.text(5), event: row.text(6) ?? "",
            outcome: row.text(7) ?? "", eventJSON: row.text(8) ?? "", contextJSON: row.text(9) ?? "",
            effectsJSON: row.text(10) ?? "", catalogVersion: row.int(11), factsJSON: row.text(12),
            catalogFingerprint: row.text(13))
    }
}

extension OnboardingDatabase {
    /// The display budget's counted starts (``TourFact/budgetSpent``) in `app`'s rows after `id`,
    /// and the newest of the app's rows read with them (one read, so no row falls between).
    public func budgetStarts(app: String, afterID id: Int64) throws
        -> (starts: [(id: Int64, time: Date, user: String, flow: FlowID)], through: Int64?)
    {
        try read { db in
            var starts: [(id: Int64, time: Date, user: String, flow: FlowID)] = []
            try db.query(
                """
                SELECT id, time, user, facts_json FROM journal WHERE app = ? AND id > ?
                    AND facts_json LIKE '%\"budgetSpent\"%' ORDER BY id
                """,
                [.text(app), .integer(id)]
            ) { row in
                let facts = (try JSONCoding.value(from: row.text(3) ?? "[]")).listValue ?? []
                for case .budgetSpent(let flow)? in facts.map({ try? TourFact(tourValue: $0) }) {
                    starts.append(
                        (
                            row.integer(0) ?? 0, Date(timeIntervalSince1970: row.double(1) ?? 0),
                            row.text(2) ?? "", flow
                        ))
                }
            }
            let through =
                try db.first("SELECT max(id) FROM journal WHERE app = ?", [.text(app)]) { $0.integer(0) }
                ?? nil
            return (starts, through)
        }
    }
}
