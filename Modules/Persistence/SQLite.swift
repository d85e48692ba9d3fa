import CSQLite

/// A value bound to a statement's `?` or read from a column.
enum SQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    init(_ text: String?) { self = text.map(SQLValue.text) ?? .null }
    init(_ number: Int?) { self = number.map { .integer(Int64($0)) } ?? .null }
    init(_ number: Double?) { self = number.map(SQLValue.real) ?? .null }
}

/// What SQLite said when it refused: its extended result code and message.
struct SQLiteError: Error, Equatable, CustomStringConvertible {
    /// The extended result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_TRIGGER`, ...).
    var code: Int32
    var message: String

    /// The primary result code (`SQLITE_BUSY` for every kind of busy).
    var primaryCode: Int32 { code & 0xFF }
    var description: String { message }
}

/// One connection to a SQLite database through the library's C API, used by one thread at a time
/// (``OnboardingDatabase`` holds a lock around it).
///
/// Why not GRDB, which this package used until 0.8: GRDB imports Foundation (it extends NSNumber,
/// NSData, NSDate and friends), which links swift-corelibs-foundation and ICU into every product's
/// CLI. That alone made a one-shot command's peak memory three times the `sqlite3` shell's and
/// started it twice as slowly (Docs/Performance.md, the cold start). What Persistence needs of
/// SQLite is small: prepared statements kept per SQL text, transactions, a busy timeout, and a
/// migrator, which are here.
final class SQLiteConnection {
    private let handle: OpaquePointer
    /// Prepared statements by SQL text, kept for the connection's life: one lookup a query.
    private var statements: [String: KeptStatement] = [:]
    /// How deep `transaction` calls are nested: the outermost is BEGIN, the inner ones SAVEPOINTs.
    private var transactionDepth = 0

    /// SQLite's process-wide configuration, set once before the first connection: memory
    /// statistics off (`SQLITE_CONFIG_MEMSTATUS`, which SQLite's own list of recommended options
    /// turns off at compile time). With them on, every allocation of every connection takes one
    /// mutex of the process, which threads working on databases of their own then queue on (the
    /// cross-app suite's explorations, each on its own thread). What they feed is left unused here
    /// (`sqlite3_memory_used`, the soft and hard heap limits). SQLite takes the setting only before
    /// it is first used; a host app that used it already keeps what it chose (the call is refused).
    static let configured: Int32 = onboarding_sqlite3_disable_memstatus()

