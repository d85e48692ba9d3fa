import PostgresNIO
import ServerDatabase
import ServerInsights
import ServerKit

extension AccountStore {
    /// The insights aggregates' counting on this store's PostgreSQL.
    package var insightsCounting: InsightsCounting { InsightsCounting(client: client, logger: logger) }

    /// Counts every push committed since the last run (``InsightsCounting/catchUp()``).
    @discardableResult
    public func catchUpInsights() async throws -> UInt64 { try await insightsCounting.catchUp() }

    /// Catches up until every transaction finished when it was called is counted, waiting up to
    /// `limit` for one still running (``InsightsCounting/catchUp(waitingUpTo:)``).
    public func catchUpInsights(waitingUpTo limit: Duration) async throws {
        try await insightsCounting.catchUp(waitingUpTo: limit)
    }
}

extension AccountStore {
    /// The newest transaction id now (the snapshot's `xmax`): once the insights are counted past
    /// it, every push committed before this call is in them. A read: it assigns no id.
    package func newestTransaction() async throws -> UInt64 {
        try await reads.read { connection, logger in
            var newest: UInt64 = 0
            for try await mark in try await connection.query(
                "SELECT pg_snapshot_xmax(pg_current_snapshot())::text", logger: logger
            ).decode(String.self) { newest = UInt64(mark) ?? 0 }
            return newest
        }
    }
}
