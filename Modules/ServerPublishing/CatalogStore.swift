import AccountSync
import CatalogDocuments
import Crypto
import Foundation
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import TourCodec
import TourCore

/// An app's catalog documents on the server (Docs/Publishing.md): the ones compiled into its
/// binaries (registered, so that a publication is checked against their vocabulary and history)
/// and the ones published, each with its rollout. Publishing runs the checks a build runs
/// (``PublicationCheck``) and changes nothing when any fails.
public struct CatalogStore: PostgresStore {
    package let writes: WritableDatabase
    package let reads: ReadOnlyDatabase
    let logger: Logger

    public init(writes: WritableDatabase, reads: ReadOnlyDatabase, logger: Logger) {
        self.writes = writes
        self.reads = reads
        self.logger = logger
    }

    /// One stored document: where it came from and who gets it.
    public struct Entry: Equatable, Sendable {
        public enum Source: String, Sendable { case compiled, published }

        public var app: String
        public var version: Int
        public var source: Source
        public var fingerprint: String
        /// The percentage of subjects a publication reaches (0 for a compiled document).
        public var rollout: Int
        public var recordedAt: Double
        public var recordedBy: String
        /// When a publication was withdrawn (rolled back); nil while it is live.
        public var withdrawnAt: Double?
        public var document: String
        /// The publisher's signatures over the document (none for a compiled one).
        public var signatures: [CatalogSignature] = []

        /// What devices hash a subject with to decide whether the rollout includes it.
        public var salt: String { Rollout.catalogSalt(app: app, version: version) }
    }

    /// What a publish or register did.
    public enum Outcome: Equatable, Sendable {
        case stored(Entry)
        /// Nothing changed; every problem, each a sentence.
        case refused([String])
    }

    // MARK: - Reading

    /// Every document of the app, oldest version first.
    public func all(app: String) async throws -> [Entry] {
        try await reads.read { connection, logger in
            try await Self.all(app: app, on: connection, logger: logger)
        }
    }

    /// The live publications devices choose from: not withdrawn, reaching someone, newest first,
    /// at most ``maximumLive`` (a bound on what a device's pull costs).
    public func live(app: String) async throws -> [Entry] {
        Array(
            try await all(app: app).filter {
                $0.source == .published && $0.withdrawnAt == nil && $0.rollout > 0
            }
            .sorted { $0.version > $1.version }.prefix(Self.maximumLive))
    }

    /// The newest live publications served (devices keep as many).
    public static let maximumLive = 8

    static func all(app: String, on connection: PostgresConnection, logger: Logger) async throws -> [Entry] {
        let rows = try await connection.query(
            """
            SELECT version, source, fingerprint, rollout, recorded_at, recorded_by, withdrawn_at, document,
                signatures
            FROM catalogs WHERE app = \(app) ORDER BY version
            """, logger: logger)
        var entries: [Entry] = []
        for try await (version, source, fingerprint, rollout, at, by, withdrawn, document, signatures)
            in rows.decode(
                (Int64, String, String, Int32, Double, String, Double?, String, String).self)
        {
            entries.append(
                Entry(
                    app: app, version: Int(version), source: Entry.Source(rawValue: source) ?? .published,
                    fingerprint: fingerprint, rollout: Int(rollout), recordedAt: at, recordedBy: by,
                    withdrawnAt: withdrawn,
                    document: document,
                    signatures: (try? TourValue(jsonText: signatures).listValue?.map(
                        CatalogSignature.init(tourValue:))) ?? []))
        }
        return entries
    }

    /// The stored documents as a history (`VERSION.json` and their text), those below `version`
    /// when one is given.
    static func recorded(_ entries: [Entry], before version: Int?) -> [RecordedCatalog] {
        entries.filter { entry in version.map { entry.version < $0 } ?? true }.map {
            RecordedCatalog(file: "\($0.version).json", text: $0.document)
        }
    }
}
