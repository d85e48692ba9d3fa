import AccountSync
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import TourCodec

/// The public keys whose signatures the server accepts on an app's publications (Docs/Security.md).
/// Registering one needs the app's owner; the private half never reaches the server. Devices do not
/// trust these: they trust the keys compiled into their binary, and learn only retirements here.
public struct PublicationKeyStore: PostgresStore {
    let writes: WritableDatabase
    let reads: ReadOnlyDatabase
    let logger: Logger

    public init(writes: WritableDatabase, reads: ReadOnlyDatabase, logger: Logger) {
        self.writes = writes
        self.reads = reads
        self.logger = logger
    }

    public struct Stored: Equatable, Sendable {
        public var key: PublicationKey
        public var registeredAt: Double
        public var registeredBy: String
    }

    /// The app's keys, oldest first.
    public func all(app: String) async throws -> [Stored] {
        try await reads.read { connection, logger in
            try await Self.all(app: app, on: connection, logger: logger)
        }
    }

    package static func all(app: String, on connection: PostgresConnection, logger: Logger) async throws
        -> [Stored]
    {
        let rows = try await connection.query(
            """
            SELECT public_key, registered_at, registered_by, retired_at FROM publication_keys
            WHERE app = \(app) ORDER BY registered_at, key_id
            """, logger: logger)
        var keys: [Stored] = []
        for try await (publicKey, at, by, retired) in rows.decode((String, Double, String, Double?).self) {
            // A row that is not a key (written by hand) is left out: it can only refuse.
            guard let key = try? PublicationKey(app: app, publicKey: publicKey, retiredAt: retired) else {
                continue
            }
            keys.append(Stored(key: key, registeredAt: at, registeredBy: by))
        }
        return keys
    }

    public enum Outcome: Equatable, Sendable {
        case registered(PublicationKey)
        case unchanged(PublicationKey)
        case retired(PublicationKey)
        case refused(String)
    }

    /// Registers `key` for its app (the same key again changes nothing), audited in the same
    /// transaction.
    public func register(_ key: PublicationKey, by actor: Actor, at time: Double) async throws -> Outcome {
        return try await writes.write { connection, logger in
            let existing = try await Self.all(app: key.app, on: connection, logger: logger)
            if let same = existing.first(where: { $0.key.id == key.id }) {
                return same.key.retiredAt == nil
                    ? .unchanged(same.key)
                    : .refused(
                        """
                        key \(key.id) was retired; a retired key is never used again: \
                        make a new one (onboarding-server keys new)
                        """
                    )
            }
            try await connection.query(
                """
                INSERT INTO publication_keys (app, key_id, public_key, registered_at, registered_by)
                VALUES (\(key.app), \(key.id), \(key.publicKey), \(time), \(actor.name))
                """, logger: logger)
            try await AuditLog.append(
                .init(
                    at: time, actor: actor, app: key.app, action: "key.registered", target: key.id,
                    details: ["publicKey": .string(key.publicKey)]),
                on: connection, logger: logger)
            return .registered(key)
        }
    }

    /// Retires a key from `time` on: the server refuses what it signs, and devices that hear of it
    /// refuse documents signed by it alone. For good: a retired key is never brought back.
    public func retire(app: String, id: String, by actor: Actor, at time: Double) async throws -> Outcome {
        return try await writes.write { connection, logger in
            let existing = try await Self.all(app: app, on: connection, logger: logger)
            guard var key = existing.first(where: { $0.key.id == id })?.key else {
                return .refused(
                    "\(app) has no publication key \(id) (onboarding-server keys list --app \(app))")
            }
            if key.retiredAt != nil { return .unchanged(key) }
            try await connection.query(
                "UPDATE publication_keys SET retired_at = \(time) WHERE app = \(app) AND key_id = \(id)",
                logger: logger)
            try await AuditLog.append(
                .init(at: time, actor: actor, app: app, action: "key.retired", target: id), on: connection,
                logger: logger)
            key.retiredAt = time
            return .retired(key)
        }
    }
}

extension PublicationKeyStore.Stored: TourValueRepresentable {
    public var tourValue: TourValue {
        .members([
            "id": .string(key.id), "publicKey": .string(key.publicKey), "registeredAt": .double(registeredAt),
            "registeredBy": .string(registeredBy), "retiredAt": key.retiredAt.map(TourValue.double),
        ])
    }
}
