import Logging
import Metrics
import PostgresNIO
import ServerDatabase
import ServiceLifecycle

/// The insights aggregates' counting, on the server's PostgreSQL: pushes are counted after they
/// commit, by `insight_catch_up()` (migration `v4-insights`), never on a push's own path.
public struct InsightsCounting: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Counts every push committed since the last run into the insights aggregates; returns the
    /// watermark, below which every transaction is counted.
    ///
    /// Every run says how far it counted to whoever follows (`NOTIFY insights_counted`, delivered
    /// at its commit): the watermark, the newest transaction id when the run began, and when it
    /// began. A run whose watermark reaches that id counted every push committed before it began.
    @discardableResult
    public func catchUp() async throws -> UInt64 {
        let rows = try await client.query(
            """
            SELECT run.watermark
            FROM (SELECT insight_catch_up()::text AS watermark,
                pg_snapshot_xmax(pg_current_snapshot())::text AS xmax,
                extract(epoch FROM statement_timestamp())::text AS began) AS run
            CROSS JOIN LATERAL (SELECT pg_notify('insights_counted', run.watermark || ' ' || run.xmax || ' '
                || run.began)) AS told
            """, logger: logger)
        for try await mark in rows.decode(String.self) { return UInt64(mark) ?? 0 }
        return 0
    }

    /// Transaction ids between `watermark` and the newest one (the insights' lag).
    public func lag(below watermark: UInt64) async throws -> Int {
        let rows = try await client.query(
            "SELECT pg_snapshot_xmax(pg_current_snapshot())::text", logger: logger)
        for try await mark in rows.decode(String.self) {
            return max(0, Int(UInt64(mark) ?? watermark) - Int(watermark))
        }
        return 0
    }

    /// Catches up until every transaction that had finished when it was called is counted, so a
    /// report includes every push answered before it was asked for. A transaction still running
    /// then (a push in flight) holds the watermark back for its few milliseconds; this waits for
    /// it, up to `limit`, and then answers with what is counted.
    public func catchUp(waitingUpTo limit: Duration) async throws {
        let rows = try await client.query(
            "SELECT pg_snapshot_xmax(pg_current_snapshot())::text", logger: logger)
        var target: UInt64 = 0
        for try await mark in rows.decode(String.self) { target = UInt64(mark) ?? 0 }
        let deadline = ContinuousClock.now + limit
        while try await catchUp() < target, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// The incremental job: catches the aggregates up every `interval` while the server runs, so
/// they stay current without a push paying for them. Several processes may run it at once: they
/// queue on the watermark and each push is counted once. Stops at graceful shutdown.
public struct InsightsCatchUp: Service {
    /// A second. Each run is a write transaction (the watermark's row, its `NOTIFY`) that waits
    /// for its WAL flush beside the pushes' commits, and plans its counting statements afresh, so
    /// part of its cost is per run, not per push counted: at one run a second the pushes beside
    /// it had about half the p99 they had at four (Docs/PerformanceHistory.md, 0.39.1: 9 against
    /// 17 ms at 1,000 devices at one event a second each). The figures are that much older: a
    /// second at most, plus the run. (`/report` does not wait for the tick: it asks for a run,
    /// ``InsightsCountRequests``.)
    public static let interval: Duration = .seconds(1)

    let counting: InsightsCounting
    let interval: Duration
    let ready: SchemaReady?
    /// Runs asked for sooner than the next tick (a `/report` waiting for its count).
    let requests: InsightsCountRequests?
    let logger: Logger

    /// With `ready`, the first run waits for the schema's migrations; with `requests`, a run asked
    /// for there starts without waiting out the interval.
    public init(
        counting: InsightsCounting, interval: Duration = Self.interval, ready: SchemaReady? = nil,
        requests: InsightsCountRequests? = nil, logger: Logger
    ) {
        self.counting = counting
        self.interval = interval
        self.ready = ready
        self.requests = requests
        self.logger = logger
    }

    /// While it keeps failing, a warning at most this often (the first after five failures in a row).
    static let warningInterval: Duration = .seconds(60)

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await ready?.wait()
            var failures = 0
            var lastWarning: ContinuousClock.Instant?
            while !Task.isCancelled {
                let started = ContinuousClock.now
                do {
                    let watermark = try await counting.catchUp()
                    let took = ContinuousClock.now - started
                    InsightsMetrics.run.recordNanoseconds(
                        took.components.seconds * 1_000_000_000 + took.components.attoseconds / 1_000_000_000)
                    if let lag = try? await counting.lag(below: watermark) { InsightsMetrics.lag.record(lag) }
                    if failures >= 5 {
                        logger.info("insights catch-up working again", metadata: ["failures": "\(failures)"])
                    }
                    failures = 0
                    lastWarning = nil
                } catch {
                    failures += 1
                    InsightsMetrics.failures.increment()
                    // A warning after five failures in a row, then every minute the job keeps
                    // failing, with its cause.
                    let now = ContinuousClock.now
                    if failures >= 5, lastWarning.map({ now - $0 >= Self.warningInterval }) ?? true {
                        lastWarning = now
                        logger.warning(
                            "insights catch-up failing",
                            metadata: [
                                "cause": "\(DatabaseUnavailable.describe(error))",
                                "failures_in_a_row": "\(failures)",
                            ])
                    }
                }
                if let requests {
                    await requests.pause(for: interval)
                } else {
                    try? await Task.sleep(for: interval)
                }
            }
        }
    }
}
