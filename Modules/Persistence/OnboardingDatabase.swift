import CSQLite
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The one owner of the SQLite database: opens it, migrates it, and exposes intention-named reads
/// and the single transactional write every accepted event goes through.
///
/// A file is opened as one connection in WAL mode with a busy timeout, so several processes can
/// read and write it at once; within a process every use of the connection holds a lock.
/// `inMemory()` gives a private database for fast tests.
///
/// A file that does not exist yet is created by the first commit that writes something, never by a
/// read or a refused event: until then reads see an empty database, and each commit is first tried
/// on an empty in-memory one, so a refusal leaves nothing behind.
public final class OnboardingDatabase: Sendable {
    /// Where the database lives, or ":memory:".
    public let path: String
    /// Where work on this file runs, off Swift's cooperative pool (``DatabaseExecutor``).
    public let executor: DatabaseExecutor
    private let busyTimeout: Double
    private let createsFolder: Bool
    /// The connection, created on the first write, and the session cache (``commit(_:scopes:_:)``).
    let state: Locked<State>

    /// The file's connection once it exists, and what this process did with it.
    struct State {
        var connection: SQLiteConnection?
        var created = false
        /// An empty, migrated in-memory database: what reads see while the file does not exist, and
        /// where a first event is tried (and rolled back) before the file is created.
        var empty: SQLiteConnection?
        /// The session the last commit left (see ``SessionCache``).
        var cache: SessionCache?
    }

    private init(
        path: String, connection: SQLiteConnection?, busyTimeout: Double, createsFolder: Bool,
        executor: DatabaseExecutor? = nil
    ) {
        self.path = path
        self.executor = executor ?? DatabaseExecutor(label: "onboarding.database")
        self.busyTimeout = busyTimeout
        self.createsFolder = createsFolder
        state = Locked(State(connection: connection))
    }

    /// Opens the database file at `path`. An existing file is opened (and migrated) now; a new one
    /// is created by the first commit that writes (see the type's discussion).
    ///
    /// - Parameters:
    ///   - createsFolder: create the file's folder with the file (the CLI's default location);
    ///     otherwise the folder must exist.
    ///   - executor: where the database's work runs; by default a queue of its own. Databases given
    ///     one executor run their work one after another, and a caller running on it
    ///     (`withTaskExecutorPreference`) reaches all of them without a hop to another thread.
    /// - Throws: ``StorageError`` when the path is empty or a folder, its folder does not exist (and
    ///   is not to be created), the file or folder is read-only, the file was written by a newer
    ///   schema or cannot be opened; the file is then left byte-for-byte unchanged.
    public static func open(
        path: String, busyTimeout: Double = 10, createsFolder: Bool = false, executor: DatabaseExecutor? = nil
    ) throws -> OnboardingDatabase {
        guard !path.isEmpty else { throw StorageError.emptyPath }
        if FileStatus(path) == .folder { throw StorageError.isFolder(path: path) }
        let folder = FileStatus.folder(of: path)
        let folderExists = FileStatus(folder) == .folder
        guard folderExists || createsFolder else {
            throw StorageError.missingFolder(path: path, folder: folder)
        }
        // Checked before SQLite opens anything: it would create a journal beside the file, and root
        // writes through permission bits, so a file or folder marked read-only is respected here.
        if folderExists, FileStatus.isReadOnly(folder) {
            throw StorageError.readOnly(path: path, what: "the folder \(folder)")
        }
        let database = OnboardingDatabase(
            path: path, connection: nil, busyTimeout: busyTimeout, createsFolder: createsFolder,
            executor: executor)
        if FileStatus(path) != .missing {
            try database.state.withLock { state in _ = try database.existing(&state) }
        }
        return database
    }

    /// A private in-memory database; `executor` as for ``open(path:busyTimeout:createsFolder:executor:)``.
    public static func inMemory(executor: DatabaseExecutor? = nil) throws -> OnboardingDatabase {
        OnboardingDatabase(
            path: ":memory:", connection: try emptyDatabase(), busyTimeout: 0, createsFolder: false,
            executor: executor)
    }

    /// A private in-memory database holding what `image` holds (from ``image()`` of a database this
    /// build opened, so its schema is current; an empty image is a new database): a copy of a
    /// database to change without touching the original (the cross-app suite explores states so).
    public static func inMemory(image: [UInt8]) throws -> OnboardingDatabase {
        let database = try inMemory()
        try database.load(image: image)
        return database
    }

