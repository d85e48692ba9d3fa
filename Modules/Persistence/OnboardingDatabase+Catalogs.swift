import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The last pull of the app's publications: its entity tag, when, and what was refused.
public struct CatalogPullRecord: Equatable, Sendable {
    public var entityTag: String?
    /// The fingerprint of the compiled catalog of the binary that pulled.
    public var binary: String?
    public var pulledAt: Date
    /// Until when the list needs no pull (the server's `Cache-Control: max-age` at the last pull).
    public var freshUntil: Date?
    /// Why documents of the last pull were not kept (one line each), if any were not.
    public var refused: String?
}

extension OnboardingDatabase {
    /// The app's stored publications, newest version first.
    public func publications(app: String) throws -> [PublishedCatalog] {
        try read { db in
            guard try db.tableExists("published_catalog") else { return [] }
            return try db.all(
                """
                SELECT version, fingerprint, rollout, salt, document, signatures_json FROM published_catalog
                    WHERE app = ? ORDER BY version DESC
                """,
                [.text(app)]
            ) { row in
                PublishedCatalog(
                    version: row.int(0) ?? 0, fingerprint: row.text(1) ?? "", rollout: row.int(2) ?? 0,
                    salt: row.text(3) ?? "",
                    document: row.text(4) ?? "",
                    signatures: (try? TourValue(jsonText: row.text(5) ?? "[]").listValue?.map(
                        CatalogSignature.init(tourValue:))) ?? [])
            }
        }
    }

    /// The retirements of the app's publication keys this device heard of: key id to time.
    public func publicationKeyRetirements(app: String) throws -> [String: Double] {
        try read { db in
            guard try db.tableExists("publication_key_retirement") else { return [:] }
            let rows = try db.all(
                "SELECT key_id, retired_at FROM publication_key_retirement WHERE app = ?", [.text(app)]
            ) {
                ($0.text(0) ?? "", $0.double(1) ?? 0)
            }
            return Dictionary(rows, uniquingKeysWith: min)
        }
    }

    /// One refusal of a published catalog, as the device journals it.
    public struct CatalogRefusal: Equatable, Sendable {
        public var version: Int
        public var fingerprint: String
        public var reason: String
        public var runsInstead: String
        public var time: Date

        public init(version: Int, fingerprint: String, reason: String, runsInstead: String, time: Date) {
            self.version = version
            self.fingerprint = fingerprint
            self.reason = reason
            self.runsInstead = runsInstead
            self.time = time
        }
    }

