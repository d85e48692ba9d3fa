import ServerInsights

extension AccountStore {
    /// The insights aggregates' counting on this store's PostgreSQL.
    var insightsCounting: InsightsCounting { InsightsCounting(client: client, logger: logger) }

    /// Counts every push committed since the last run (``InsightsCounting/catchUp()``).
    @discardableResult
    public func catchUpInsights() async throws -> UInt64 { try await insightsCounting.catchUp() }

    /// Catches up until every transaction finished when it was called is counted, waiting up to
    /// `limit` for one still running (``InsightsCounting/catchUp(waitingUpTo:)``).
    public func catchUpInsights(waitingUpTo limit: Duration) async throws {
        try await insightsCounting.catchUp(waitingUpTo: limit)
    }
}
