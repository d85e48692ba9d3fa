import Crypto
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import TourCodec

/// The control plane's audit trail (Docs/Security.md): one row per act, who, when, from where,
/// what. The table refuses UPDATE, DELETE and TRUNCATE (a trigger of migration `v9-control-plane`),
/// and each row's hash covers the one before it, so ``verify()`` finds a row that was changed,
/// removed or slipped in by someone who went around the trigger (the table's owner).
public struct AuditLog: PostgresStore {
    let writes: WritableDatabase
    let reads: ReadOnlyDatabase
    let logger: Logger

    public init(writes: WritableDatabase, reads: ReadOnlyDatabase, logger: Logger) {
        self.writes = writes
        self.reads = reads
        self.logger = logger
    }

    /// One act.
    public struct Entry: Equatable, Sendable {
        public var id: Int64 = 0
        public var at: Double
        public var actor: String
        public var source: String
        /// The app concerned; nil for an act on every app (an operator's role, the key ring).
        public var app: String?
        /// What happened, a dotted name: `catalog.published`, `sign-in.failed`, ...
        public var action: String
        /// What it happened to: a version, a person, a key.
        public var target: String?
        /// The rest, as JSON text (the fingerprint and rollout of a publication, a role ...). Never
        /// a secret: credentials, tokens and passwords are not audit details.
        public var details: String

        public init(
            at: Double, actor: Actor, app: String?, action: String, target: String? = nil,
            details: TourValue = .object([:])
        ) {
            self.at = at
            self.actor = actor.name
            self.source = actor.source
            self.app = app
            self.action = action
            self.target = target
            self.details = (try? details.jsonText()) ?? "{}"
        }

        init(
            id: Int64, at: Double, actor: String, source: String, app: String?, action: String,
            target: String?,
            details: String
        ) {
            self.id = id
            self.at = at
            self.actor = actor
            self.source = source
            self.app = app
            self.action = action
            self.target = target
            self.details = details
        }

        /// What the hash covers: every column but the id, in a fixed order.
        var hashedText: String {
            let fields: [TourValue] = [
                .double(at), .string(actor), .string(source), app.map(TourValue.string) ?? .null,
                .string(action),
                target.map(TourValue.string) ?? .null, .string(details),
            ]
            return (try? TourValue.list(fields).jsonText()) ?? ""
        }

        static func hash(previous: String, _ entry: Entry) -> String {
            ByteText.hex(SHA256.hash(data: Data((previous + "\n" + entry.hashedText).utf8)))
        }
    }

    /// The hash before the first row.
    static let genesis = String(repeating: "0", count: 64)
    /// Serialises appends, so each row's previous hash is the row before it.
    static let lockID: Int64 = 0x0B0A_A0D1

    /// Appends `entry` in its own transaction.
    public func record(_ entry: Entry) async throws {
        try await writes.write { connection, logger in
            try await Self.append(entry, on: connection, logger: logger)
        }
    }

    /// Appends `entry` in the caller's transaction: the act and its row commit together, or neither.
    package static func append(_ entry: Entry, on connection: PostgresConnection, logger: Logger) async throws
    {
        try await connection.query("SELECT pg_advisory_xact_lock(\(lockID))", logger: logger)
        let rows = try await connection.query(
            "SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1", logger: logger)
        var previous = genesis
        for try await hash in rows.decode(String.self) { previous = hash }
        let hash = Entry.hash(previous: previous, entry)
        try await connection.query(
            """
            INSERT INTO audit_log (at, actor, source, app, action, target, details, previous_hash, hash)
            VALUES (\(entry.at), \(entry.actor), \(entry.source), \(entry.app), \(entry.action),
                \(entry.target),
                    \(entry.details), \(previous), \(hash))
            """, logger: logger)
    }

