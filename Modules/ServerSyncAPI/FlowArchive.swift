import AccountSync
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import TourCodec

/// Flows an editor archived (a test flow, one retired long ago): off the dashboard's overview,
/// their numbers kept and reachable from the app's page and their own. Each act is audited.
public struct FlowArchive: PostgresStore {
    let writes: WritableDatabase
    let reads: ReadOnlyDatabase
    let logger: Logger

    public init(writes: WritableDatabase, reads: ReadOnlyDatabase, logger: Logger) {
        self.writes = writes
        self.reads = reads
        self.logger = logger
    }

    /// v15.
    package static let v15 = [
        """
        CREATE TABLE archived_flows (
            app TEXT NOT NULL,
            flow TEXT NOT NULL,
            archived_at DOUBLE PRECISION NOT NULL,
            archived_by TEXT NOT NULL,
            PRIMARY KEY (app, flow)
        )
        """
    ]

    /// Archives (`archived`) or restores a flow; whether anything changed.
    public func set(app: String, flow: String, archived: Bool, by actor: Actor, at time: Double) async throws
        -> Bool
    {
        return try await writes.write { connection, logger in
            let rows =
                archived
                ? try await connection.query(
                    """
                    INSERT INTO archived_flows (app, flow, archived_at, archived_by) VALUES (\(app),
                        \(flow), \(time), \(actor.name))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: logger)
                : try await connection.query(
                    "DELETE FROM archived_flows WHERE app = \(app) AND flow = \(flow) RETURNING 1",
                    logger: logger)
            var changed = false
            for try await _ in rows { changed = true }
            if changed {
                try await AuditLog.append(
                    .init(
                        at: time, actor: actor, app: app,
                        action: archived ? "flow.archived" : "flow.restored", target: flow),
                    on: connection, logger: logger)
            }
            return changed
        }
    }

    /// The archived flows of `apps`, as "APP/FLOW".
    public func archived(apps: [String]) async throws -> Set<String> {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            var names: Set<String> = []
            let rows = try await connection.query(
                "SELECT app, flow FROM archived_flows WHERE app = ANY(\(apps))", logger: logger)
            for try await (app, flow) in rows.decode((String, String).self) { names.insert(app + "/" + flow) }
            return names
        }
    }
}
