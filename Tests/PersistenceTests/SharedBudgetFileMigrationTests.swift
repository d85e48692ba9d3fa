import Foundation
import SchemaMigrations
import Testing

@testable import Persistence

/// The display budget file runs on the device's one migration runner (``Schema/migrate(_:history:table:)``):
/// a file an earlier release made (its schema numbered in `PRAGMA user_version`) is adopted with
/// its data, a new file still opens in an earlier release, and a file a newer release migrated is
/// refused, not written.
@Suite struct SharedBudgetFileMigrationTests {
    /// Runs `sql` on its own connection (as another release would) and answers the first column
    /// of its first row, if it has one.
    static func sqlite(_ path: String, _ sql: String) throws -> String {
        let connection = try SQLiteConnection(path: path, busyTimeout: 5)
        guard sql.hasPrefix("SELECT") || sql.hasPrefix("PRAGMA user_version") && !sql.contains("=") else {
            try connection.execute(sql)
            return ""
        }
        return try connection.first(sql, []) { $0.text(0) ?? $0.int(0).map { String($0) } ?? "" } ?? ""
    }

    @Test func aFileAnEarlierReleaseMadeIsAdoptedWithItsData() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("budget.sqlite")
        // As 0.34 made it: the tables of v1-budget, user_version 1, no migrations table.
        let tables = SharedBudgetFile.history.migrations[0].statements[0]
        _ = try Self.sqlite(
            path, tables + "; PRAGMA user_version = 1; INSERT INTO budget_device (id) VALUES ('old-device');")
        let file = try SharedBudgetFile(path: path)
        #expect(try file.deviceID() == "old-device")
        #expect(try Self.sqlite(path, "SELECT identifier FROM budget_migrations") == "v1-budget")
        // Opened again: nothing applied twice.
        _ = try SharedBudgetFile(path: path)
        #expect(try Self.sqlite(path, "SELECT count(*) FROM budget_migrations") == "1")
    }

    @Test func aNewFileIsRecordedByTheRunnerAndStillNumberedForEarlierReleases() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("budget.sqlite")
        let file = try SharedBudgetFile(path: path)
        let id = try file.deviceID()
        #expect(try Self.sqlite(path, "SELECT identifier FROM budget_migrations") == "v1-budget")
        #expect(try Self.sqlite(path, "PRAGMA user_version") == "1")
        #expect(try SharedBudgetFile(path: path).deviceID() == id)
    }

    @Test func aFileANewerReleaseMigratedIsRefused() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("budget.sqlite")
        _ = try SharedBudgetFile(path: path)
        _ = try Self.sqlite(path, "INSERT INTO budget_migrations (identifier) VALUES ('v2-from-the-future')")
        #expect {
            try SharedBudgetFile(path: path)
        } throws: { error in
            "\(error)".contains("written by a newer release (migration v2-from-the-future)")
        }
        let numbered = folder.path("numbered.sqlite")
        _ = try Self.sqlite(numbered, "PRAGMA user_version = 2")
        #expect {
            try SharedBudgetFile(path: numbered)
        } throws: { error in
            "\(error)".contains("written by a newer release (schema 2)")
        }
    }
}
