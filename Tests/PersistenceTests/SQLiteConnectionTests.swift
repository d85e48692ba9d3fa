import CSQLite
import Foundation
import Testing
import TourFixtures
import TourRuntime

@testable import Persistence

/// The storage edge itself: the wrapper over SQLite's C API that every commit goes through.
@Suite("SQLite connection")
struct SQLiteConnectionTests {
    func numbers(_ connection: SQLiteConnection, count: Int) throws {
        try connection.execute("CREATE TABLE n (value INTEGER)")
        for value in 1...count { try connection.run("INSERT INTO n VALUES (?)", [.integer(Int64(value))]) }
    }

    /// A query run from inside another's row callback with the same SQL has its own cursor: the
    /// outer one goes on where it was.
    @Test func aNestedQueryWithTheSameSQLDoesNotShareTheCursor() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try numbers(connection, count: 3)
        let sql = "SELECT value FROM n ORDER BY value"
        var pairs: [String] = []
        try connection.query(sql) { outer in
            let a = outer.int(0) ?? 0
            try connection.query(sql) { inner in pairs.append("\(a)\(inner.int(0) ?? 0)") }
        }
        #expect(pairs == ["11", "12", "13", "21", "22", "23", "31", "32", "33"])
        // The kept statement is still usable afterwards.
        #expect(try connection.all(sql) { $0.int(0) } == [1, 2, 3])
    }

    @Test func transactionsNestAsSavepoints() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (value TEXT)")
        struct Refused: Error {}
        try connection.transaction(.immediate) {
            try connection.run("INSERT INTO t VALUES ('outer')")
            // An inner part rolled back by its own choice, another by a throw, a third kept.
            try connection.transaction(.immediate) {
                try connection.run("INSERT INTO t VALUES ('undone')")
                return ((), commit: false)
            }
            #expect(throws: Refused.self) {
                try connection.transaction(.immediate) { () throws -> (Void, commit: Bool) in
                    try connection.run("INSERT INTO t VALUES ('thrown')")
                    throw Refused()
                }
            }
            try connection.transaction(.immediate) {
                try connection.run("INSERT INTO t VALUES ('inner')")
                return ((), commit: true)
            }
            return ((), commit: true)
        }
        #expect(
            try connection.all("SELECT value FROM t ORDER BY rowid") { $0.text(0) } == ["outer", "inner"])
        // An outer rollback takes the released inner part with it.
        try connection.transaction(.immediate) {
            try connection.transaction(.immediate) {
                try connection.run("INSERT INTO t VALUES ('gone')")
                return ((), commit: true)
            }
            return ((), commit: false)
        }
        #expect(
            try connection.all("SELECT value FROM t ORDER BY rowid") { $0.text(0) } == ["outer", "inner"])
        #expect(!connection.isInTransaction)
    }

    @Test func aMissingTableIsKnownBySQLiteNotByItsMessage() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        #expect(try !connection.tableExists("grdb_migrations"))
        #expect(try Schema.appliedMigrations(connection) == [])
        try connection.execute("CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
        #expect(try connection.tableExists("grdb_migrations"))
        // Another missing table behind the same query is a failure, not "nothing applied".
        try connection.execute(
            "DROP TABLE grdb_migrations; CREATE VIEW grdb_migrations AS SELECT identifier FROM gone")
        #expect(throws: SQLiteError.self) { try Schema.appliedMigrations(connection) }
    }

    @Test func aLockHeldElsewhereIsBusyWithSQLitesCode() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("busy.sqlite")
        let first = try SQLiteConnection(path: path)
        try first.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (value INTEGER)")
        let second = try SQLiteConnection(path: path, busyTimeout: 0)
        try first.transaction(.immediate) {
            try first.run("INSERT INTO t VALUES (1)")
            let error = #expect(throws: SQLiteError.self) {
                try second.transaction(.immediate) {
                    try second.run("INSERT INTO t VALUES (2)")
                    return ((), commit: true)
                }
            }
            #expect(error?.primaryCode == SQLITE_BUSY)
            // A reader is not blocked by the writer (WAL), and sees the last commit only.
            #expect(try second.all("SELECT value FROM t") { $0.int(0) } == [])
            return ((), commit: true)
        }
        #expect(try second.all("SELECT value FROM t") { $0.int(0) } == [1])
        // The refused connection is left usable, outside any transaction.
        #expect(!second.isInTransaction)
    }

    @Test func anInterruptedQueryThrowsAndLeavesTheConnectionUsable() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try numbers(connection, count: 50)
        var seen = 0
        let error = #expect(throws: SQLiteError.self) {
            try connection.transaction(.deferred) {
                try connection.query("SELECT value FROM n") { _ in
                    seen += 1
                    if seen == 10 { connection.interrupt() }
                }
                return ((), commit: true)
            }
        }
        #expect(error?.primaryCode == SQLITE_INTERRUPT)
        #expect(seen == 10)
        #expect(try connection.first("SELECT count(*) FROM n") { $0.int(0) } == 50)
    }

    @Test func textWithANULAndHugeValuesRoundTripWhole() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (value TEXT)")
        let withNUL = "before\u{0}after ✓"
        let huge = String(repeating: "0123456789", count: 2_000_000)
        for value in [withNUL, huge, ""] {
            try connection.run("DELETE FROM t")
            try connection.run("INSERT INTO t VALUES (?)", [.text(value)])
            #expect(try connection.first("SELECT value FROM t") { $0.text(0) } == value)
            #expect(
                try connection.first("SELECT length(CAST(value AS BLOB)) FROM t") { $0.int(0) }
                    == value.utf8.count)
        }
        // Past SQLite's length limit, the value is refused with SQLITE_TOOBIG and nothing is written.
        connection.limit(SQLITE_LIMIT_LENGTH, 1_000)
        try connection.run("DELETE FROM t")
        let error = #expect(throws: SQLiteError.self) {
            try connection.run("INSERT INTO t VALUES (?)", [.text(String(repeating: "x", count: 1_001))])
        }
        #expect(error?.primaryCode == SQLITE_TOOBIG)
        #expect(try connection.first("SELECT count(*) FROM t") { $0.int(0) } == 0)
    }

    /// A commit to a file that does not exist yet runs its body once: its outcome on the empty
    /// database is what the new file gets.
    @Test func aCommitThatCreatesTheFileRunsItsBodyOnce() throws {
        let folder = try TemporaryFolder()
        let database = try OnboardingDatabase.open(path: folder.path("new.sqlite"))
        var runs = 0
        try database.commit(SessionKey(app: "test", user: "ann"), scopes: [:]) { session in
            runs += 1
            session.domain["runs"] = .int(runs)
            return ((), nil)
        }
        #expect(runs == 1)
        #expect(database.createdFile)
        let reopened = try OnboardingDatabase.open(path: folder.path("new.sqlite"))
        #expect(try reopened.session(SessionKey(app: "test", user: "ann"), scopes: [:]).domain["runs"] == 1)
    }

    /// Replay and sync read a row's facts strictly: a newer release's fact kind is left out, but
    /// facts that do not read are an error naming the row, never an empty list.
    @Test func storedFactsThatDoNotReadAreAnErrorNotNothing() throws {
        func row(_ facts: String?) -> JournalRow {
            JournalRow(
                id: 7, time: Date(timeIntervalSince1970: 0), app: "test", user: "ann", flow: nil, step: nil,
                event: "next", outcome: "", eventJSON: "{}", contextJSON: "{}", effectsJSON: "[]",
                catalogVersion: 1, factsJSON: facts, catalogFingerprint: nil)
        }
        #expect(try row(nil).storedFacts() == nil)
        let newer =
            #"[{"fact":"flowStarted","flow":"walk","plan":["a"]},{"fact":"fromTheFuture","flow":"walk"}]"#
        #expect(try row(newer).storedFacts()?.count == 1)
        for broken in ["not json", #"{"fact":"flowStarted"}"#, #"[{"fact":"stepEntered","flow":"walk"}]"#] {
            let error = #expect(throws: StorageError.self) { try row(broken).storedFacts() }
            #expect(error?.description.contains("journal row 7") == true, "\(broken)")
            // A view still reads the row, without facts.
            #expect(row(broken).facts == [])
        }
    }
}
