import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import ServerKit
import ServerSyncAPI
import ServiceLifecycle

/// A multi-host `DATABASE_URL`
/// (`postgres://USER@PRIMARY:5432,STANDBY:5432/DB?target_session_attrs=read-write`), followed as
/// libpq follows one: the server uses the first host that answers as the URL asks (with
/// `read-write`, one that takes writes: the primary), and when that one stops answering so (it
/// died, or it is a standby now) and another does (a promoted standby), the server's services stop
/// and start again on it (``Server/run(_:logger:waitForDatabase:)``). A failover manager
/// (pg_auto_failover, or a person with `pg_ctl promote`) makes the standby a primary; nothing here
/// decides a failover, it only follows one.
public enum DatabaseFailover {
    /// The first host of `url` that answers as it asks; nil when none does.
    public static func pick(_ url: DatabaseURL, logger: Logger) async -> DatabaseURL.Endpoint? {
        for endpoint in url.hosts where await accepts(url.using(endpoint), logger: logger) { return endpoint }
        return nil
    }

    /// Whether the host `url` uses answers within three seconds, and takes writes when the URL
    /// asks for `read-write`. The whole check is bounded, not only the TCP connect: a host that
    /// takes the connection and then answers nothing (a handshake or a query no timeout covers)
    /// held the watch, and the server never followed the failover.
    public static func accepts(_ url: DatabaseURL, logger: Logger) async -> Bool {
        await Bounded.answer(within: .seconds(3), otherwise: false) { await check(url, logger: logger) }
    }

    private static func check(_ url: DatabaseURL, logger: Logger) async -> Bool {
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try url.connectionConfiguration(role: "onboarding-failover-check"), id: 0,
                logger: logger)
            defer { Task { try? await connection.close() } }
            // As libpq reads `read-write`: a session that may write. A promoted standby is out of
            // recovery before it takes writes (pg_auto_failover keeps it read-only until the old
            // primary is demoted or its timeout passes), so recovery alone is not the test.
            var (recovering, readOnly) = (true, true)
            let rows = try await connection.query(
                "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'", logger: logger)
            for try await (inRecovery, sessionReadOnly) in rows.decode((Bool, Bool).self) {
                (recovering, readOnly) = (inRecovery, sessionReadOnly)
            }
            let accepted =
                switch url.targetSessionAttributes {
                case "read-write": !(recovering || readOnly)
                case "standby": recovering
                default: true
                }
            if !accepted {
                logger.info(
                    """
                    a database host is not taken: the URL asks for \(url.targetSessionAttributes) and it is \
                    \(recovering ? "a standby (in recovery)" : readOnly ? "read-only" : "a primary")
                    """,
                    metadata: ["host": "\(url.host):\(url.port)"])
            }
            return accepted
        } catch {
            // Why a host is passed over: down (refused, unreachable) reads differently from a wrong
            // password or a database that does not exist, which no failover mends.
            let cause = DatabaseUnavailable.describe(error)
            let misconfigured = ["28P01", "28000", "3D000"].contains(
                (error as? PSQLError)?.serverInfo?[.sqlState] ?? "")
            logger.log(
                level: misconfigured ? .error : .info, "a database host is not taken",
                metadata: ["host": "\(url.host):\(url.port)", "cause": "\(cause)"])
            return false
        }
    }
}

/// The database in use no longer answers as the URL asks, and `to` does.
struct DatabaseMoved: Error, CustomStringConvertible {
    var to: DatabaseURL.Endpoint
    var description: String { "the database moved to \(to)" }
}

/// Looks at the database in use every second; after two misses in a row, if another host of the
/// URL answers as it asks, it ends the server's services with ``DatabaseMoved``.
struct DatabaseWatch: Service {
    let url: DatabaseURL
    let logger: Logger
    /// Told where the database moved before the stop begins (``ServiceWatchdog``).
    var watchdog: ServiceWatchdog? = nil

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            var misses = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if Task.isCancelled { return }
                if await DatabaseFailover.accepts(url, logger: logger) {
                    misses = 0
                    continue
                }
                misses += 1
                if misses == 1 {
                    logger.warning(
                        """
                        the database in use does not answer as the URL asks; another host of the URL is \
                        looked for after a second miss
                        """,
                        metadata: ["host": "\(url.host):\(url.port)"])
                }
                guard misses >= 2, let other = await DatabaseFailover.pick(url, logger: logger),
                    other != DatabaseURL.Endpoint(host: url.host, port: url.port)
                else { continue }
                watchdog?.moving(to: other)
                throw DatabaseMoved(to: other)
            }
        }
    }
}
