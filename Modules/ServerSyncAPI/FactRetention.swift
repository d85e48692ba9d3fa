import Logging
import PostgresNIO
import ServerInsights
import ServiceLifecycle

/// Retention of facts (Docs/Privacy.md, "Retention"): facts of pushes the server received more than
/// `days` ago are dropped, in bounded batches, once the insights job has counted them. The
/// aggregates (which name no subject) keep every number; the pushed rows themselves (order,
/// event, versions) and the records stay, as sync needs them.
///
/// A watermark (`fact_retention.below`, a transaction id like the insights job's) says below which
/// transaction every push's facts are gone, so each batch reads the pushes after it through the
/// `pushes (xact)` index, never the whole table. A batch stops at the insights watermark, at the
/// first push received since the cut-off, or after `batch` pushes, whichever comes first.
public struct FactRetention: Sendable {
    let client: PostgresClient
    let logger: Logger
    /// Pushes per transaction, at most (a batch of one transaction's pushes may be larger).
    public static let batch = 5_000

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// v14: the watermark.
    package static let v14 = [
        """
        CREATE TABLE fact_retention (
            singleton BOOLEAN PRIMARY KEY DEFAULT true CHECK (singleton),
            below xid8 NOT NULL
        )
        """,
        "INSERT INTO fact_retention (singleton, below) VALUES (true, '0'::xid8)",
    ]

    /// Drops the facts of counted pushes received more than `days` days ago; the facts dropped.
    @discardableResult
    public func run(days: Int) async throws -> Int {
        var total = 0
        while true {
            let (dropped, moved) = try await oneBatch(days: days)
            total += dropped
            if !moved { return total }
        }
    }

    /// One transaction: the facts of the next batch of old, counted pushes; whether the watermark moved.
    private func oneBatch(days: Int) async throws -> (Int, Bool) {
        let logger = logger
        let seconds = Double(days) * 86_400
        return try await client.withTransaction(logger: logger) { connection in
            // The catch-up's watermark, read in this transaction: it only moves up, so the value
            // read before the statement is never past what it counted when the statement runs.
            let counted = String(
                try await InsightsProgress.countedBelow(on: connection, logger: logger).watermark)
            let rows = try await connection.query(
                """
                WITH w AS (SELECT below FROM fact_retention WHERE singleton FOR UPDATE),
                counted AS (SELECT \(counted)::xid8 AS c),
                bound AS (
                    SELECT least(
                        (SELECT c FROM counted),
                        coalesce(
                            (SELECT p.xact FROM pushes p, w WHERE p.xact >= w.below
                                AND p.received_at >= now() - make_interval(secs => \(seconds))
                                    ORDER BY p.xact LIMIT 1),
                            (SELECT c FROM counted)),
                        coalesce(
                            (SELECT p.xact FROM pushes p, w WHERE p.xact > w.below ORDER BY p.xact OFFSET
                                \(Self.batch) LIMIT 1),
                            (SELECT c FROM counted))
                    ) AS hi
                ),
                dropped AS (
                    DELETE FROM facts f USING pushes p, w, bound b
                    WHERE p.xact >= w.below AND p.xact < b.hi
                        AND f.app = p.app AND f.account = p.account AND f.device = p.device AND f.seq = p.seq
                    RETURNING 1
                ),
                dropped_held AS (
                    DELETE FROM held_facts f USING pushes p, w, bound b
                    WHERE p.xact >= w.below AND p.xact < b.hi
                        AND f.app = p.app AND f.account = p.account AND f.device = p.device AND f.seq = p.seq
                    RETURNING 1
                ),
                moved AS (
                    UPDATE fact_retention SET below = b.hi FROM bound b WHERE singleton
                        AND b.hi > fact_retention.below RETURNING 1
                )
                SELECT (SELECT count(*) FROM dropped)::bigint + (SELECT count(*) FROM dropped_held)::bigint,
                    (SELECT count(*) FROM moved)::bigint
                """, logger: logger)
            for try await (dropped, moved) in rows.decode((Int64, Int64).self) {
                return (Int(dropped), moved > 0)
            }
            return (0, false)
        }
    }
}

/// `serve --retain-facts DAYS`: the retention every minute while the server runs (several
/// processes queue on the watermark's row). Stops at graceful shutdown.
package struct FactRetentionJob: Service {
    let retention: FactRetention
    let days: Int
    let logger: Logger

    package init(retention: FactRetention, days: Int, logger: Logger) {
        self.retention = retention
        self.days = days
        self.logger = logger
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let dropped = try await retention.run(days: days)
                    if dropped > 0 {
                        logger.info(
                            "facts past retention dropped",
                            metadata: ["facts": "\(dropped)", "days": "\(days)"])
                    }
                } catch {
                    logger.warning(
                        "fact retention failed; trying again in a minute",
                        metadata: ["error": "\(String(reflecting: error).prefix(500))"])
                }
                try? await Task.sleep(for: .seconds(60))
            }
        }
    }
}