    /// Opens (and by default creates) the database at `path` (`:memory:` for a private one).
    ///
    /// - Parameters:
    ///   - readOnly: open read-only; the file must exist.
    ///   - uri: `path` is a `file:` URI (`file:/a/b.sqlite?immutable=1`).
    ///   - busyTimeout: seconds to wait for another connection's lock before `SQLITE_BUSY`.
    init(path: String, readOnly: Bool = false, uri: Bool = false, busyTimeout: Double = 0) throws {
        _ = Self.configured
        var flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        flags |= SQLITE_OPEN_NOMUTEX
        if uri { flags |= SQLITE_OPEN_URI }
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let message =
                opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(opened)
            throw SQLiteError(code: code, message: message)
        }
        handle = opened
        sqlite3_extended_result_codes(handle, 1)
        if busyTimeout > 0 {
            sqlite3_busy_timeout(
                handle, busyTimeout < Double(Int32.max) / 1_000 ? Int32(busyTimeout * 1_000) : Int32.max)
        }
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement.handle) }
        sqlite3_close_v2(handle)
    }

    /// Whether this SQLite takes `file:` URIs as file names (Debian's and Apple's builds do).
    static let acceptsURIFilenames: Bool = sqlite3_compileoption_used("USE_URI") != 0

    // MARK: - Statements

    /// Runs SQL that may hold several statements and binds nothing (schema changes, pragmas).
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_free(message)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: text)
        }
    }

    /// Runs one statement to its end with `arguments` bound to its `?`s.
    func run(_ sql: String, _ arguments: [SQLValue] = []) throws {
        try query(sql, arguments) { _ throws in }
    }

    /// Calls `row` for each row one statement returns.
    func query(
        _ sql: String, _ arguments: [SQLValue] = [], _ row: (SQLiteRow) throws -> Void
    ) throws {
        let cached = try prepared(sql)
        // A query run from inside another's row callback with the same SQL gets a statement of its
        // own instead of sharing the cursor.
        let kept = !cached.stepping
        let statement = kept ? cached.handle : try prepareOnce(sql)
        if kept { cached.stepping = true }
        defer {
            if kept {
                cached.stepping = false
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            } else {
                sqlite3_finalize(statement)
            }
        }
        try bind(arguments, to: statement)
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_ROW {
                try row(SQLiteRow(statement: statement))
            } else if code == SQLITE_DONE {
                return
            } else {
                throw error(code)
            }
        }
    }

    /// The rows one statement returns, each made into a value by `make`.
    func all<T>(_ sql: String, _ arguments: [SQLValue] = [], _ make: (SQLiteRow) throws -> T)
        throws -> [T]
    {
        var values: [T] = []
        try query(sql, arguments) { row throws in values.append(try make(row)) }
        return values
    }

    /// The first row's value, if there is a row.
    func first<T>(_ sql: String, _ arguments: [SQLValue] = [], _ make: (SQLiteRow) throws -> T)
        throws -> T?
    {
        var value: T?
        try query(sql, arguments) { row throws in
            if value == nil { value = try make(row) }
        }
        return value
    }

    /// A kept prepared statement, and whether a query is stepping it now.
    private final class KeptStatement {
        let handle: OpaquePointer
        var stepping = false
        init(_ handle: OpaquePointer) { self.handle = handle }
    }

    private func prepared(_ sql: String) throws -> KeptStatement {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code) }
        let kept = KeptStatement(statement)
        statements[sql] = kept
        return kept
    }

    /// A statement for one use, finalized by the caller (a nested query of a kept statement's SQL).
    private func prepareOnce(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code) }
        return statement
    }

    /// Whether a table (or view) of this name exists, asked of SQLite's own schema.
    func tableExists(_ name: String) throws -> Bool {
        try first("SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?", [.text(name)]) {
            _ in true
        }
            ?? false
    }

    /// Makes a running statement of this connection stop with `SQLITE_INTERRUPT` (callable from
    /// another thread, as `sqlite3_interrupt` is).
    func interrupt() { sqlite3_interrupt(handle) }

    /// Lowers one of SQLite's run-time limits for this connection (`SQLITE_LIMIT_LENGTH`, ...);
    /// returns the previous value.
    @discardableResult
    func limit(_ id: Int32, _ value: Int32) -> Int32 { sqlite3_limit(handle, id, value) }

    private func bind(_ arguments: [SQLValue], to statement: OpaquePointer) throws {
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let code: Int32
            switch argument {
            case .null: code = sqlite3_bind_null(statement, position)
            case .integer(let value): code = sqlite3_bind_int64(statement, position, value)
            case .real(let value): code = sqlite3_bind_double(statement, position, value)
            case .text(let value):
                // With its length in bytes: text with a NUL in it is stored whole, not cut there. The
                // 64-bit call: a length past Int32 is refused by SQLite (SQLITE_TOOBIG), not wrapped.
                // From the string's own UTF-8 (SQLite copies it): no C string made of it first.
                var text = value
                code = text.withUTF8 { bytes in
                    guard let start = bytes.baseAddress else {
                        // Empty text is text, not NULL: SQLite binds NULL for a null pointer.
                        return sqlite3_bind_text64(
                            statement, position, "", 0, Self.transient, UInt8(SQLITE_UTF8))
                    }
                    return UnsafeRawPointer(start).withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        sqlite3_bind_text64(
                            statement, position, $0, sqlite3_uint64(bytes.count), Self.transient,
                            UInt8(SQLITE_UTF8))
                    }
                }
            }
            guard code == SQLITE_OK else { throw error(code) }
        }
    }

    private static let transient = unsafeBitCast(
        OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
    }

    // MARK: - Images

    /// The database as the bytes of a file holding it (`sqlite3_serialize`).
    func image() throws -> [UInt8] {
        var size: sqlite3_int64 = 0
        // A database in memory hands out its own bytes (copied once, into the array); a file's
        // are read into a buffer of SQLite's first.
        if let bytes = sqlite3_serialize(handle, "main", &size, UInt32(SQLITE_SERIALIZE_NOCOPY)) {
            return Array(UnsafeBufferPointer(start: bytes, count: Int(size)))
        }
        guard let bytes = sqlite3_serialize(handle, "main", &size, 0) else {
            throw SQLiteError(code: SQLITE_NOMEM, message: "the database could not be serialized")
        }
        defer { sqlite3_free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(size)))
    }

    /// Replaces this (in-memory) connection's database with the one `bytes` hold. An image of a
    /// file in WAL mode is marked as a rollback-journal database (bytes 18 and 19 of the header): a
    /// database in memory has no WAL.
    func load(image: [UInt8]) throws {
        let bytes = image
        guard
            let buffer = sqlite3_malloc64(sqlite3_uint64(max(bytes.count, 1)))?.assumingMemoryBound(
                to: UInt8.self)
        else { throw SQLiteError(code: SQLITE_NOMEM, message: "no memory for a database image") }
        bytes.withUnsafeBufferPointer {
            if let base = $0.baseAddress { buffer.update(from: base, count: bytes.count) }
        }
        if bytes.count >= 20, bytes[18] == 2 || bytes[19] == 2 {
            buffer[18] = 1
            buffer[19] = 1
        }
        let flags = UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE)
        let code = sqlite3_deserialize(
            handle, "main", buffer, sqlite3_int64(bytes.count), sqlite3_int64(bytes.count), flags)
        // The prepared statements go: SQLite re-prepares a kept statement only when the schema's
        // version differs, so one kept across two images of the same version but another layout
        // (files migrated from different releases) would read the old image's pages.
        for statement in statements.values { sqlite3_finalize(statement.handle) }
        statements.removeAll(keepingCapacity: true)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Copies every page of `source`'s main database into this connection's with SQLite's online
    /// backup API: a consistent snapshot of a live database (what its last commit left, WAL
    /// included), read under a read lock, without copying its files.
    func copy(from source: SQLiteConnection) throws {
        guard let backup = sqlite3_backup_init(handle, "main", source.handle, "main") else {
            throw error(sqlite3_errcode(handle))
        }
        let code = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE else {
            throw SQLiteError(code: code, message: String(cString: sqlite3_errstr(code)))
        }
        guard finished == SQLITE_OK else { throw error(finished) }
    }

    // MARK: - Transactions and counters

    enum TransactionKind: String {
        /// Takes the write lock at once (waiting for it under the busy timeout): for writes.
        case immediate = "BEGIN IMMEDIATE"
        /// Takes locks as statements need them: for reads that must see one snapshot.
        case deferred = "BEGIN DEFERRED"
    }

    /// Runs `body` in a transaction: committed when it returns `true`, rolled back when it returns
    /// `false` or throws.
    ///
    /// Inside another transaction it is a SAVEPOINT: rolling it back undoes only its own writes, and
    /// releasing it commits nothing until the outermost transaction does (`kind` applies to the
    /// outermost only).
    func transaction<T>(_ kind: TransactionKind, _ body: () throws -> (T, commit: Bool)) throws -> T {
        let savepoint = transactionDepth > 0 ? "nested_\(transactionDepth)" : nil
        try run(savepoint.map { "SAVEPOINT \($0)" } ?? kind.rawValue)
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        let result: (T, commit: Bool)
        do {
            result = try body()
        } catch {
            rollBack(savepoint)
            throw error
        }
        do {
            if let savepoint {
                if !result.commit { try run("ROLLBACK TO \(savepoint)") }
                try run("RELEASE \(savepoint)")
            } else {
                try run(result.commit ? "COMMIT" : "ROLLBACK")
            }
        } catch {
            // A failed COMMIT (a full disk) leaves the transaction open: end it, nothing written.
            rollBack(savepoint)
            throw error
        }
        return result.0
    }

    /// Undoes a transaction (or a savepoint's part of it) that failed. Why the errors are dropped:
    /// the failure being reported is the one that matters, and SQLite may already have rolled the
    /// transaction back itself (a full disk, an interrupt), which makes ROLLBACK fail with "no
    /// transaction is active".
    private func rollBack(_ savepoint: String?) {
        if let savepoint {
            if sqlite3_get_autocommit(handle) == 0 {
                try? run("ROLLBACK TO \(savepoint)")
                try? run("RELEASE \(savepoint)")
            }
        } else if sqlite3_get_autocommit(handle) == 0 {
            try? run("ROLLBACK")
        }
    }

    /// Whether a transaction is open (SQLite is not in autocommit mode).
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rows changed by every statement of this connection since it opened.
    var totalChanges: Int { Int(sqlite3_total_changes64(handle)) }
    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes64(handle)) }
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

}

/// The current row of a statement, read by column index (in the order the SELECT names them).
struct SQLiteRow {
    fileprivate let statement: OpaquePointer

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column's UTF-8 bytes, valid only until the row moves on (no String made).
    func withBytes<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T? {
        guard let bytes = sqlite3_column_text(statement, column) else { return nil }
        return try body(
            UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))))
    }

    func integer(_ column: Int32) -> Int64? { isNull(column) ? nil : sqlite3_column_int64(statement, column) }
    func int(_ column: Int32) -> Int? { integer(column).map(Int.init) }
    func double(_ column: Int32) -> Double? {
        isNull(column) ? nil : sqlite3_column_double(statement, column)
    }
}
