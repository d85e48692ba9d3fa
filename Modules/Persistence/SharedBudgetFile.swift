import SchemaMigrations
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The family's display budget on one device: a SQLite file every product on the device opens
/// (the app-group container on iOS, a path on Linux), holding each counted start and what the
/// account server said other devices of an account counted. Separate from each product's own
/// database, which stays the product's alone.
///
/// Starts are written after the event that made them committed in the product's database, keyed
/// so writing one twice changes nothing; ``catchUp(from:app:)`` copies any a crash left behind
/// from the product's journal, so no counted start is lost.
public final class SharedBudgetFile: Sendable {
    public let path: String
    private let connection: Locked<SQLiteConnection>

    /// The versioned schema, in order, run by the device's one runner (``Schema/migrate(_:history:table:)``);
    /// applied ones are never edited (`DeviceMigrationFreezeTests`).
    static let history = SchemaHistory([
        SchemaMigration(
            "v1-budget",
            [
                """
                CREATE TABLE budget_start (
                    device TEXT NOT NULL, account TEXT, app TEXT NOT NULL, flow TEXT NOT NULL,
                    at REAL NOT NULL, day INTEGER NOT NULL,
                    PRIMARY KEY (device, app, flow, at)
                );
                CREATE INDEX budget_start_by_day ON budget_start (day);
                CREATE TABLE budget_remote (
                    account TEXT NOT NULL, device TEXT NOT NULL, day INTEGER NOT NULL,
                    starts INTEGER NOT NULL, last_at REAL,
                    PRIMARY KEY (account, device, day)
                );
                CREATE TABLE budget_source (source TEXT PRIMARY KEY, journal_id INTEGER NOT NULL);
                CREATE TABLE budget_device (id TEXT NOT NULL);
                """,
                // Releases before 0.35 read the schema's number here: a file this release makes
                // opens in theirs too.
                "PRAGMA user_version = 1",
            ])
    ])
    static let table = "budget_migrations"

    /// Opens (creating and migrating) the file at `path`; its folder must exist.
    public init(path: String, busyTimeout: Double = 10) throws {
        self.path = path
        do {
            let connection = try SQLiteConnection(path: path, busyTimeout: busyTimeout)
            try connection.execute("PRAGMA journal_mode = WAL")
            try Self.adoptUserVersion(connection)
            try Schema.migrate(connection, history: Self.history, table: Self.table)
            let unknown = Self.history.unknown(
                applied: try Schema.appliedMigrations(connection, table: Self.table))
            guard unknown.isEmpty else {
                throw StorageError(
                    """
                    the display budget file \(path) was written by a newer release (migration \
                    \(unknown.joined(separator: ", ")))
                    """
                )
            }
            self.connection = Locked(connection)
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError("the display budget file \(path) does not open: \(error)")
        }
    }

    /// Releases before 0.35 numbered the budget file's schema in `PRAGMA user_version` (1: the
    /// tables of `v1-budget`): such a file is recorded as having `v1-budget`, once, in the
    /// migration that adopts it, so the runner does not create its tables again.
    static func adoptUserVersion(_ connection: SQLiteConnection) throws {
        try connection.transaction(.immediate) {
            let version = try connection.first("PRAGMA user_version", []) { Int32($0.int(0) ?? 0) } ?? 0
            guard version >= 1, !(try connection.tableExists(table)) else { return ((), commit: true) }
            guard version == 1 else {
                throw StorageError(
                    "the display budget file was written by a newer release (schema \(version))")
            }
            try connection.execute("CREATE TABLE \(table) (identifier TEXT NOT NULL PRIMARY KEY)")
            try connection.run("INSERT INTO \(table) (identifier) VALUES (?)", [.text("v1-budget")])
            return ((), commit: true)
        }
    }

    /// The device's id for the budget, the same for every product on it (made on first use).
    public func deviceID() throws -> String {
        try connection.withLock { db in
            try db.transaction(.immediate) {
                if let id = try db.first("SELECT id FROM budget_device", [], { $0.text(0) }) ?? nil {
                    return (id, commit: true)
                }
                let id = UUID().uuidString.lowercased()
                try db.run("INSERT INTO budget_device (id) VALUES (?)", [.text(id)])
                return (id, commit: true)
            }
        }
    }

    /// What the budget counted for a person on `device` (any product, any user of the device) and,
    /// signed in as `account`, on the account's other devices as the server reported them. A remote
    /// last start after `now` (another device's clock ahead of this one) is kept in the file and
    /// applied once `now` reaches it.
    public func ledger(device: String, account: String?, since day: BudgetDay, now: Date? = nil) throws
        -> BudgetLedger
    {
        try connection.withLock { db in
            var ledger = BudgetLedger()
            try db.query(
                "SELECT day, count(*), max(at) FROM budget_start WHERE device = ? AND day >= ? GROUP BY day",
                [.text(device), .integer(Int64(day.number))]
            ) { row in
                ledger.counts[BudgetDay(number: row.int(0) ?? 0), default: [:]][device] = row.int(1) ?? 0
                if let at = row.double(2) {
                    ledger.lastStart = max(ledger.lastStart ?? .distantPast, Date(timeIntervalSince1970: at))
                }
            }
            if let account {
                try db.query(
                    """
                    SELECT device, day, starts, last_at FROM budget_remote WHERE account = ? AND device != ?
                        AND day >= ?
                    """,
                    [.text(account), .text(device), .integer(Int64(day.number))]
                ) { row in
                    let lastStart = row.double(3).map(Date.init(timeIntervalSince1970:)).flatMap { start in
                        now.map { start <= $0 } ?? true ? start : nil
                    }
                    let remote = BudgetLedger(
                        counts: [BudgetDay(number: row.int(1) ?? 0): [row.text(0) ?? "": row.int(2) ?? 0]],
                        lastStart: lastStart)
                    ledger = ledger.merged(with: remote)
                }
            }
            return ledger
        }
    }

