import Foundation
import GRDB
import GRDBSQLite
import TourCore

/// The one owner of the SQLite database: opens it, migrates it, and exposes intention-named reads
/// and the single transactional write every accepted event goes through.
///
/// A file is opened as one connection in WAL mode with a busy timeout, so several processes can
/// read and write it at once. It is a `DatabaseQueue`, not a `DatabasePool`: a pool creates and
/// drops a table each time it opens (to make the WAL file exist), which would change the file even
/// for a command that is refused. `inMemory()` gives a private database for fast tests.
///
/// A file that does not exist yet is created by the first commit that writes something, never by a
/// read or a refused event: until then reads see an empty database, and each commit is first tried
/// on an empty in-memory one, so a refusal leaves nothing behind.
public final class OnboardingDatabase: Sendable {
    /// Where the database lives, or ":memory:".
    public let path: String
    private let connection: Connection

    /// The file's connection once it exists, and how to create it.
    private final class Connection: @unchecked Sendable {
        let lock = NSLock()
        var writer: (any DatabaseWriter)?
        var created = false
        let busyTimeout: TimeInterval
        let createsFolder: Bool
        /// The session the last commit left (see ``SessionCache``).
        var cache: SessionCache?

        init(writer: (any DatabaseWriter)?, busyTimeout: TimeInterval, createsFolder: Bool) {
            self.writer = writer
            self.busyTimeout = busyTimeout
            self.createsFolder = createsFolder
        }
    }

    private init(path: String, connection: Connection) {
        self.path = path
        self.connection = connection
    }

    /// Brings a connection's schema up to date. Migrating an up-to-date file would still open a
    /// write transaction; reading first keeps a read-only command from touching the file.
    /// Two processes creating one new file race to migrate it: the loser sees "table already
    /// exists" or a table the winner has not committed yet. Each migration is its own transaction,
    /// so the loser only has to look again, with a fresh schema cache.
    private static func migrate(_ writer: any DatabaseWriter, inMemory: Bool) throws {
        var attempts = 0
        while true {
            do {
                if try !writer.read({ db in try Schema.migrator.hasCompletedMigrations(db) }) {
                    try Schema.migrator.migrate(writer)
                }
                return
            } catch {
                attempts += 1
                guard attempts < 100, !inMemory else { throw error }
                try writer.writeWithoutTransaction { db in db.clearSchemaCache() }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }

    /// Opens the database file at `path`. An existing file is opened (and migrated) now; a new one
    /// is created by the first commit that writes (see the type's discussion).
    ///
    /// - Parameter createsFolder: create the file's folder with the file (the CLI's default
    ///   location); otherwise the folder must exist.
    /// - Throws: ``StorageError`` when the path is empty or a folder, its folder does not exist (and
    ///   is not to be created), the file or folder is read-only, the file was written by a newer
    ///   schema or cannot be opened; the file is then left byte-for-byte unchanged.
    public static func open(path: String, busyTimeout: TimeInterval = 10, createsFolder: Bool = false) throws
        -> OnboardingDatabase
    {
        guard !path.isEmpty else { throw StorageError.emptyPath }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw StorageError.isFolder(path: path)
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let folderExists =
            FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue
        guard folderExists || createsFolder else {
            throw StorageError.missingFolder(path: path, folder: folder)
        }
        // Checked before SQLite opens anything: it would create a journal beside the file, and root
        // writes through permission bits, so a file or folder marked read-only is respected here.
        if folderExists, isReadOnly(folder) {
            throw StorageError.readOnly(path: path, what: "the folder \(folder)")
        }
        let database = OnboardingDatabase(
            path: path,
            connection: Connection(writer: nil, busyTimeout: busyTimeout, createsFolder: createsFolder))
        if FileManager.default.fileExists(atPath: path) {
            _ = try database.existingWriter()
        }
        return database
    }

    /// Whether this process created the file (with its first write).
    public var createdFile: Bool { connection.lock.withLock { connection.created } }

    /// Whether the file exists yet (a new database is created by its first write).
    public var exists: Bool {
        connection.lock.withLock { connection.writer != nil } || FileManager.default.fileExists(atPath: path)
    }

    /// Creates the file now, with its schema, if it does not exist yet (an app that wants the file
    /// at install rather than at the first write; tools that write the same format beside it).
    public func createIfMissing() throws { _ = try createdWriter() }

    /// The file's connection, opening the file if it exists (another process may have created it).
    func existingWriter() throws -> (any DatabaseWriter)? {
        try connection.lock.withLock {
            if let writer = connection.writer { return writer }
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            if Self.isReadOnly(path) { throw StorageError.readOnly(path: path, what: "the file") }
            try Self.refuseNewerSchema(at: path, busyTimeout: connection.busyTimeout)
            let writer = try Self.connect(path: path, busyTimeout: connection.busyTimeout)
            connection.writer = writer
            return writer
        }
    }

    /// The file's connection, creating the file (and its folder, when asked) if it does not exist.
    func createdWriter() throws -> any DatabaseWriter {
        if let writer = try existingWriter() { return writer }
        return try connection.lock.withLock {
            if let writer = connection.writer { return writer }
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
            if connection.createsFolder {
                do {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                } catch {
                    throw StorageError.missingFolder(path: path, folder: folder.path)
                }
            }
            let existed = FileManager.default.fileExists(atPath: path)
            let writer = try Self.connect(path: path, busyTimeout: connection.busyTimeout)
            connection.writer = writer
            connection.created = !existed
            return writer
        }
    }

    /// A reader: the file's connection, or an empty database while the file does not exist.
    func reader() throws -> any DatabaseWriter {
        try existingWriter() ?? Self.emptyDatabase()
    }

    private static func emptyDatabase() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try migrate(queue, inMemory: true)
        return queue
    }

    private static func connect(path: String, busyTimeout: TimeInterval) throws -> any DatabaseWriter {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.prepareDatabase { db in try useWAL(db, patience: busyTimeout) }
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try migrate(queue, inMemory: false)
            return queue
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError.unreadable(path: path, error)
        }
    }

