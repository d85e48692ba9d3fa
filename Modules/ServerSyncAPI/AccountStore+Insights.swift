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
    /// What a report waits for the insights to count below: one past the newest push's
    /// transaction (`pushes.xact`, which an admission of held facts moves to its own), so every
    /// push committed before this call is counted once the count passes it. Pushes only: the
    /// catch-up's own runs and every other write take transaction ids too, and a target of the
    /// newest of those (the snapshot's `xmax`, until 0.43.0) was never reached without another
    /// run, so every report waited for one, however quiet the server. 0 when nothing was pushed.
    /// A read (the newest of each partition's `xact` index): it assigns no id.
    package func reportTarget() async throws -> UInt64 {
        try await reads.read { connection, logger in
            var newest: UInt64?
            for try await mark in try await connection.query(
                "SELECT max(xact)::text FROM pushes", logger: logger
            ).decode(String?.self) { newest = mark.flatMap { UInt64($0) } }
            return newest.map { $0 + 1 } ?? 0
        }
    }
}