    /// A private in-memory copy of the database file at `path`, taken with SQLite's backup API and
    /// brought up to this build's schema: the file itself is only read (never migrated, never
    /// checkpointed), and what its last commit left is what the copy holds, WAL included.
    ///
    /// - Throws: ``StorageError`` naming `path` when it is not a file, not a SQLite database, or was
    ///   written by a newer schema.
    public static func snapshot(of path: String, busyTimeout: Double = 10) throws -> OnboardingDatabase {
        switch FileStatus(path) {
        case .file: break
        case .missing:
            throw StorageError("there is no file at \(path); give the path of an existing .sqlite file")
        case .folder: throw StorageError.isFolder(path: path)
        }
        let copy: SQLiteConnection
        do {
            let source = try SQLiteConnection(path: path, readOnly: true, busyTimeout: busyTimeout)
            let unknown = try Schema.unknownMigrations(source)
            if !unknown.isEmpty { throw StorageError.newerSchema(path: path, unknown: unknown) }
            copy = try SQLiteConnection(path: ":memory:")
            try copy.copy(from: source)
            try copy.execute("PRAGMA foreign_keys = ON")
            try Schema.migrate(copy)
        } catch let error as StorageError {
            throw error
        } catch let error as SQLiteError where error.primaryCode == SQLITE_NOTADB {
            throw StorageError("\(path) is not a SQLite database (SQLite: \(error)); it was left unchanged")
        } catch {
            throw StorageError.unreadable(path: path, error)
        }
        return OnboardingDatabase(path: ":memory:", connection: copy, busyTimeout: 0, createsFolder: false)
    }

    /// Replaces what this in-memory database holds with what `image` holds (see
    /// ``inMemory(image:)``). The connection is kept (its prepared statements are not: see
    /// `SQLiteConnection.load(image:)`), which makes this much cheaper than a new database (the
    /// cross-app suite loads an image for every move it explores).
    public func load(image: [UInt8]) throws {
        guard path == ":memory:" else {
            throw StorageError("only an in-memory database takes an image; \(path) is a file")
        }
        try state.withLock { state in
            guard let connection = state.connection else { return }
            state.cache = nil
            try connection.load(image: image.isEmpty ? Self.emptyImage() : image)
        }
    }

    /// The image of a new database with the current schema, made once.
    private static func emptyImage() throws -> [UInt8] {
        try emptyImageOnce.withLock { image in
            if let image { return image }
            let made = try emptyDatabase().image()
            image = made
            return made
        }
    }

    private static let emptyImageOnce = Locked<[UInt8]?>(nil)

    /// The database as the bytes of a file holding it: every table and row, for a copy (see
    /// ``inMemory(image:)``) or a byte-for-byte comparison. Empty while a file does not exist yet.
    public func image() throws -> [UInt8] {
        try state.withLock { state in try existing(&state)?.image() ?? [] }
    }

    /// Whether this process created the file (with its first write).
    public var createdFile: Bool { state.withLock { $0.created } }

    /// Whether the file exists yet (a new database is created by its first write).
    public var exists: Bool {
        state.withLock { $0.connection != nil } || FileStatus(path) != .missing
    }

    /// Creates the file now, with its schema, if it does not exist yet (an app that wants the file
    /// at install rather than at the first write; tools that write the same format beside it).
    public func createIfMissing() throws { try state.withLock { state in _ = try created(&state) } }

    // MARK: - Connections

