import Foundation
import GRDB
import TourCore

/// The journal: its rows, and the one change a row ever takes (facts filled in, once, for rows
/// written before facts existed).
extension OnboardingDatabase {
    /// The journal rows, oldest first, optionally for one app and user.
    public func journal(app: String? = nil, user: String? = nil) throws -> [JournalRow] {
        try reader().read { db in
            var sql = "SELECT * FROM journal WHERE 1"
            var arguments: StatementArguments = []
            if let app {
                sql += " AND app = ?"
                arguments += [app]
            }
            if let user {
                sql += " AND user = ?"
                arguments += [user]
            }
            return try Row.fetchAll(db, sql: sql + " ORDER BY id", arguments: arguments).map(
                JournalRow.init(row:))
        }
    }

    /// Whether some of the app's journal rows were written before facts existed and have none yet.
    public func hasRowsWithoutFacts(app: String) throws -> Bool {
        guard exists else { return false }
        return try reader().read { db in
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM journal WHERE app = ? AND facts_json IS NULL)", arguments: [app])
                ?? false
        }
    }

    /// Records the facts of rows written before facts existed (by row id, as JSON arrays). The only
    /// change a journal row ever takes: its facts, once, from none.
    public func fillLegacyFacts(_ facts: [Int64: String]) throws {
        guard !facts.isEmpty, let writer = try existingWriter() else { return }
        try writer.write { db in
            for (id, json) in facts.sorted(by: { $0.key < $1.key }) {
                try db.execute(
                    sql: "UPDATE journal SET facts_json = ?, catalog_version = 1 WHERE id = ? AND facts_json IS NULL",
                    arguments: [json, id])
            }
        }
    }
}

extension JournalRow {
    init(row: Row) {
        self.init(
            id: row["id"], time: Date(timeIntervalSince1970: row["time"]), app: row["app"], user: row["user"],
            flow: row["flow"], step: row["step"], event: row["event"], outcome: row["outcome"],
            eventJSON: row["event_json"], contextJSON: row["context_json"], effectsJSON: row["effects_json"],
            catalogVersion: row["catalog_version"], factsJSON: row["facts_json"])
    }
}
