import Logging
import PostgresNIO
import ServiceLifecycle

extension AccountStore {
    /// Counts every push committed since the last run into the insights aggregates
    /// (`insight_catch_up()`, migration `v4-insights`); returns the pushes counted. Reports and
    /// dashboard pages call it before they read, so they include every push answered before.
    @discardableResult
    public func catchUpInsights() async throws -> Int {
        let rows = try await client.query("SELECT insight_catch_up()", logger: logger)
        for try await counted in rows.decode(Int64.self) { return Int(counted) }
        return 0
    }
}

/// The incremental job: catches the aggregates up every `interval` while the server runs, so
/// they stay current without a push paying for them. Several processes may run it at once: they
/// queue on the watermark and each push is counted once. Stops at graceful shutdown.
struct InsightsCatchUp: Service {
    let store: AccountStore
    let interval: Duration
    let logger: Logger

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            var failures = 0
            while !Task.isCancelled {
                do {
                    try await store.catchUpInsights()
                    failures = 0
                } catch {
                    failures += 1
                    // The first seconds of a start (migrations still running) fail quietly.
                    if failures == 5 {
                        logger.warning("insights catch-up failing", metadata: ["error": "\(String(reflecting: type(of: error)))"])
                    }
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
