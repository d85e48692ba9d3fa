import Foundation
import Logging
import PostgresNIO

/// The dashboard's figures read from a streaming replica (`READ_DATABASE_URL`, issue 47), so pages
/// do not compete with pushes on the primary. The catch-up job and every write stay on the primary;
/// before a page reads, the replica is given a bounded time to replay everything the primary had
/// committed when the page was asked for (the catch-up's counts included), and a page read from a
/// replica still behind says by how much.
struct ReplicaReads: Sendable {
    let primary: PostgresClient
    let replica: PostgresClient
    let logger: Logger

    /// How long a page waits for the replica before it shows what the replica has.
    static let maximumWait: Duration = .seconds(2)

    /// Nil when the replica has replayed what the primary had committed when asked; else, after
    /// ``maximumWait``, how many seconds behind the primary its last replayed transaction is.
    func caughtUp() async throws -> Double? {
        var target = "0/0"
        for try await lsn in try await primary.query("SELECT pg_current_wal_lsn()::text", logger: logger).decode(String.self) {
            target = lsn
        }
        let deadline = ContinuousClock.now + Self.maximumWait
        while true {
            var (reached, behind) = (false, 0.0)
            // A database that is not in recovery (no replica, or one promoted) has nothing to wait for.
            for try await (done, lag) in try await replica.query(
                """
                SELECT coalesce(pg_last_wal_replay_lsn() >= \(target)::pg_lsn, true),
                    coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0)::float8
                """, logger: logger
            ).decode((Bool, Double).self) { (reached, behind) = (done, lag) }
            if reached { return nil }
            if ContinuousClock.now >= deadline { return max(behind, 0) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