    /// Runs `body` in one read transaction: on the file, or on an empty database while the file
    /// does not exist.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try state.withLock { state in
            let connection = try existing(&state) ?? emptyDatabase(&state)
            return try connection.transaction(.deferred) { (try body(connection), true) }
        }
    }

    /// Runs `body` in one immediate transaction on the file, creating it if it does not exist.
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try state.withLock { state in
            let connection = try created(&state)
            return try connection.transaction(.immediate) { (try body(connection), true) }
        }
    }

    /// The file's connection, opening the file if it exists (another process may have created it).
    func existing(_ state: inout State) throws -> SQLiteConnection? {
        if let connection = state.connection { return connection }
        guard FileStatus(path) != .missing else { return nil }
        if FileStatus.isReadOnly(path) { throw StorageError.readOnly(path: path, what: "the file") }
        let (connection, madeSchema) = try Self.connect(path: path, busyTimeout: busyTimeout)
        state.connection = connection
        state.created = madeSchema
        return connection
    }

    /// The file's connection, creating the file (and its folder, when asked) if it does not exist.
    func created(_ state: inout State) throws -> SQLiteConnection {
        if let connection = try existing(&state) { return connection }
        let folder = FileStatus.folder(of: path)
        if createsFolder {
            guard FileStatus.createFolder(folder) else {
                throw StorageError.missingFolder(path: path, folder: folder)
            }
        }
        // Two processes may both find the file missing (or find the empty file the other's open
        // just left): the one whose connection applied the first migration made the database.
        let (connection, madeSchema) = try Self.connect(path: path, busyTimeout: busyTimeout)
        state.connection = connection
        state.created = madeSchema
        return connection
    }

    func emptyDatabase(_ state: inout State) throws -> SQLiteConnection {
        if let empty = state.empty { return empty }
        let empty = try Self.emptyDatabase()
        state.empty = empty
        return empty
    }

    private static func emptyDatabase() throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("PRAGMA foreign_keys = ON")
        try Schema.migrate(connection)
        return connection
    }

    /// Opens the file read-write, refuses it if a newer build migrated it (before anything could
    /// change it), switches it to WAL and brings its schema up to date.
    /// `madeSchema`: whether this connection applied the file's first migration.
    private static func connect(path: String, busyTimeout: Double) throws -> (
        connection: SQLiteConnection, madeSchema: Bool
    ) {
        do {
            // With a -wal beside the file, a read-write connection that closed would checkpoint it
            // into the file: a file that may be refused is first read through a read-only one.
            if FileStatus(path + "-wal") != .missing {
                try refuseNewerSchema(at: path, busyTimeout: busyTimeout)
            }
            let connection = try SQLiteConnection(path: path, busyTimeout: busyTimeout)
            let unknown = try Schema.unknownMigrations(connection)
            if !unknown.isEmpty { throw StorageError.newerSchema(path: path, unknown: unknown) }
            try connection.execute("PRAGMA foreign_keys = ON")
            try useWAL(connection, patience: busyTimeout)
            let madeSchema = try Schema.migrate(connection)
            return (connection, madeSchema)
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError.unreadable(path: path, error)
        }
    }

    /// Switches the file to WAL, which lets other processes read while one writes; a file already in
    /// WAL mode is not touched. SQLite answers "locked" to the switch without waiting on its busy
    /// handler while another process is setting the same new file up, so this waits by itself.
    private static func useWAL(_ connection: SQLiteConnection, patience: Double) throws {
        let deadline = Date().addingTimeInterval(patience)
        while true {
            do {
                if try connection.first("PRAGMA journal_mode", [], { $0.text(0) }) != "wal" {
                    try connection.execute("PRAGMA journal_mode = WAL")
                }
                return
            } catch let error as SQLiteError
                where (error.primaryCode == SQLITE_BUSY || error.primaryCode == SQLITE_LOCKED)
                && Date() < deadline
            {
                FileStatus.sleep(seconds: 0.01)
            }
        }
    }

    /// Reads the schema through a read-only connection, which changes nothing in the file. When
    /// there is no -wal (nothing uncheckpointed to read) it opens the file as immutable, which
    /// creates nothing beside it either, so a refused file is left exactly as it was.
    private static func refuseNewerSchema(at path: String, busyTimeout: Double) throws {
        var unknown: [String]
        if FileStatus(path + "-wal") == .missing, SQLiteConnection.acceptsURIFilenames {
            let immutable = "file:\(FileStatus.percentEncodedPath(path))?immutable=1"
            do {
                unknown = try Schema.unknownMigrations(
                    try SQLiteConnection(path: immutable, readOnly: true, uri: true, busyTimeout: busyTimeout)
                )
            } catch {
                // An immutable read takes no lock: another process that checkpointed into the file
                // while it was read makes it look torn. The file is in use then, so a locking read
                // (which may leave a -shm beside it) is the right one.
                unknown = try Schema.unknownMigrations(
                    try SQLiteConnection(path: path, readOnly: true, busyTimeout: busyTimeout))
            }
        } else {
            unknown = try Schema.unknownMigrations(
                try SQLiteConnection(path: path, readOnly: true, busyTimeout: busyTimeout))
        }
        if !unknown.isEmpty { throw StorageError.newerSchema(path: path, unknown: unknown) }
    }

    /// The migration ids applied to this database, in order.
    public func appliedMigrations() throws -> [String] {
        try read { connection in try Schema.appliedMigrations(connection) }
    }

    // MARK: - Reading

    /// The session as stored now, for display. `scopes` says which flows and state keys are
    /// install-scoped.
    public func session(_ key: SessionKey, scopes: Scopes) throws -> Session {
        try read { connection in try Self.load(connection, key, scopes: scopes) }
    }

    /// Every stored flow state of an app, by subject ("@install" or a user id) and flow.
    public func storedFlows(app: String) throws -> [String: [FlowID: FlowState]] {
        try read { connection in
            var result: [String: [FlowID: FlowState]] = [:]
            try connection.query(
                "SELECT subject, flow, state_json FROM flow_state WHERE app = ?", [.text(app)]
            ) {
                row in
                let state = try JSONCoding.value(FlowState.self, from: row.text(2) ?? "")
                result[row.text(0) ?? "", default: [:]][FlowID(row.text(1) ?? "")] = state
            }
            return result
        }
    }
}
