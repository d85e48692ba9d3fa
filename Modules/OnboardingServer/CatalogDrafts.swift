import Foundation
import Logging
import PostgresNIO
import TourCodec

/// The studio's drafts (issue 46): a catalog document being edited in the dashboard before it is
/// published. Every save is a new revision (never an update), with its author and time, so a
/// draft's history is its rows; each save is one audit row, in the same transaction.
///
/// A save names the revision it was made from: when someone saved since, it is refused (nothing is
/// written) and the page shows the newer revision, so two editors never overwrite each other.
public struct CatalogDrafts: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// One saved revision of a draft.
    public struct Revision: Equatable, Sendable {
        public var app: String
        public var draft: Int
        public var revision: Int
        /// The canonical document text.
        public var document: String
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
    static let v18 = [
        """
        CREATE TABLE catalog_drafts (
            app TEXT NOT NULL,
            draft BIGINT NOT NULL,
            revision BIGINT NOT NULL,
            document TEXT NOT NULL,
            based_on BIGINT NOT NULL,
            author TEXT NOT NULL,
            saved_at DOUBLE PRECISION NOT NULL,
            note TEXT NOT NULL,
            PRIMARY KEY (app, draft, revision)
        )
        """,
    ]

    static let columns = "app, draft, revision, document, based_on, author, saved_at, note"

    static func revisions(_ rows: PostgresRowSequence) async throws -> [Revision] {
        var revisions: [Revision] = []
        for try await (app, draft, revision, document, basedOn, author, savedAt, note) in rows.decode(
            (String, Int64, Int64, String, Int64, String, Double, String).self)
        {
            revisions.append(
                Revision(
                    app: app, draft: Int(draft), revision: Int(revision), document: document, basedOn: Int(basedOn),
                    author: author, savedAt: savedAt, note: note))
        }
        return revisions
    }

    /// Each draft of `app` at its newest revision, newest draft first.
    public func list(app: String) async throws -> [Revision] {
        try await Self.revisions(
            client.query(
                """
                SELECT DISTINCT ON (draft) app, draft, revision, document, based_on, author, saved_at, note
                FROM catalog_drafts WHERE app = \(app) ORDER BY draft DESC, revision DESC
                """, logger: logger))
    }

    /// A draft's newest revision, or nil.
    public func latest(app: String, draft: Int) async throws -> Revision? {
        try await Self.revisions(
            client.query(
                """
                SELECT app, draft, revision, document, based_on, author, saved_at, note FROM catalog_drafts
                WHERE app = \(app) AND draft = \(Int64(draft)) ORDER BY revision DESC LIMIT 1
                """, logger: logger)
        ).first
    }

    /// Every revision of a draft, newest first, without their documents.
    public func history(app: String, draft: Int) async throws -> [Revision] {
        try await Self.revisions(
            client.query(
                """
                SELECT app, draft, revision, '', based_on, author, saved_at, note FROM catalog_drafts
                WHERE app = \(app) AND draft = \(Int64(draft)) ORDER BY revision DESC
                """, logger: logger))
    }

    /// Starts a draft from `document` (a stored version's canonical text, its version already
    /// raised): revision 1, audited.
    public func create(app: String, document: String, basedOn: Int, by actor: Actor, at time: Double) async throws -> Revision {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            // One draft number at a time per app (the audit lock would serialise them anyway).
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('catalog_drafts' || \(app)))", logger: logger)
            var draft = 1
            for try await newest in try await connection.query(
                "SELECT coalesce(max(draft), 0) + 1 FROM catalog_drafts WHERE app = \(app)", logger: logger
            ).decode(Int64.self) { draft = Int(newest) }
            let note = "started from version \(basedOn)"
            try await connection.query(
                """
                INSERT INTO catalog_drafts (\(unescaped: Self.columns))
                VALUES (\(app), \(Int64(draft)), 1, \(document), \(Int64(basedOn)), \(actor.name), \(time), \(note))
                """, logger: logger)
            try await AuditLog.append(
                .init(at: time, actor: actor, app: app, action: "catalog.draft-started", target: "draft \(draft)",
                      details: ["basedOn": .int(basedOn)]),
                on: connection, logger: logger)
            return Revision(
                app: app, draft: draft, revision: 1, document: document, basedOn: basedOn, author: actor.name, savedAt: time,
                note: note)
        }
    }

    /// What a save came to.
    public enum Saved: Equatable, Sendable {
        case saved(Revision)
        /// Someone saved since `after`: nothing was written.
        case stale(newest: Int)
        case noSuchDraft
        case full
    }

    /// Saves `document` as the revision after `after`, if that is still the newest; audited.
    public func save(
        app: String, draft: Int, after: Int, document: String, note: String, by actor: Actor, at time: Double
    ) async throws -> Saved {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            var newest: (revision: Int, basedOn: Int)?
            for try await (revision, basedOn) in try await connection.query(
                """
                SELECT revision, based_on FROM catalog_drafts WHERE app = \(app) AND draft = \(Int64(draft))
                ORDER BY revision DESC LIMIT 1 FOR UPDATE
                """, logger: logger
            ).decode((Int64, Int64).self) { newest = (Int(revision), Int(basedOn)) }
            guard let newest else { return .noSuchDraft }
            guard newest.revision == after else { return .stale(newest: newest.revision) }
            guard after < Self.maximumRevisions else { return .full }
            let revision = after + 1
            try await connection.query(
                """
                INSERT INTO catalog_drafts (\(unescaped: Self.columns))
                VALUES (\(app), \(Int64(draft)), \(Int64(revision)), \(document), \(Int64(newest.basedOn)), \(actor.name),
                    \(time), \(note))
                """, logger: logger)
            try await AuditLog.append(
                .init(at: time, actor: actor, app: app, action: "catalog.draft-saved", target: "draft \(draft)",
                      details: ["revision": .int(revision), "change": .string(note)]),
                on: connection, logger: logger)
            return .saved(
                Revision(
                    app: app, draft: draft, revision: revision, document: document, basedOn: newest.basedOn,
                    author: actor.name, savedAt: time, note: note))
        }
    }
}
