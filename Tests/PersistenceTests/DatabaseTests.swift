import Foundation
import Persistence
import Synchronization
import Testing
import TourFixtures
import TourRuntime

@Suite("Database on disk and in memory")
struct DatabaseTests {
    /// Every schema migration, in order; a new one is appended, none is ever edited.
    static let migrations = [
        "v1-flows-journal-domain", "v2-catalog-versions-journal-facts", "v3-account-sync",
        "v4-journal-recorded-states",
        "v5-journal-catalog-fingerprint", "v6-domain-state-format", "v7-published-catalogs",
        "v8-catalog-pull-binary", "v9-experiments", "v10-journal-app-version", "v11-signed-publications",
        "v12-outbox-set-aside", "v13-installs-secrets-freshness", "v14-journal-consent-and-start-context",
    ]

    @Test(arguments: [true, false])
    func migrationsCreateTheSchemaOnce(onDisk: Bool) throws {
        let folder = try TemporaryFolder()
        if onDisk {
            // The folder must exist: a mistyped path is an error, not a new folder.
            #expect(throws: StorageError.self) {
                try OnboardingDatabase.open(path: folder.path("a/b/onboarding.sqlite"))
            }
            #expect(!FileManager.default.fileExists(atPath: folder.path("a")))
            try FileManager.default.createDirectory(
                atPath: folder.path("a/b"), withIntermediateDirectories: true)
        }
        let open = {
            onDisk ? try OnboardingDatabase.open(path: folder.path("a/b/onboarding.sqlite")) : try .inMemory()
        }
        let database = try open()
        #expect(try database.appliedMigrations() == Self.migrations)
        if onDisk {
            // A new file is created by its first write, not by opening or reading it.
            #expect(!FileManager.default.fileExists(atPath: folder.path("a/b/onboarding.sqlite")))
            try database.commit(SessionKey(app: "test", user: "ann"), scopes: [:]) { session in
                session.domain["x"] = 1
                return ((), nil)
            }
            #expect(database.createdFile)
            #expect(FileManager.default.fileExists(atPath: folder.path("a/b/onboarding.sqlite")))
            #expect(
                try OnboardingDatabase.open(path: folder.path("a/b/onboarding.sqlite")).appliedMigrations()
                    == Self.migrations)
        }
    }

    @Test func aDatabaseFromANewerSchemaIsRefusedAndLeftUnchanged() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("newer.sqlite")
        try RawSQL(path).execute(
            """
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('v1-flows-journal-domain'), ('v9-from-the-future');
            """)
        let before = try #require(FileManager.default.contents(atPath: path))
        let error = #expect(throws: StorageError.self) { try OnboardingDatabase.open(path: path) }
        #expect(error?.description.contains("newer version") == true)
        #expect(error?.description.contains("v9-from-the-future") == true)
        #expect(FileManager.default.contents(atPath: path) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    /// A refused or read-only command on a path that does not exist leaves nothing behind; the first
    /// write creates the file (and, for the CLI's default location, its folder).
    @Test func onlyAWriteCreatesANewFile() throws {
        let folder = try TemporaryFolder()
        let key = SessionKey(app: "test", user: "ann")
        let database = try OnboardingDatabase.open(path: folder.path("made/new.sqlite"), createsFolder: true)
        #expect(try database.session(key, scopes: [:]) == Session())
        #expect(try database.journal().isEmpty)
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try database.commit(key, scopes: [:]) { session -> (Void, JournalAppend?) in
                session.domain["x"] = 1
                throw Refused()
            }
        }
        try database.commit(key, scopes: [:]) { _ in ((), nil) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
        #expect(!database.exists && !database.createdFile)
        try database.commit(key, scopes: [:]) { session in
            session.domain["x"] = 1
            return ((), nil)
        }
        #expect(database.exists && database.createdFile)
        #expect(FileManager.default.fileExists(atPath: folder.path("made/new.sqlite")))
        #expect(try database.session(key, scopes: [:]).domain["x"] == 1)
        #expect(
            try OnboardingDatabase.open(path: folder.path("made/new.sqlite")).session(key, scopes: [:])
                .domain["x"] == 1)
    }

    /// Several processes (here connections on threads) that find the file missing at the same
    /// moment all open it, and exactly one says it created the database: the one that applied
    /// the first migration, not every one that looked for the file before connecting.
    @Test func ofSeveralOpeningOneMissingFileAtOnceExactlyOneCreatedIt() throws {
        for round in 0..<20 {
            let folder = try TemporaryFolder()
            let path = folder.path("race-\(round).sqlite")
            let databases = try (0..<4).map { _ in try OnboardingDatabase.open(path: path) }
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            let failures = Mutex<[String]>([])
            for database in databases {
                DispatchQueue.global().async(group: group) {
                    start.wait()
                    do { try database.createIfMissing() } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
            for _ in databases { start.signal() }
            group.wait()
            #expect(failures.withLock { $0 }.isEmpty)
            let creators = databases.filter(\.createdFile).count
            #expect(creators == 1, "round \(round): \(creators) connections said they created the file")
        }
    }

    /// The moment inside that race made still: another process's open has left an empty file and
    /// not migrated it yet. Whoever migrates it created the database; a later opener did not.
    @Test func anEmptyFileLeftByAnotherOpenerIsCreatedByWhoeverMigratesIt() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let first = try OnboardingDatabase.open(path: path)
        try first.createIfMissing()
        #expect(first.createdFile)
        let second = try OnboardingDatabase.open(path: path)
        try second.createIfMissing()
        #expect(!second.createdFile)
    }

    /// An install-scoped key a release before 0.4 kept per user is still read, and its next write
    /// moves it under the install (leaving no per-user copy behind).
    @Test func installScopedStateKeptPerUserByAnEarlierReleaseIsReadThenMoved() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("legacy.sqlite")
        let perUser = Scopes(flows: [:], state: StateScopes(.user))
        let perInstall = Scopes(flows: [:], state: StateScopes(.install))
        let alice = SessionKey(app: "test", user: "alice")
        let database = try OnboardingDatabase.open(path: path)
        try database.commit(alice, scopes: perUser) { session in
            session.domain["bank"] = 60
            return ((), nil)
        }
        #expect(try database.session(alice, scopes: perInstall).domain["bank"] == 60)
        try database.commit(alice, scopes: perInstall) { session in
            session.domain["bank"] = 45
            return ((), nil)
        }
        let rows = try RawSQL(path).rows("SELECT subject, key FROM domain_state").map {
            "\($0[0]!)/\($0[1]!)"
        }
        #expect(rows == ["@install/bank"])
        #expect(
            try database.session(SessionKey(app: "test", user: "bob"), scopes: perInstall).domain["bank"]
                == 45)
    }

    /// A later release adds keys to the stored record; its rows, in a real file, load in this build
    /// with the run intact, and the queried columns (status, step, catalog version) match.
    @Test func aRowWithKeysFromALaterReleaseLoads() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("later.sqlite")
        let key = SessionKey(app: "test", user: "alice")
        let scopes = Scopes(flows: [:], state: StateScopes(.user))
        let run = FlowRun(
            plan: ["one", "two"], position: 1, fields: ["name": "Ada"], activation: 1, catalogVersion: 2)
        let database = try OnboardingDatabase.open(path: path)
        try database.commit(key, scopes: scopes) { session in
            session.tour[flow: "form"] = .active(run)
            return ((), nil)
        }
        let raw = try RawSQL(path)
        try raw.execute(
            """
            UPDATE flow_state SET state_json = json_set(state_json, '$.syncedAt', 1767700000, \
            '$.run.hintsShown', 3)
            """)
        let columns = try raw.rows("SELECT status, step, catalog_version FROM flow_state").first
        #expect(columns == ["active", "two", "2"])
        #expect(
            try OnboardingDatabase.open(path: path).session(key, scopes: scopes).tour[flow: "form"]
                == .active(run))
    }

    @Test func anEmptyPathOrAFolderIsRefusedWithWhatToDo() throws {
        let folder = try TemporaryFolder()
        let empty = #expect(throws: StorageError.self) { try OnboardingDatabase.open(path: "") }
        #expect(empty?.description.contains("give a file name") == true)
        let directory = #expect(throws: StorageError.self) {
            try OnboardingDatabase.open(path: folder.url.path)
        }
        #expect(directory?.description.contains("it is a folder") == true)
    }

    /// An image of a database (a file in WAL mode here) loads into a private in-memory copy that
    /// holds the same rows and changes without touching the original; a missing file's image is an
    /// empty database.
    @Test func anImageIsACopyToChangeApart() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("original.sqlite")
        let key = SessionKey(app: "test", user: "ann")
        let original = try OnboardingDatabase.open(path: path)
        #expect(try original.image().isEmpty)
        #expect(try OnboardingDatabase.inMemory(image: []).session(key, scopes: [:]) == Session())
        try original.commit(key, scopes: [:]) { session in
            session.domain["bank"] = 60
            return ((), nil)
        }
        let image = try original.image()
        let copy = try OnboardingDatabase.inMemory(image: image)
        #expect(try copy.session(key, scopes: [:]) == original.session(key, scopes: [:]))
        #expect(try copy.appliedMigrations() == Self.migrations)
        try copy.commit(key, scopes: [:]) { session in
            session.domain["bank"] = 45
            return ((), nil)
        }
        #expect(try copy.session(key, scopes: [:]).domain["bank"] == 45)
        #expect(try original.session(key, scopes: [:]).domain["bank"] == 60)
        #expect(try original.image() == image)
        #expect(try copy.image() != image)
    }

    /// Files of 0.5.0 migrated by this build share a schema version but hold the tables of later
    /// migrations at other pages. One in-memory database loading their images in turn reads and
    /// writes each image's own rows (statements prepared for one image are not reused on the next).
    @Test func imagesOfOneSchemaVersionButAnotherLayoutEachReadTheirOwnRows() throws {
        let folder = try TemporaryFolder()
        let releases = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CLITests/Releases/0.5.0")
        let keys = ["carrierwave", "growth", "lockedin"].map { SessionKey(app: $0, user: "ana") }
        let start = Date(timeIntervalSince1970: 1_767_603_600)
        var images: [[UInt8]] = []
        var expected: [[[OutboxRow]]] = []
        for name in ["midflow", "finished", "skipped"] {
            let path = folder.path("\(name).sqlite")
            try FileManager.default.copyItem(
                atPath: releases.appendingPathComponent("\(name).sqlite").path, toPath: path)
            let file = try OnboardingDatabase.open(path: path)
            for key in keys { try file.enroll(key, records: [:], now: start) }
            expected.append(try keys.map { try file.outbox($0, limit: 1_000) })
            images.append(try file.image())
        }
        #expect(Set(images.map(\.count)).count > 1, "the fixtures should differ in layout")
        let memory = try OnboardingDatabase.inMemory()
        for index in [0, 1, 2, 0, 2, 1] {
            try memory.load(image: images[index])
            let outboxes = try keys.map { try memory.outbox($0, limit: 1_000) }
            #expect(
                outboxes.map { $0.map(\.journalID) } == expected[index].map { $0.map(\.journalID) },
                "image \(index)")
            #expect(outboxes == expected[index], "image \(index)")
            // A write lands in this image's own tables.
            try memory.acknowledge(keys[0], through: expected[index][0].last?.journalID ?? 0, at: start)
            #expect(try memory.outbox(keys[0], limit: 1_000).isEmpty, "image \(index)")
            #expect(try memory.outbox(keys[1], limit: 1_000) == expected[index][1], "image \(index)")
        }
    }

    @Test func aFileIsOpenedInWALMode() throws {
        let folder = try TemporaryFolder()
        try OnboardingDatabase.open(path: folder.path("wal.sqlite")).commit(
            SessionKey(app: "test", user: "ann"), scopes: [:]
        ) { session in
            session.domain["x"] = 1
            return ((), nil)
        }
        #expect(try RawSQL(folder.path("wal.sqlite")).rows("PRAGMA journal_mode") == [["wal"]])
    }

    @Test func theJournalIsAppendOnly() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("journal.sqlite")
        let session = TourSession(
            product: fixtureProduct(), user: "ann", database: try .open(path: path),
            time: .virtual(start: Fixtures.t0))
        try await session.send(.appLaunched(version: "2.5"))
        let raw = try RawSQL(path)
        let update = #expect(throws: RawSQL.Failure.self) {
            try raw.execute("UPDATE journal SET outcome = 'x'")
        }
        #expect(update?.description.contains("append-only") == true)
        let delete = #expect(throws: RawSQL.Failure.self) { try raw.execute("DELETE FROM journal") }
        #expect(delete?.description.contains("append-only") == true)
        let states = #expect(throws: RawSQL.Failure.self) {
            try raw.execute("UPDATE journal SET states_json = '{}'")
        }
        #expect(states?.description.contains("append-only") == true)
    }

    @Test func aThrowingCommitWritesNothing() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("atomic.sqlite")
        let database = try OnboardingDatabase.open(path: path)
        let key = SessionKey(app: "test", user: "ann")
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try database.commit(key, scopes: [:]) { session -> (Void, JournalAppend?) in
                session.domain["bank"] = 60
                session.tour.flows["form"] = .record(status: .completed, version: nil)
                throw Boom()
            }
        }
        let session = try database.session(key, scopes: [:])
        #expect(session == Session())
        #expect(try database.journal().isEmpty)
    }

    @Test func flowStateJournalAndDomainStateLandInOneTransaction() async throws {
        let database = try OnboardingDatabase.inMemory()
        let session = TourSession(
            product: fixtureProduct(), user: "ann", database: database,
            time: .virtual(start: Fixtures.t0))
        try await session.send(.appLaunched(version: "2.5"))
        for action in ["next"] { try await session.send(.actionPerformed(action, parameters: [:])) }
        try await session.send(.actionPerformed("choose", parameters: ["apps": "A"]))
        try await session.send(.actionPerformed("next", parameters: [:]))
        try await session.send(.actionPerformed("next", parameters: [:]))
        try await session.send(.actionPerformed("grantScreenTime", parameters: [:]))
        try await session.send(.actionPerformed("next", parameters: [:]))
        let journalBefore = try database.journal().count
        try await session.send(.actionPerformed("go", parameters: [:]))
        let stored = try database.session(
            SessionKey(app: "test", user: "ann"), scopes: fixtureProduct().scopes)
        #expect(stored.tour.flows["form"]?.status == .completed)
        #expect(stored.domain["bank"] == 60)
        let journal = try database.journal()
        #expect(journal.count == journalBefore + 1)
        #expect(journal.last?.event == "go")
        #expect(journal.last?.effectsJSON.contains("\"activate\"") == true)
        #expect(journal.last?.outcome.contains("form completed") == true)
    }

    @Test func oneFileHoldsSeveralProductsAndUsers() async throws {
        let database = try OnboardingDatabase.inMemory()
        let ann = TourSession(
            product: fixtureProduct(app: "one"), user: "ann", database: database,
            time: .virtual(start: Fixtures.t0))
        let bob = TourSession(
            product: fixtureProduct(app: "one"), user: "bob", database: database,
            time: .virtual(start: Fixtures.t0))
        let other = TourSession(
            product: fixtureProduct(app: "two"), user: "ann", database: database,
            time: .virtual(start: Fixtures.t0))
        try await ann.send(.appLaunched(version: "2.5"))
        try await ann.send(.actionPerformed("next", parameters: [:]))
        // The form is install-scoped: bob sees ann's progress on the same install; the tour is per user.
        #expect(try await bob.snapshot().card?.step == "pick")
        #expect(try await other.snapshot().card == nil)
        let scopes = fixtureProduct().scopes
        #expect(scopes["tour"] == .user)
        let flows = try database.storedFlows(app: "one")
        #expect(Set(flows.keys) == ["@install"])
        #expect(try database.storedFlows(app: "two").isEmpty)
    }

    @Test func userScopedFlowsAreKeptPerUser() throws {
        let database = try OnboardingDatabase.inMemory()
        var state = TourState()
        state.flows["tour"] = .record(status: .skipped, version: nil)
        let scopes = fixtureProduct().scopes
        try database.commit(SessionKey(app: "one", user: "ann"), scopes: scopes) {
            session -> (Void, JournalAppend?) in
            session.tour = state
            return ((), nil)
        }
        #expect(
            try database.session(SessionKey(app: "one", user: "ann"), scopes: scopes).tour.flows["tour"]?
                .status == .skipped)
        #expect(
            try database.session(SessionKey(app: "one", user: "bob"), scopes: scopes).tour.flows["tour"]
                == nil)
        #expect(Set(try database.storedFlows(app: "one").keys) == ["ann"])
    }
}