    /// Whether this SQLite takes `file:` URIs as file names (Debian's and Apple's builds do).
    /// Asked of the library directly: a throwaway connection to read `PRAGMA compile_options` cost
    /// every one-shot command more than its own reads.
    private static let acceptsURIFilenames: Bool = sqlite3_compileoption_used("USE_URI") != 0

    private static func isReadOnly(_ path: String) -> Bool {
        let permissions = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int
        return !FileManager.default.isWritableFile(atPath: path)
            || (permissions.map { $0 & 0o222 == 0 } ?? false)
    }

    /// A private in-memory database.
    public static func inMemory() throws -> OnboardingDatabase {
        OnboardingDatabase(
            path: ":memory:",
            connection: Connection(writer: try emptyDatabase(), busyTimeout: 0, createsFolder: false))
    }

    /// Switches the file to WAL, which lets other processes read while one writes; a file already in
    /// WAL mode is not touched. SQLite answers "locked" to the switch without waiting on its busy
    /// handler while another process is setting the same new file up, so this waits by itself.
    private static func useWAL(_ db: Database, patience: TimeInterval) throws {
        let deadline = Date().addingTimeInterval(patience)
        while true {
            do {
                if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                    try db.execute(sql: "PRAGMA journal_mode = WAL")
                }
                return
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
    }

    /// Reads the schema read-only first: opening a pool would switch the file to WAL, which is a change.
    private static func refuseNewerSchema(at path: String, busyTimeout: TimeInterval) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(busyTimeout)
        let unknown: [String]
        // A read-only connection to a WAL file leaves a -wal and a -shm beside it. When there is no
        // -wal (nothing uncheckpointed to read) the probe opens the file as immutable, which creates
        // nothing, so a refused file is left exactly as it was.
        var probe = path
        if !FileManager.default.fileExists(atPath: path + "-wal"), acceptsURIFilenames,
            let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)
        {
            probe = "file:\(encoded)?immutable=1"
        }
        do {
            let queue = try DatabaseQueue(path: probe, configuration: configuration)
            unknown = try queue.read { db -> [String] in
                guard try db.tableExists("grdb_migrations") else { return [] }
                let known = Set(Schema.migrator.migrations)
                return try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations").filter {
                    !known.contains($0)
                }
            }
            try queue.close()
        } catch {
            throw StorageError.unreadable(path: path, error)
        }
        if !unknown.isEmpty { throw StorageError.newerSchema(path: path, unknown: unknown) }
    }

    /// The migration ids applied to this database, in order.
    public func appliedMigrations() throws -> [String] {
        try reader().read { db in try Schema.migrator.appliedMigrations(db) }
    }

    // MARK: - Reading

    /// The session as stored now, for display. `scopes` says which flows and state keys are
    /// install-scoped.
    public func session(_ key: SessionKey, scopes: Scopes) throws -> Session {
        try reader().read { db in try Self.load(db, key, scopes: scopes) }
    }

    /// Every stored flow state of an app, by subject ("@install" or a user id) and flow.
    public func storedFlows(app: String) throws -> [String: [FlowID: FlowState]] {
        try reader().read { db in
            var result: [String: [FlowID: FlowState]] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT subject, flow, state_json FROM flow_state WHERE app = ?", arguments: [app])
            {
                let state = try JSONCoding.value(FlowState.self, from: row["state_json"])
                result[row["subject"], default: [:]][FlowID(row["flow"] as String)] = state
            }
            return result
        }
    }

    // MARK: - Writing

    /// Loads the session, lets `body` change it, and commits the changed rows and the journal row
    /// `body` returns in one immediate transaction. If `body` throws, nothing is written.
    ///
    /// Every accepted event goes through here: flow state, journal row and product domain state
    /// land together or not at all.
    @discardableResult
    public func commit<T>(
        _ key: SessionKey, scopes: Scopes, _ body: (inout Session) throws -> (T, JournalAppend?)
    ) throws -> T {
        if let writer = try existingWriter() {
            return try Self.commit(on: writer, key, scopes: scopes, cache: connection, body).value
        }
        // No file yet: the event runs first on an empty database and is rolled back there. Refused,
        // it created nothing; accepted, the file is created and the event committed to it.
        let trial = try Self.commit(on: Self.emptyDatabase(), key, scopes: scopes, cache: nil, body)
        guard trial.wrote else { return trial.value }
        return try Self.commit(on: createdWriter(), key, scopes: scopes, cache: connection, body).value
    }

    /// One event's transaction. With a `cache` (the file's connection) the commit is kept and the
    /// session it leaves is remembered for the next; without one (the trial on an empty database)
    /// it is rolled back.
    private static func commit<T>(
        on writer: any DatabaseWriter, _ key: SessionKey, scopes: Scopes, cache: Connection?,
        _ body: (inout Session) throws -> (T, JournalAppend?)
    ) throws -> (value: T, wrote: Bool) {
        try writer.writeWithoutTransaction { db in
            var result: (T, Bool)?
            var remembered: SessionCache?
            try db.inTransaction(.immediate) {
                let stamp = try SessionCache.Stamp(db)
                let cached = cache?.lock.withLock { cache?.cache?.session(for: key, scopes: scopes, at: stamp) }
                let before = try cached ?? Self.load(db, key, scopes: scopes)
                var session = before
                let (value, journal) = try body(&session)
                try Self.save(db, key, scopes: scopes, before: before, after: session)
                if let journal { try Self.append(db, key, journal) }
                result = (value, journal != nil || session != before)
                remembered = SessionCache(
                    key: key, scopes: scopes, session: session,
                    stamp: SessionCache.Stamp(dataVersion: stamp.dataVersion, changes: db.totalChangesCount))
                return cache == nil ? .rollback : .commit
            }
            // Remembered only once the commit succeeded.
            if let cache { cache.lock.withLock { cache.cache = remembered } }
            guard let result else { throw StorageError("the transaction ended without a result") }
            return result
        }
    }
}

/// The session the last commit of this connection left, so the next event of the same session
/// (an interactive run, `play`, an app's process) does not read and decode every stored flow and
/// value again. It is used only while nothing else wrote: another connection (another process)
/// changes `PRAGMA data_version`, and any other write of this connection (sync, rebuild, another
/// user's commit, which may change install-scoped rows) changes its total change count.
struct SessionCache {
    struct Stamp: Equatable {
        var dataVersion: Int
        var changes: Int
    }

    var key: SessionKey
    var scopes: Scopes
    var session: Session
    var stamp: Stamp

    func session(for key: SessionKey, scopes: Scopes, at stamp: Stamp) -> Session? {
        key == self.key && scopes == self.scopes && stamp == self.stamp ? session : nil
    }
}

extension SessionCache.Stamp {
    /// This connection's view now (read inside the transaction, so it is the transaction's).
    init(_ db: Database) throws {
        self.init(
            dataVersion: try Int.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? -1,
            changes: db.totalChangesCount)
    }
}
