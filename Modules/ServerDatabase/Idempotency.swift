import Logging
import PostgresNIO
import ServiceLifecycle

/// A request that may be sent again (an `Idempotency-Key`): its first answer is kept in the same
/// transaction as what it changed, so a retry (after a 503 `commit_unconfirmed`, a lost
/// connection, a client that timed out) gets that answer and changes nothing, and a retry while
/// the first is still committing waits for it (the key's row is locked until it ends).
///
/// The row (`idempotent_requests`) holds a keyed hash of who asked (``scope``), the key, a hash
/// of the request, and the answer sealed by the server's key ring: an answer may carry a secret
/// (a credential shown once), which must not sit in the database in clear. Rows live a day.
public struct Idempotency: Sendable {
    /// Who asked, as the server's keyed hash: one caller's key never finds another's answer.
    public var scope: String
    public var key: String
    /// A hash of the request (method, path, body): the same key with another request is refused.
    public var fingerprint: String
    public var seal: @Sendable ([UInt8]) throws -> [UInt8]
    public var open: @Sendable ([UInt8]) throws -> [UInt8]

    public init(
        scope: String, key: String, fingerprint: String,
        seal: @escaping @Sendable ([UInt8]) throws -> [UInt8],
        open: @escaping @Sendable ([UInt8]) throws -> [UInt8]
    ) {
        self.scope = scope
        self.key = key
        self.fingerprint = fingerprint
        self.seal = seal
        self.open = open
    }

    /// How long an answer is kept (and a key remembered).
    public static let lifetime = "24 hours"

    /// 1 to 128 letters, digits, `-`, `_`, `.`, `:` (a UUID fits).
    public static let keyRule = "1 to 128 ASCII letters, digits, '-', '_', '.' or ':'"

    public static func isValidKey(_ key: String) -> Bool {
        (1...128).contains(key.utf8.count)
            && key.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
                        || "-_.:".unicodeScalars.contains($0))
            }
    }

    /// The migration that makes the table (frozen once landed).
    public static let migration = [
        """
        CREATE TABLE idempotent_requests (
            scope TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
            answer BYTEA NOT NULL,
            PRIMARY KEY (scope, key)
        )
        """,
        "CREATE INDEX idempotent_requests_by_age ON idempotent_requests (created_at)",
    ]
}

/// An answer that can be kept and given again.
public protocol StoredAnswer: Sendable {
    var storedBytes: [UInt8] { get }
    init(storedBytes: [UInt8]) throws
}

/// The `Idempotency-Key` was used before with another request.
public struct IdempotencyKeyReused: Error, CustomStringConvertible {
    public init() {}
    public var description: String {
        "this Idempotency-Key was used with another request in the last day; use a new key for a new request"
    }
}

extension WritableDatabase {
    /// ``write(_:_:)`` of a request that may carry an `Idempotency-Key`: with one, the answer
    /// `body` makes is kept with the transaction, and the same key (from the same caller, for the
    /// same request) gets it again without running `body`.
    public func write<T: StoredAnswer>(
        _ operation: DatabaseUnavailable.Operation = .write, idempotency: Idempotency?,
        _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        guard let idempotency else { return try await write(operation, body) }
        return try await write(operation) { connection, logger in
            // Waits while another transaction holds the same key (the first still committing).
            let inserted = try await connection.query(
                """
                INSERT INTO idempotent_requests (scope, key, fingerprint, answer)
                VALUES (\(idempotency.scope), \(idempotency.key), \(idempotency.fingerprint), '\\x'::bytea)
                ON CONFLICT (scope, key) DO NOTHING RETURNING 1
                """, logger: logger)
            var fresh = false
            for try await _ in inserted { fresh = true }
            if !fresh {
                let rows = try await connection.query(
                    """
                    SELECT fingerprint, answer FROM idempotent_requests
                    WHERE scope = \(idempotency.scope) AND key = \(idempotency.key)
                    """, logger: logger)
                for try await (fingerprint, answer) in rows.decode((String, ByteBuffer).self) {
                    guard fingerprint == idempotency.fingerprint else { throw IdempotencyKeyReused() }
                    return try T(storedBytes: try idempotency.open(Array(answer.readableBytesView)))
                }
            }
            let answer = try await body(connection, logger)
            let sealed = ByteBuffer(bytes: try idempotency.seal(answer.storedBytes))
            try await connection.query(
                """
                UPDATE idempotent_requests SET answer = \(sealed)
                WHERE scope = \(idempotency.scope) AND key = \(idempotency.key)
                """, logger: logger)
            return answer
        }
    }

    /// Forgets keys older than ``Idempotency/lifetime``; how many.
    public func expireIdempotencyKeys() async throws -> Int {
        try await write { connection, logger in
            let rows = try await connection.query(
                """
                WITH gone AS (
                    DELETE FROM idempotent_requests WHERE created_at < now() - interval '24 hours' RETURNING 1
                ) SELECT count(*)::bigint FROM gone
                """, logger: logger)
            var count = 0
            for try await gone in rows.decode(Int64.self) { count = Int(gone) }
            return count
        }
    }
}

/// Forgets kept answers older than ``Idempotency/lifetime``, once an hour (any server may; the
/// delete is the same whoever runs it).
public struct IdempotencyExpiry: Service {
    let writes: WritableDatabase
    let ready: SchemaReady?
    let logger: Logger

    public init(writes: WritableDatabase, ready: SchemaReady? = nil, logger: Logger) {
        self.writes = writes
        self.ready = ready
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await ready?.wait()
            while !Task.isCancelled {
                do {
                    let gone = try await writes.expireIdempotencyKeys()
                    if gone > 0 { logger.debug("kept answers expired", metadata: ["count": "\(gone)"]) }
                } catch {
                    logger.warning(
                        "kept answers could not be expired",
                        metadata: ["cause": "\(DatabaseUnavailable.describe(error))"])
                }
                try? await Task.sleep(for: .seconds(3600))
            }
        }
    }
}