    /// Records counted starts; one already recorded changes nothing.
    public func record(_ starts: [CountedStart]) throws {
        guard !starts.isEmpty else { return }
        try connection.withLock { db in
            try db.transaction(.immediate) {
                for start in starts {
                    try db.run(
                        """
                        INSERT OR IGNORE INTO budget_start (device, account, app, flow, at, day) VALUES (?, \
                        ?, ?, ?, ?, ?)
                        """,
                        [
                            .text(start.device), SQLValue(start.account), .text(start.app),
                            .text(start.flow.rawValue),
                            .real(start.at.timeIntervalSince1970),
                            .integer(Int64(BudgetDay(start.at).number)),
                        ])
                }
                return ((), commit: true)
            }
        }
    }

    /// This device's count of each day since `day` for `account`, with the day's last start: what
    /// it tells the account server.
    public func dailyCounts(device: String, account: String, since day: BudgetDay) throws -> [BudgetDayCount]
    {
        try connection.withLock { db in
            var counts: [BudgetDayCount] = []
            try db.query(
                """
                SELECT day, count(*), max(at) FROM budget_start WHERE device = ? AND account = ?
                    AND day >= ? GROUP BY day ORDER BY day
                """,
                [.text(device), .text(account), .integer(Int64(day.number))]
            ) { row in
                counts.append(
                    BudgetDayCount(
                        device: device, day: BudgetDay(number: row.int(0) ?? 0), starts: row.int(1) ?? 0,
                        lastStart: row.double(2).map(Date.init(timeIntervalSince1970:))))
            }
            return counts
        }
    }

    /// Keeps what the server says an account's devices counted: per (device, day) the larger count
    /// and the later last start (a join: any order of answers ends the same).
    public func learn(_ counts: [BudgetDayCount], account: String) throws {
        guard !counts.isEmpty else { return }
        try connection.withLock { db in
            try db.transaction(.immediate) {
                for count in counts {
                    try db.run(
                        """
                        INSERT INTO budget_remote (account, device, day, starts, last_at) VALUES (?, ?, ?,
                            ?, ?)
                        ON CONFLICT (account, device, day) DO UPDATE SET
                            starts = max(starts, excluded.starts),
                            last_at = CASE WHEN last_at IS NULL THEN excluded.last_at
                                           WHEN excluded.last_at IS NULL THEN last_at
                                           ELSE max(last_at, excluded.last_at) END
                        """,
                        [
                            .text(account), .text(count.device), .integer(Int64(count.day.number)),
                            .integer(Int64(count.starts)),
                            SQLValue(count.lastStart?.timeIntervalSince1970),
                        ])
                }
                return ((), commit: true)
            }
        }
    }

    /// Copies the counted starts of `app`'s journal rows written after the last ones copied from
    /// `database` (a crash between an event's commit and ``record(_:)`` left them behind).
    public func catchUp(
        from database: OnboardingDatabase, app: String, device: String, accountOf: (String) -> String?
    )
        throws
    {
        let source = "\(database.path)|\(app)"
        let after = try connection.withLock { db in
            try db.first("SELECT journal_id FROM budget_source WHERE source = ?", [.text(source)]) {
                $0.integer(0) ?? 0
            } ?? 0
        }
        let (rows, through) = try database.budgetStarts(app: app, afterID: after)
        try record(
            rows.map { row in
                CountedStart(
                    device: device, account: accountOf(row.user), app: app, flow: row.flow, at: row.time)
            })
        guard let last = through, last > after else { return }
        try connection.withLock { db in
            try db.run(
                """
                INSERT INTO budget_source (source, journal_id) VALUES (?, ?) ON CONFLICT (source) DO UPDATE
                    SET journal_id = max(journal_id, excluded.journal_id)
                """,
                [.text(source), .integer(last)])
        }
    }
}

/// One start the budget counted: where, for whom, which flow, when.
public struct CountedStart: Sendable, Equatable {
    public var device: String
    /// The account, for a product whose user signs in (its starts travel to the account's devices).
    public var account: String?
    public var app: String
    public var flow: FlowID
    public var at: Date

    public init(device: String, account: String?, app: String, flow: FlowID, at: Date) {
        self.device = device
        self.account = account
        self.app = app
        self.flow = flow
        self.at = at
    }
}
