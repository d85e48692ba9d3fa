#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TourCore

/// The last pull of the app's publications: its entity tag, when, and what was refused.
public struct CatalogPullRecord: Equatable, Sendable {
    public var entityTag: String?
    /// The fingerprint of the compiled catalog of the binary that pulled.
    public var binary: String?
    public var pulledAt: Date
    /// Why documents of the last pull were not kept (one line each), if any were not.
    public var refused: String?
}

extension OnboardingDatabase {
    /// The app's stored publications, newest version first.
    public func publications(app: String) throws -> [PublishedCatalog] {
        try read { db in
            guard try db.tableExists("published_catalog") else { return [] }
            return try db.all(
                "SELECT version, fingerprint, rollout, salt, document FROM published_catalog WHERE app = ? ORDER BY version DESC",
                [.text(app)]
            ) { row in
                PublishedCatalog(
                    version: row.int(0) ?? 0, fingerprint: row.text(1) ?? "", rollout: row.int(2) ?? 0, salt: row.text(3) ?? "",
                    document: row.text(4) ?? "")
            }
        }
    }

    /// The app's last pull, if there was one.
    public func catalogPull(app: String) throws -> CatalogPullRecord? {
        try read { db in
            guard try db.tableExists("catalog_pull") else { return nil }
            return try db.first(
                "SELECT entity_tag, pulled_at, refused, binary FROM catalog_pull WHERE app = ?", [.text(app)]
            ) { row in
                CatalogPullRecord(
                    entityTag: row.text(0), binary: row.text(3), pulledAt: Date(timeIntervalSince1970: row.double(1) ?? 0),
                    refused: row.text(2))
            } ?? nil
        }
    }

    /// Replaces the app's publications with `kept` (what the pull brought and verified) in one
    /// transaction, with the pull's entity tag; `refused` says what was not kept.
    public func storePull(
        app: String, kept: [PublishedCatalog], entityTag: String?, binary: String?, refused: String?, at time: Date
    ) throws {
        try write { db in
            try db.run("DELETE FROM published_catalog WHERE app = ?", [.text(app)])
            for publication in kept {
                try db.run(
                    "INSERT INTO published_catalog (app, version, fingerprint, rollout, salt, document) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        .text(app), .integer(Int64(publication.version)), .text(publication.fingerprint),
                        .integer(Int64(publication.rollout)), .text(publication.salt), .text(publication.document),
                    ])
            }
            try Self.notePull(db, app: app, entityTag: entityTag, refused: refused, at: time)
            try db.run("UPDATE catalog_pull SET binary = ? WHERE app = ?", [SQLValue(binary), .text(app)])
        }
    }

    /// Whether `user` of `app` syncs with an account server from this file (is enrolled).
    public func syncsAccount(app: String, user: String) throws -> Bool {
        try read { db in
            guard try db.tableExists("sync_account") else { return false }
            return try db.first("SELECT 1 FROM sync_account WHERE app = ? AND user = ?", [.text(app), .text(user)]) { _ in true }
                ?? false
        }
    }

    /// Notes an unchanged pull (a 304): the publications stay.
    public func noteUnchangedPull(app: String, at time: Date) throws {
        try write { db in
            let tag = try db.first("SELECT entity_tag FROM catalog_pull WHERE app = ?", [.text(app)]) { $0.text(0) } ?? nil
            let refused = try db.first("SELECT refused FROM catalog_pull WHERE app = ?", [.text(app)]) { $0.text(0) } ?? nil
            try Self.notePull(db, app: app, entityTag: tag, refused: refused, at: time)
        }
    }

    private static func notePull(_ db: SQLiteConnection, app: String, entityTag: String?, refused: String?, at time: Date) throws {
        try db.run(
            """
            INSERT INTO catalog_pull (app, entity_tag, pulled_at, refused) VALUES (?, ?, ?, ?)
            ON CONFLICT (app) DO UPDATE SET entity_tag = excluded.entity_tag, pulled_at = excluded.pulled_at, refused = excluded.refused
            """, [.text(app), SQLValue(entityTag), .real(time.timeIntervalSince1970), SQLValue(refused)])
    }

    /// This file's install id (the subject of install-scoped rollouts): random, made on first use
    /// (which writes the file).
    public func installID() throws -> String {
        if let id = try read({ db in try db.first("SELECT id FROM sync_device", []) { $0.text(0) } ?? nil }) { return id }
        return try write { db in try Self.deviceID(db) }
    }
}
