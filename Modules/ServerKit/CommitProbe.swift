import Logging
import PostgresNIO
import ServerDatabase
import ServiceLifecycle

/// Readiness (`/v1/ready`): whether a write commits now. A transaction that writes one row of its
/// own table (`readiness_probe`, v23) and commits, on a connection of the probe's own: a
/// transaction that writes no WAL does not wait for a synchronous standby when it commits.
///
/// `SELECT 1` answered while every commit waited for a synchronous standby that was not there
/// (which no timeout of PostgreSQL's ends), so readiness said 200 while no push could be
/// acknowledged; a standby or read-only host refuses the write at once.
///
/// One probe at a time: while one waits, readiness answers from it (not ready past its bound)
/// without opening another backend, so a balancer asking every second cannot pile up backends
/// waiting for the standby. When the wait ends (the standby back, the setting cleared), the same
/// probe answers and readiness follows.
///
/// A service of the run: at its graceful shutdown it closes its connection and probes no more
/// (a connection left open when the probe is freed is PostgresNIO's assertion failure).
package actor CommitProbe: Service {
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private var connection: PostgresConnection?
    private var pending: Task<Bool, Never>?
    private var nextID = 1
    private var closed = false

    package init(configuration: PostgresConnection.Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Whether the probe in flight (or a new one) committed within `limit`.
    package func isReady(within limit: Duration) async -> Bool {
        let task: Task<Bool, Never>
        if let pending {
            task = pending
        } else {
            task = Task { await self.probe() }
            pending = task
        }
        return await Self.first(task, within: limit)
    }

    /// v23: the probe's one row.
    package static let v23 = ["CREATE TABLE readiness_probe (id int PRIMARY KEY, at timestamptz NOT NULL)"]

    private func probe() async -> Bool {
        defer { pending = nil }
        do {
            guard !closed else { return false }
            if connection?.isClosed ?? true {
                let opened = try await PostgresConnection.connect(
                    configuration: configuration, id: nextID, logger: logger)
                nextID += 1
                // Closed while it connected: the run is stopping.
                guard !closed else {
                    try? await opened.close()
                    return false
                }
                connection = opened
            }
            guard let connection else { return false }
            try await connection.query("BEGIN", logger: logger)
            try await connection.query(
                """
                INSERT INTO readiness_probe (id, at) VALUES (1, now()) ON CONFLICT (id) DO UPDATE
                    SET at = EXCLUDED.at
                """,
                logger: logger)
            try await connection.query("COMMIT", logger: logger)
            return true
        } catch {
            try? await connection?.close()
            connection = nil
            return false
        }
    }

    /// The task's answer, or false once `limit` has passed (the task goes on).
    private static func first(_ task: Task<Bool, Never>, within limit: Duration) async -> Bool {
        await Bounded.answer(within: limit, otherwise: false) { await task.value }
    }

    func close() async {
        closed = true
        try? await connection?.close()
        connection = nil
    }

    package func run() async throws {
        try? await gracefulShutdown()
        await close()
    }
}

/// An answer by a deadline from work that may never end (a PostgreSQL handshake no timeout covers).
package enum Bounded {
    /// `work`'s answer, or `otherwise` once `limit` has passed (``Deadline``: the work is cancelled
    /// and left to end by itself).
    package static func answer<T: Sendable>(
        within limit: Duration, otherwise: T, _ work: @escaping @Sendable () async -> T
    ) async -> T {
        (try? await Deadline.answer(within: limit, { await work() }, late: { CancellationError() }))
            ?? otherwise
    }
}