    /// Records the ids of the server's token keys when they differ from the last ids recorded:
    /// a key added, rotated or dropped (never a secret).
    public func recordKeyRing(_ ids: [String], at time: Double) async throws {
        try await writes.write { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.lockID))", logger: logger)
            let rows = try await connection.query(
                "SELECT details FROM audit_log WHERE action = 'token-keys.changed' ORDER BY id DESC LIMIT 1",
                logger: logger)
            var last: [String]?
            for try await details in rows.decode(String.self) {
                last = (try? TourValue(jsonText: details))?.objectValue?["keys"]?.listValue?.compactMap(
                    \.stringValue)
            }
            guard last != ids else { return }
            let host = ProcessInfo.processInfo.hostName
            try await Self.append(
                .init(
                    at: time,
                    actor: Actor(name: "onboarding-server (\(host))", source: "start-up", person: nil),
                    app: nil,
                    action: "token-keys.changed",
                    details: ["keys": .list(ids.map(TourValue.string)), "signing": .string(ids[0])]),
                on: connection, logger: logger)
        }
    }

    /// What to list.
    public struct Filter: Equatable, Sendable {
        /// Rows of these apps (and, when `includingEveryApp`, rows of no app); nil: every row.
        public var apps: [String]?
        public var includingEveryApp = true
        public var actor: String?
        /// Rows before this id (the next page), newest first.
        public var before: Int64?
        public var limit = 100

        public init(
            apps: [String]? = nil, includingEveryApp: Bool = true, actor: String? = nil, before: Int64? = nil,
            limit: Int = 100
        ) {
            self.apps = apps
            self.includingEveryApp = includingEveryApp
            self.actor = actor
            self.before = before
            self.limit = limit
        }
    }

    /// Rows, newest first.
    public func list(_ filter: Filter) async throws -> [Entry] {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let apps = filter.apps
            let rows = try await connection.query(
                """
                SELECT id, at, actor, source, app, action, target, details FROM audit_log
                WHERE (\(apps == nil) OR app = ANY(\(apps ?? [])) OR (\(filter.includingEveryApp)
                    AND app IS NULL))
                  AND (\(filter.actor == nil) OR actor = \(filter.actor ?? ""))
                  AND id < \(filter.before ?? Int64.max)
                ORDER BY id DESC LIMIT \(Int64(max(1, min(filter.limit, 10_000))))
                """, logger: logger)
            var entries: [Entry] = []
            for try await (id, at, actor, source, app, action, target, details) in rows.decode(
                (Int64, Double, String, String, String?, String, String?, String).self)
            {
                entries.append(
                    Entry(
                        id: id, at: at, actor: actor, source: source, app: app, action: action,
                        target: target, details: details))
            }
            return entries
        }
    }

    /// The stored hash of row `id`, if the row exists.
    public func hash(of id: Int64) async throws -> String? {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let rows = try await connection.query(
                "SELECT hash FROM audit_log WHERE id = \(id)", logger: logger)
            for try await hash in rows.decode(String.self) { return hash }
            return nil
        }
    }

    /// The newest row's id and hash: what an operator keeps outside the database (an anchor), so
    /// that a chain rewritten from some row on, or cut short, is found (``verify()`` alone finds
    /// only a row changed without rewriting those after it).
    public func head() async throws -> (id: Int64, hash: String)? {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            let rows = try await connection.query(
                "SELECT id, hash FROM audit_log ORDER BY id DESC LIMIT 1", logger: logger)
            for try await (id, hash) in rows.decode((Int64, String).self) { return (id, hash) }
            return nil
        }
    }

    /// The chain checked from the first row: nil when every row's hash is right, else the first
    /// row that is not (changed, or after a row removed or inserted), and how many rows were read.
    public func verify() async throws -> (rows: Int, brokenAt: Int64?) {
        try await reads.read(within: .seconds(600)) { connection, logger in
            let rows = try await connection.query(
                """
                SELECT id, at, actor, source, app, action, target, details, previous_hash, hash
                    FROM audit_log ORDER BY id
                """,
                logger: logger)
            var previous = Self.genesis
            var count = 0
            for try await (id, at, actor, source, app, action, target, details, stored, hash) in rows.decode(
                (Int64, Double, String, String, String?, String, String?, String, String, String).self)
            {
                count += 1
                let entry = Entry(
                    id: id, at: at, actor: actor, source: source, app: app, action: action, target: target,
                    details: details)
                guard stored == previous, Entry.hash(previous: previous, entry) == hash else {
                    return (count, id)
                }
                previous = hash
            }
            return (count, nil)
        }
    }
}

extension AuditLog.Entry: TourValueRepresentable {
    public var tourValue: TourValue {
        .members([
            "id": .int(Int(id)), "at": .double(at),
            "time": .string(ISOTime.wholeSeconds(at)),
            "actor": .string(actor), "source": .string(source), "app": app.map(TourValue.string),
            "action": .string(action),
            "target": target.map(TourValue.string),
            "details": (try? TourValue(jsonText: details)) ?? .string(details),
        ])
    }
}
