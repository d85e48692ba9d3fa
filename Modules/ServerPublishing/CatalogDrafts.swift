import Foundation
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import TourCodec

/// The studio's drafts: a catalog document being edited in the dashboard before it is
/// published. Every save is a new revision (never an update), with its author and time, so a
/// draft's history is its rows; each save is one audit row, in the same transaction.
///
/// A save names the revision it was made from: when someone saved since, it is refused (nothing is
/// written) and the page shows the newer revision, so two editors never overwrite each other.
public struct CatalogDrafts: PostgresStore {
    let writes: WritableDatabase
    let reads: ReadOnlyDatabase
    let logger: Logger

    public init(writes: WritableDatabase, reads: ReadOnlyDatabase, logger: Logger) {
        self.writes = writes
        self.reads = reads
        self.logger = logger
    }

    /// One saved revision of a draft.
    public struct Revision: Equatable, Sendable {
        public var app: String
        public var draft: Int
        public var revision: Int
        /// The canonical document text.
        public var document: String
        /// The version the draft will publish as.
        public var version: Int
        /// The version the draft was started from.
        public var basedOn: Int
        public var author: String
        public var savedAt: Double
        /// What the save changed, in words ("title of tutorial.welcome in en, pt-BR").
        public var note: String
    }

    /// At most this many revisions a draft keeps (a bound on what one draft can store): the
    /// studio refuses a save past it and says to start a new draft.
    public static let maximumRevisions = 500

    /// v18.
    package static let v18 = [
        """
        CREATE TABLE catalog_drafts (
            app TEXT NOT NULL,
            draft BIGINT NOT NULL,
            revision BIGINT NOT NULL,
            version BIGINT NOT NULL,
            document TEXT NOT NULL,
            based_on BIGINT NOT NULL,
            author TEXT NOT NULL,
            saved_at DOUBLE PRECISION NOT NULL,
            note TEXT NOT NULL,
            PRIMARY KEY (app, draft, revision)
        )
        """
    ]

    /// v25: a draft's name, one per draft (not per revision): a rename is no revision.
    package static let v25 = [
        """
        CREATE TABLE catalog_draft_names (
            app TEXT NOT NULL,
            draft BIGINT NOT NULL,
            name TEXT NOT NULL,
            PRIMARY KEY (app, draft)
        )
        """
    ]

    /// The longest name a draft takes.
    public static let maximumNameLength = 80

    static let columns = "app, draft, revision, version, document, based_on, author, saved_at, note"

    /// At most this many drafts an app keeps (a bound on what editors can store; each revision
    /// is a whole document of at most ``CatalogStore/maximumDocumentBytes``).
    public static let maximumDrafts = 50

    static func revisions(_ rows: PostgresRowSequence) async throws -> [Revision] {
        var revisions: [Revision] = []
        for try await (app, draft, revision, version, document, basedOn, author, savedAt, note)
            in rows.decode(
                (String, Int64, Int64, Int64, String, Int64, String, Double, String).self)
        {
            revisions.append(
                Revision(
                    app: app, draft: Int(draft), revision: Int(revision), document: document,
                    version: Int(version),
                    basedOn: Int(basedOn), author: author, savedAt: savedAt, note: note))
        }
        return revisions
    }

    /// Each draft of `app` at its newest revision, newest draft first, without their documents.
    public func list(app: String) async throws -> [Revision] {
        try await reads.read { connection, logger in
            try await Self.revisions(
                connection.query(
                    """
                    SELECT DISTINCT ON (draft) app, draft, revision, version, '', based_on, author,
                        saved_at, note
                    FROM catalog_drafts WHERE app = \(app) ORDER BY draft DESC, revision DESC
                    """, logger: logger))
        }
    }

    /// A draft's newest revision, or nil.
    public func latest(app: String, draft: Int) async throws -> Revision? {
        try await reads.read { connection, logger in
            try await Self.revisions(
                connection.query(
                    """
                    SELECT app, draft, revision, version, document, based_on, author, saved_at, note
                        FROM catalog_drafts
                    WHERE app = \(app) AND draft = \(Int64(draft)) ORDER BY revision DESC LIMIT 1
                    """, logger: logger)
            ).first
        }
    }