    /// Journals each refusal unless the last one journalled for the same document says the same;
    /// returns the ones journalled now (to be named once, on standard error).
    public func noteCatalogRefusals(app: String, _ refusals: [CatalogRefusal]) throws -> [CatalogRefusal] {
        guard !refusals.isEmpty else { return [] }
        return try write { db in
            var new: [CatalogRefusal] = []
            for refusal in refusals {
                let last =
                    try db.first(
                        """
                        SELECT reason FROM catalog_refusal WHERE app = ? AND version = ? AND fingerprint = ?
                            ORDER BY id DESC LIMIT 1
                        """,
                        [.text(app), .integer(Int64(refusal.version)), .text(refusal.fingerprint)]
                    ) { $0.text(0) } ?? nil
                guard last != refusal.reason else { continue }
                try db.run(
                    """
                    INSERT INTO catalog_refusal (time, app, version, fingerprint, reason, runs_instead)
                        VALUES (?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .real(refusal.time.timeIntervalSince1970), .text(app),
                        .integer(Int64(refusal.version)), .text(refusal.fingerprint),
                        .text(refusal.reason), .text(refusal.runsInstead),
                    ])
                new.append(refusal)
            }
            return new
        }
    }

    /// Every refusal journalled for the app, oldest first.
    public func catalogRefusals(app: String) throws -> [CatalogRefusal] {
        try read { db in
            guard try db.tableExists("catalog_refusal") else { return [] }
            return try db.all(
                """
                SELECT version, fingerprint, reason, runs_instead, time FROM catalog_refusal WHERE app = ?
                    ORDER BY id
                """,
                [.text(app)]
            ) { row in
                CatalogRefusal(
                    version: row.int(0) ?? 0, fingerprint: row.text(1) ?? "", reason: row.text(2) ?? "",
                    runsInstead: row.text(3) ?? "",
                    time: Date(timeIntervalSince1970: row.double(4) ?? 0))
            }
        }
    }

    /// The app's last pull, if there was one.
    public func catalogPull(app: String) throws -> CatalogPullRecord? {
        try read { db in
            guard try db.tableExists("catalog_pull") else { return nil }
            return try db.first(
                "SELECT entity_tag, pulled_at, refused, binary, fresh_until FROM catalog_pull WHERE app = ?",
                [.text(app)]
            ) { row in
                CatalogPullRecord(
                    entityTag: row.text(0), binary: row.text(3),
                    pulledAt: Date(timeIntervalSince1970: row.double(1) ?? 0),
                    freshUntil: row.double(4).map(Date.init(timeIntervalSince1970:)), refused: row.text(2))
            } ?? nil
        }
    }

    /// Replaces the app's publications with `kept` (what the pull brought and verified) in one
    /// transaction, with the pull's entity tag; `refused` says what was not kept.
    public func storePull(
        app: String, kept: [PublishedCatalog], entityTag: String?, binary: String?, refused: String?,
        at time: Date,
        freshUntil: Date? = nil, retirements: [String: Double] = [:]
    ) throws {
        try write { db in
            try db.run("DELETE FROM published_catalog WHERE app = ?", [.text(app)])
            for publication in kept {
                try db.run(
                    """
                    INSERT INTO published_catalog (app, version, fingerprint, rollout, salt, document,
                        signatures_json)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .text(app), .integer(Int64(publication.version)), .text(publication.fingerprint),
                        .integer(Int64(publication.rollout)), .text(publication.salt),
                        .text(publication.document),
                        .text((try? publication.signatures.tourValue.jsonText()) ?? "[]"),
                    ])
            }
            // A retirement once heard is kept, at its earliest time: a server cannot take it back.
            for (key, retired) in retirements {
                try db.run(
                    """
                    INSERT INTO publication_key_retirement (app, key_id, retired_at) VALUES (?, ?, ?)
                    ON CONFLICT (app, key_id) DO UPDATE SET retired_at = min(retired_at, excluded.retired_at)
                    """, [.text(app), .text(key), .real(retired)])
            }
            try Self.notePull(
                db, app: app, entityTag: entityTag, refused: refused, at: time, freshUntil: freshUntil)
            try db.run("UPDATE catalog_pull SET binary = ? WHERE app = ?", [SQLValue(binary), .text(app)])
        }
    }

    /// Whether `user` of `app` syncs with an account server from this file (is enrolled).
    public func syncsAccount(app: String, user: String) throws -> Bool {
        try read { db in
            guard try db.tableExists("sync_account") else { return false }
            // A user syncing as the install (an app without sign-in) draws by the install.
            return try db.first(
                "SELECT 1 FROM sync_account WHERE app = ? AND user = ? AND by_install = 0",
                [.text(app), .text(user)]
            ) { _ in true }
                ?? false
        }
    }

    /// Notes an unchanged pull (a 304): the publications stay.
    public func noteUnchangedPull(app: String, at time: Date, freshUntil: Date? = nil) throws {
        try write { db in
            let tag =
                try db.first("SELECT entity_tag FROM catalog_pull WHERE app = ?", [.text(app)]) { $0.text(0) }
                ?? nil
            let refused =
                try db.first("SELECT refused FROM catalog_pull WHERE app = ?", [.text(app)]) { $0.text(0) }
                ?? nil
            try Self.notePull(
                db, app: app, entityTag: tag, refused: refused, at: time, freshUntil: freshUntil)
        }
    }

    private static func notePull(
        _ db: SQLiteConnection, app: String, entityTag: String?, refused: String?, at time: Date,
        freshUntil: Date?
    ) throws {
        try db.run(
            """
            INSERT INTO catalog_pull (app, entity_tag, pulled_at, refused, fresh_until) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (app) DO UPDATE SET entity_tag = excluded.entity_tag, pulled_at = excluded.pulled_at,
                refused = excluded.refused, fresh_until = excluded.fresh_until
            """,
            [
                .text(app), SQLValue(entityTag), .real(time.timeIntervalSince1970), SQLValue(refused),
                freshUntil.map { .real($0.timeIntervalSince1970) } ?? .null,
            ])
    }

    // MARK: - Secrets

    /// A sealed secret of `app`, as text (sealed by the caller with a key kept outside this file).
    public func sealedSecret(app: String, name: String) throws -> String? {
        try read { db in
            try db.first(
                "SELECT sealed FROM secret_store WHERE app = ? AND name = ?", [.text(app), .text(name)]
            ) { $0.text(0) } ?? nil
        }
    }

    public func storeSealedSecret(app: String, name: String, sealed: String, at time: Date) throws {
        try write { db in
            try db.run(
                """
                INSERT INTO secret_store (app, name, sealed, stored_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (app, name) DO UPDATE SET sealed = excluded.sealed, stored_at = excluded.stored_at
                """, [.text(app), .text(name), .text(sealed), .real(time.timeIntervalSince1970)])
        }
    }

    public func removeSealedSecret(app: String, name: String) throws {
        try write { db in
            try db.run("DELETE FROM secret_store WHERE app = ? AND name = ?", [.text(app), .text(name)])
        }
    }

    /// This file's install id (the subject of install-scoped rollouts): random, made on first use
    /// (which writes the file).
    public func installID() throws -> String {
        if let id = try read({ db in try db.first("SELECT id FROM sync_device", []) { $0.text(0) } ?? nil }) {
            return id
        }
        return try write { db in try Self.deviceID(db) }
    }
}
