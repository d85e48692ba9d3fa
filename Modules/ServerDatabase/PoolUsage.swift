import Logging
import Metrics
import PostgresNIO
import Synchronization

/// A pool's connections in use and requests waiting for one, as gauges
/// (`onboarding_database_connections{pool, state}`): PostgresNIO's pool does not report them, so
/// every lease of the server's goes through here.
public final class PoolUsage: Sendable {
    private let counts = Mutex((inUse: 0, waiting: 0))
    private let inUse: Gauge
    private let waiting: Gauge

    public init(_ pool: String) {
        inUse = Gauge(
            label: "onboarding_database_connections", dimensions: [("pool", pool), ("state", "in_use")])
        waiting = Gauge(
            label: "onboarding_database_connections", dimensions: [("pool", pool), ("state", "waiting")])
        inUse.record(0)
        waiting.record(0)
    }

    /// Leases a connection of `client` for `body`, counted.
    public func lease<T>(_ client: PostgresClient, _ body: (PostgresConnection) async throws -> T)
        async throws -> T
    {
        update { $0.waiting += 1 }
        var holding = false
        defer { update { counts in if holding { counts.inUse -= 1 } else { counts.waiting -= 1 } } }
        return try await client.withConnection { connection in
            update { counts in
                counts.waiting -= 1
                counts.inUse += 1
            }
            holding = true
            return try await body(connection)
        }
    }

    private func update(_ change: (inout (inUse: Int, waiting: Int)) -> Void) {
        let now = counts.withLock { counts in
            change(&counts)
            return counts
        }
        inUse.record(now.inUse)
        waiting.record(now.waiting)
    }
}

/// The id of the request a task serves, for every log line it writes (`request_id`).
public enum RequestLogContext {
    @TaskLocal public static var requestID: String?
}

extension Logger {
    /// This logger with the request's id (``RequestLogContext``), when it runs within a request.
    public var inRequest: Logger {
        guard let id = RequestLogContext.requestID else { return self }
        var logger = self
        logger[metadataKey: "request_id"] = "\(id)"
        return logger
    }
}