    /// Every revision of a draft, newest first, without their documents.
    public func history(app: String, draft: Int) async throws -> [Revision] {
        try await reads.read { connection, logger in
            try await Self.revisions(
                connection.query(
                    """
                    SELECT app, draft, revision, version, '', based_on, author, saved_at, note
                        FROM catalog_drafts
                    WHERE app = \(app) AND draft = \(Int64(draft)) ORDER BY revision DESC
                    """, logger: logger))
        }
    }

    /// Holds one draft's lock to the transaction's end: its saves, renames and deletion one at a time.
    static func lockDraft(app: String, draft: Int, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtext('catalog_drafts/' || \(app) || '/' || \(String(draft))))",
            logger: logger)
    }

    /// The names of `app`'s drafts that have one.
    public func names(app: String) async throws -> [Int: String] {
        try await reads.read { connection, logger in
            var names: [Int: String] = [:]
            for try await (draft, name) in try await connection.query(
                "SELECT draft, name FROM catalog_draft_names WHERE app = \(app)", logger: logger
            ).decode((Int64, String).self) { names[Int(draft)] = name }
            return names
        }
    }

    /// Names a draft (an empty name takes the name away); audited. False when there is no such draft.
    public func rename(app: String, draft: Int, to name: String, by actor: Actor, at time: Double)
        async throws -> Bool
    {
        try await writes.write { connection, logger in
            try await Self.lockDraft(app: app, draft: draft, on: connection, logger: logger)
            var exists = false
            for try await _ in try await connection.query(
                "SELECT 1 FROM catalog_drafts WHERE app = \(app) AND draft = \(Int64(draft)) LIMIT 1",
                logger: logger
            ).decode(Int32.self) { exists = true }
            guard exists else { return false }
            if name.isEmpty {
                try await connection.query(
                    "DELETE FROM catalog_draft_names WHERE app = \(app) AND draft = \(Int64(draft))",
                    logger: logger)
            } else {
                try await connection.query(
                    """
                    INSERT INTO catalog_draft_names (app, draft, name) VALUES (\(app), \(Int64(draft)),
                        \(name))
                    ON CONFLICT (app, draft) DO UPDATE SET name = EXCLUDED.name
                    """, logger: logger)
            }
            try await AuditLog.append(
                .init(
                    at: time, actor: actor, app: app, action: "catalog.draft-renamed",
                    target: "draft \(draft)",
                    details: ["name": .string(name)]),
                on: connection, logger: logger)
            return true
        }
    }

    /// One revision of a draft, with its document, or nil.
    public func revision(app: String, draft: Int, revision: Int) async throws -> Revision? {
        try await reads.read { connection, logger in
            try await Self.revisions(
                connection.query(
                    """
                    SELECT app, draft, revision, version, document, based_on, author, saved_at, note
                        FROM catalog_drafts
                    WHERE app = \(app) AND draft = \(Int64(draft)) AND revision = \(Int64(revision))
                    """, logger: logger)
            ).first
        }
    }

    /// What a deletion came to.
    public enum Deleted: Equatable, Sendable {
        case deleted(revisions: Int)
        /// Someone saved since `after`: nothing was deleted.
        case stale(newest: Int)
        case noSuchDraft
    }

    /// Deletes a draft with every revision, if `after` is still its newest revision (the page the
    /// person confirmed on showed all of it); audited. Its number is not given to another draft.
    public func delete(app: String, draft: Int, after: Int, by actor: Actor, at time: Double) async throws
        -> Deleted
    {
        try await writes.write { connection, logger in
            // The same lock as a save: a save and a deletion of one draft one after the other.
            try await Self.lockDraft(app: app, draft: draft, on: connection, logger: logger)
            var newest: Int?
            for try await revision in try await connection.query(
                "SELECT max(revision) FROM catalog_drafts WHERE app = \(app) AND draft = \(Int64(draft))",
                logger: logger
            ).decode(Int64?.self) { newest = revision.map(Int.init) }
            guard let newest else { return .noSuchDraft }
            guard newest == after else { return .stale(newest: newest) }
            try await connection.query(
                "DELETE FROM catalog_drafts WHERE app = \(app) AND draft = \(Int64(draft))", logger: logger)
            try await connection.query(
                "DELETE FROM catalog_draft_names WHERE app = \(app) AND draft = \(Int64(draft))",
                logger: logger)
            try await AuditLog.append(
                .init(
                    at: time, actor: actor, app: app, action: "catalog.draft-deleted",
                    target: "draft \(draft)",
                    details: ["revisions": .int(newest)]),
                on: connection, logger: logger)
            return .deleted(revisions: newest)
        }
    }

    /// Starts a draft from `document` (a stored version's canonical text, its version already
    /// raised): revision 1, audited.
    public func create(
        app: String, document: String, version: Int, basedOn: Int, by actor: Actor, at time: Double
    ) async throws -> Revision? {
        return try await writes.write { connection, logger in
            // One draft number at a time per app (the audit lock would serialise them anyway).
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext('catalog_drafts' || \(app)))", logger: logger)
            var (draft, drafts) = (1, 0)
            // A deleted draft's number is never given again: the audit trail names drafts by it.
            for try await (newest, count) in try await connection.query(
                """
                SELECT greatest(
                    coalesce(max(draft), 0),
                    (SELECT coalesce(max(substr(target, 7)::bigint), 0) FROM audit_log
                     WHERE app = \(app) AND action = 'catalog.draft-deleted')) + 1,
                    count(DISTINCT draft)
                FROM catalog_drafts WHERE app = \(app)
                """, logger: logger
            ).decode((Int64, Int64).self) { (draft, drafts) = (Int(newest), Int(count)) }
            guard drafts < Self.maximumDrafts else { return nil }
            let note = "started from version \(basedOn)"
            try await connection.query(
                """
                INSERT INTO catalog_drafts (\(unescaped: Self.columns))
                VALUES (\(app), \(Int64(draft)), 1, \(Int64(version)), \(document), \(Int64(basedOn)),
                    \(actor.name), \(time), \(note))
                """, logger: logger)
            try await AuditLog.append(
                .init(
                    at: time, actor: actor, app: app, action: "catalog.draft-started",
                    target: "draft \(draft)",
                    details: ["basedOn": .int(basedOn)]),
                on: connection, logger: logger)
            return Revision(
                app: app, draft: draft, revision: 1, document: document, version: version, basedOn: basedOn,
                author: actor.name,
                savedAt: time, note: note)
        }
    }

    /// What a save came to.
    public enum Saved: Equatable, Sendable {
        case saved(Revision)
        /// Someone saved since `after`: nothing was written.
        case stale(newest: Int)
        case noSuchDraft
        case full
        /// The document would be larger than a catalog document may be.
        case tooLarge(String)
    }

    /// Saves `document` as the revision after `after`, if that is still the newest; audited.
    public func save(
        app: String, draft: Int, after: Int, document: String, note: String, by actor: Actor, at time: Double
    ) async throws -> Saved {
        return try await writes.write { connection, logger in
            // Saves of one draft one at a time: a second waits here, then finds the first's revision
            // and is refused as stale (a row lock on the newest revision would not: the waiter would
            // read the same row again and collide on its key).
            try await Self.lockDraft(app: app, draft: draft, on: connection, logger: logger)
            var newest: (revision: Int, version: Int, basedOn: Int)?
            for try await (revision, version, basedOn) in try await connection.query(
                """
                SELECT revision, version, based_on FROM catalog_drafts WHERE app = \(app)
                    AND draft = \(Int64(draft))
                ORDER BY revision DESC LIMIT 1
                """, logger: logger
            ).decode((Int64, Int64, Int64).self) { newest = (Int(revision), Int(version), Int(basedOn)) }
            guard let newest else { return .noSuchDraft }
            guard newest.revision == after else { return .stale(newest: newest.revision) }
            guard after < Self.maximumRevisions else { return .full }
            if let tooLarge = CatalogStore.sizeProblem(document) { return .tooLarge(tooLarge) }
            let revision = after + 1
            try await connection.query(
                """
                INSERT INTO catalog_drafts (\(unescaped: Self.columns))
                VALUES (\(app), \(Int64(draft)), \(Int64(revision)), \(Int64(newest.version)), \(document),
                    \(Int64(newest.basedOn)), \(actor.name), \(time), \(note))
                """, logger: logger)
            try await AuditLog.append(
                .init(
                    at: time, actor: actor, app: app, action: "catalog.draft-saved", target: "draft \(draft)",
                    details: ["revision": .int(revision), "change": .string(note)]),
                on: connection, logger: logger)
            return .saved(
                Revision(
                    app: app, draft: draft, revision: revision, document: document, version: newest.version,
                    basedOn: newest.basedOn, author: actor.name, savedAt: time, note: note))
        }
    }
}
