import AccountSync
import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import Prometheus
import ServerControlPlane
import ServerDatabase
import ServerInsights
import ServerKit
import ServerPublishing
import ServerPushQueue
import ServerSyncAPI
import ServerTokens
import ServiceLifecycle

/// The account server: Hummingbird over PostgreSQL. One process per core behind a load balancer;
/// PostgreSQL holds everything (see Docs/Server.md).
public enum OnboardingServer {
    /// Runs until SIGTERM or SIGINT, then finishes the requests in flight and closes the
    /// database connections (swift-service-lifecycle's graceful shutdown).
    ///
    /// The schema is migrated first; while PostgreSQL does not answer, start-up waits for it (up to
    /// `waitForDatabase` seconds), and once running the connection pool reconnects by itself after
    /// PostgreSQL restarts.
    ///
    /// `features` add their routes beside the API's (the dashboard, `ServerDashboard`): the
    /// executable composes them, so this module knows none by name.
    public static func run(
        _ configuration: ServerConfiguration, features: [any ServerFeature] = [], logger: Logger,
        waitForDatabase: Int = 30
    ) async throws {
        // Metrics made before the metrics system is bootstrapped would report nowhere: first.
        ServerMetrics.touch()
        PushMetrics.touch()
        // Identity providers' keys and tokens, fetched over https.
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        var configuration = configuration
        // A multi-host DATABASE_URL is followed (``DatabaseFailover``): the services start on the
        // host that answers as it asks, and start again on another when it stops answering so.
        let following = configuration.database.hosts.count > 1
        // Every stop bounded, whatever a service does (``ServiceWatchdog``).
        let watchdog = ServiceWatchdog(limit: stopLimit)
        do {
            while true {
                if following {
                    var picked: DatabaseURL.Endpoint?
                    for attempt in 0..<max(1, waitForDatabase * 2) {
                        picked = await DatabaseFailover.pick(configuration.database, logger: logger)
                        if picked != nil { break }
                        if attempt == 0 {
                            logger.warning(
                                "waiting for a database host that answers as the URL asks",
                                metadata: ["database": "\(configuration.database)"])
                        }
                        try await Task.sleep(for: .milliseconds(500))
                    }
                    if let picked { configuration.database = configuration.database.using(picked) }
                }
                let running = configuration
                let services = Task {
                    try await runServices(
                        running, features: features, http: http, logger: logger,
                        waitForDatabase: waitForDatabase,
                        watchdog: watchdog, watching: following)
                }
                switch await watchdog.outcome(of: services) {
                case .finished(.success):
                    break
                case .finished(.failure(let moved as DatabaseMoved)):
                    logger.warning(
                        "the database moved: starting again on it", metadata: ["to": "\(moved.to)"])
                    continue
                case .finished(.failure(let error)):
                    throw error
                case .stuck(.moved(let endpoint), let stuck):
                    logger.error(
                        """
                        the services did not stop within \(stopLimit) of the database's move: \
                        left to end by themselves; the database moved: starting again on it
                        """,
                        metadata: ["to": "\(endpoint)", "still_running": "\(stuck.joined(separator: ", "))"])
                    continue
                case .stuck(.shutdown, let stuck):
                    logger.critical(
                        """
                        the services did not stop within \(stopLimit) of the shutdown: \
                        the process ends without them
                        """,
                        metadata: ["still_running": "\(stuck.joined(separator: ", "))"])
                    throw ServicesDidNotStop(running: stuck)
                }
                break
            }
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    /// The server on one database host as one Hummingbird application: the router every feature
    /// adds its routes to, and the services the routes need (the pools, the push queue, the
    /// background jobs, the readiness probe, the metrics listener), started in order and stopped
    /// in reverse after the HTTP server. The schema is migrated before it listens (waiting up to
    /// `waitForDatabase` seconds for PostgreSQL). ``run(_:features:logger:waitForDatabase:)`` runs
    /// it under its watchdog and builds it again on another host after a failover; run alone
    /// (`runService()`, or as a service of a group), it serves one host until shutdown.
    public static func buildApplication(
        _ configuration: ServerConfiguration, features: [any ServerFeature] = [], http: HTTPClient = .shared,
        logger: Logger, waitForDatabase: Int = 30
    ) async throws -> some ApplicationProtocol {
        try await application(
            configuration, features: features, http: http, logger: logger, waitForDatabase: waitForDatabase,
            watchdog: nil)
    }

    /// The pools and the HTTP server on one database host, until shutdown (or until the watch finds
    /// that the database moved, when `watching`).
    private static func runServices(
        _ configuration: ServerConfiguration, features: [any ServerFeature], http: HTTPClient, logger: Logger,
        waitForDatabase: Int,
        watchdog: ServiceWatchdog,
        watching: Bool
    ) async throws {
        let app = try await application(
            configuration, features: features, http: http, logger: logger, waitForDatabase: waitForDatabase,
            watchdog: watchdog)
        logger.info(
            "starting",
            metadata: [
                "listen": "\(configuration.host):\(configuration.port)",
                "database": "\(configuration.database)",
            ])
        // The watch runs beside the application, not inside it: when it finds the database moved,
        // the application is shut down gracefully (the listener closed first, every accepted
        // connection answered and closed). Cancelling it instead, as an inner service's error
        // does, can drop a connection NIO accepted but nobody served yet, and NIO traps on that
        // ("Deinited NIOAsyncWriter without calling finish()", apple/swift-nio#2637), ending the
        // process.
        var group: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: watchdog.tracked("the HTTP server", app))
        ]
        if watching {
            group.append(
                .init(
                    service: watchdog.tracked(
                        "the database watch",
                        DatabaseWatch(url: configuration.database, logger: logger, watchdog: watchdog)),
                    failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        // Last, so the first told of a stop: the watchdog's bound starts then.
        group.append(.init(service: watchdog.sentinel))
        // A shutdown (SIGTERM, or the database moved) lets requests in flight finish for up to
        // ``gracefulShutdownLimit``, then cancels what is left: the listener is closed by then, so
        // nothing accepted is left unserved, and a connection still open (behind nginx, one held a
        // server's move for 15 s and more with no request on it logged) cannot hold the server
        // from starting again on the new primary.
        var groupConfiguration = ServiceGroupConfiguration(
            services: group, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = gracefulShutdownLimit
        try await ServiceGroup(configuration: groupConfiguration).run()
    }

    /// ``buildApplication(_:features:http:logger:waitForDatabase:)``, each service tracked by
    /// `watchdog` when there is one.
    private static func application(
        _ configuration: ServerConfiguration, features: [any ServerFeature], http: HTTPClient, logger: Logger,
        waitForDatabase: Int, watchdog: ServiceWatchdog?
    ) async throws -> Application<RouterResponder<ServerRequestContext>> {
        // The pool logs every failed connection attempt at info; while PostgreSQL is down that is
        // a line per attempt, so only its warnings and errors are kept.
        var poolLogger = logger
        poolLogger.logLevel = max(logger.logLevel, .warning)
        // The pools, each with its name in pg_stat_activity: the push writers' own, whose
        // statements PostgreSQL cancels after `pushStatementTimeout` (a push a writer took is
        // answered within a bound, with what its transaction did); the writes of every other
        // request and the insights job; and the reads, on connections that cannot write (where a
        // read may be abandoned at its deadline).
        let pushWriters = configuration.pushWriters
        let readConnections = max(2, (configuration.maximumConnections - pushWriters) / 2)
        let writeConnections = max(2, configuration.maximumConnections - pushWriters - readConnections)
        let client = PostgresClient(
            configuration: configuration.database.clientConfiguration(maximumConnections: writeConnections),
            backgroundLogger: poolLogger)
        var pushConfiguration = configuration.database.clientConfiguration(
            maximumConnections: pushWriters, role: "onboarding-server push writer")
        // PostgreSQL's own bounds on a push: its statement, and its wait for a lock (a migration's,
        // an operator's), both within the push's deadline (``PushQueue``).
        pushConfiguration.options.additionalStartupParameters += [
            ("statement_timeout", String(configuration.pushStatementTimeoutMilliseconds)),
            ("lock_timeout", String(configuration.pushStatementTimeoutMilliseconds)),
        ]
        let pushClient = PostgresClient(configuration: pushConfiguration, backgroundLogger: poolLogger)
        let reads = ReadOnlyDatabase(
            configuration: configuration.database.clientConfiguration(
                maximumConnections: readConnections, role: "onboarding-server reads"),
            name: "primary", backgroundLogger: poolLogger, logger: logger)
        // The dashboard's figures, from a replica when one is configured: a pool for each host of
        // its URL, tried in order. A host that does not answer as the URL asks (dead, or with
        // `target_session_attrs=standby` a primary now) is passed over for the next, and the last
        // for the primary, until it answers again (the follower, InsightsFreshness, notes each
        // answer). So after a failover the reads find the node that became the standby.
        let replica = configuration.readDatabase.map { url in
            var next = reads
            for endpoint in url.hosts.reversed() {
                var host = ReadOnlyDatabase(
                    configuration: url.using(endpoint).clientConfiguration(
                        maximumConnections: max(2, configuration.maximumConnections / 2),
                        role: "onboarding-server replica reads"),
                    name: url.hosts.count == 1 ? "replica" : "replica \(endpoint)",
                    backgroundLogger: poolLogger, logger: logger)
                host.fallback = .init(
                    next, while: ReplicaHealth(answeringAtFirst: url.targetSessionAttributes != "standby"))
                next = host
            }
            return next
        }
        var store = AccountStore(
            client: client, reads: reads, logger: logger, batchingPushes: pushWriters, pushClient: pushClient,
            pushQueue: configuration.pushQueue,
            pushStatementLimit: .milliseconds(configuration.pushStatementTimeoutMilliseconds))
        store.budgetFamily = configuration.budgetFamily
        return try await application(
            configuration, features: features, client: client, pushClient: pushClient, replica: replica,
            store: store, http: http, logger: logger, waitForDatabase: waitForDatabase, watchdog: watchdog)
    }

    /// The server's routes over `store`'s pools (and `replica`'s, for the dashboard's figures), as
    /// ``run(_:logger:waitForDatabase:)`` serves them, with the services the routes need running
    /// beside them (the readiness probe, whose connection is closed at the services' shutdown):
    /// for tests that send requests in process, as `Application(router:services:)`, whose test
    /// client runs the services and stops them after.
    public static func router(
        _ configuration: ServerConfiguration, features: [any ServerFeature] = [], client: PostgresClient,
        replica: ReadOnlyDatabase? = nil, store: AccountStore, http: HTTPClient, logger: Logger
    ) async throws -> (router: Router<ServerRequestContext>, services: [any Service]) {
        let built = try await routes(
            configuration, features: features, client: client, replica: replica, store: store, http: http,
            logger: logger)
        return (built.router, [built.readiness])
    }

    private static func application(
        _ configuration: ServerConfiguration, features: [any ServerFeature], client: PostgresClient,
        pushClient: PostgresClient,
        replica: ReadOnlyDatabase?,
        store: AccountStore, http: HTTPClient, logger: Logger, waitForDatabase: Int,
        watchdog: ServiceWatchdog?
    ) async throws -> Application<RouterResponder<ServerRequestContext>> {
        let (router, controlPlane, freshness, readiness) = try await routes(
            configuration, features: features, client: client, replica: replica, store: store, http: http,
            logger: logger)
        // Started in this order and stopped in the reverse, after the HTTP server: the push queue
        // ends before the pools it writes through.
        let writesPool = PoolService(client)
        var services: [(String, any Service)] = [
            ("the writes' pool", writesPool), ("the push writers' pool", PoolService(pushClient)),
            ("the reads' pool", PoolService(store.reads.client)),
        ]
        for (host, _) in replica?.chain.dropLast() ?? [] {
            services.append(("the \(host.name) pool", PoolService(host.client)))
        }
        // Stopped after the HTTP server, so no request starts a probe once it closed.
        services.append(("the readiness probe", readiness))
        // The background jobs start once the schema is migrated (``SchemaReady``).
        let ready = SchemaReady()
        services.append(
            (
                "the insights catch-up",
                InsightsCatchUp(
                    counting: store.insightsCounting, interval: configuration.insightsInterval, ready: ready,
                    requests: freshness.countRequests, logger: logger)
            ))
        services.append(("the insights follower", freshness))
        services.append(
            ("the idempotency expiry", IdempotencyExpiry(writes: store.writes, ready: ready, logger: logger)))
        services.append(
            (
                "the held facts' admission",
                HeldFactsAdmission(
                    writes: store.writes, reads: store.reads, ready: ready, interval: .seconds(5),
                    logger: logger)
            ))
        if let batcher = store.batcher {
            services.append(("the push queue", PushQueueService(batcher: batcher)))
        }
        services.append(
            (
                "the rollout guard",
                RolloutGuard(
                    configuration: try configuration.database.connectionConfiguration(
                        role:
                            """
                            onboarding-server rollout guard (pid \(ProcessInfo.processInfo.processIdentifier)\
                            )
                            """
                    ),
                    interval: configuration.rolloutGuardInterval, ready: ready, logger: logger)
            ))
        if let days = configuration.retainFactsDays {
            services.append(
                (
                    "the fact retention",
                    FactRetentionJob(
                        retention: FactRetention(client: client, logger: logger), days: days, logger: logger)
                ))
        }
        ServerMetrics.touch()
        PushMetrics.touch()
        if let port = configuration.metricsPort {
            let registry = ServerMetrics.registry
            services.append(
                (
                    "the metrics listener",
                    ServerMetrics.application(
                        registry: registry, host: configuration.metricsHost, port: port, logger: logger)
                ))
            logger.info(
                "metrics", metadata: ["listen": "\(configuration.metricsHost):\(port)", "path": "/metrics"])
        }
        let inFlight = RequestsInFlight(
            limit: configuration.requestsInFlightLimit, steady: configuration.steadyRequestsInFlightLimit,
            logger: logger)
        var app = Application(
            router: router,
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [RequestAdmission(requests: inFlight)],
                    idleTimeout: .nanoseconds(configuration.clientIdleTimeout.nanoseconds))),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: "onboarding-server"),
            services: services.map { named, service in watchdog?.tracked(named, service) ?? service },
            logger: logger)
        let keyIDs = configuration.tokens.keys.map(\.id)
        app.beforeServerStarts {
            await writesPool.waitUntilRunning()
            try await migrate(client, logger: logger, waitForDatabase: waitForDatabase)
            let moved = try await store.pseudonymizeCutoffs(with: configuration.tokens)
            if moved > 0 {
                logger.info("token cut-offs kept under pseudonyms", metadata: ["moved": "\(moved)"])
            }
            ready.open()
            // A change of the key ring (a key added or dropped) is an act on every token: audited once.
            try await controlPlane.audit.recordKeyRing(keyIDs, at: Date().timeIntervalSince1970)
        }
        return app
    }

    /// How long a shutdown waits for requests in flight: every request the server answers is
    /// bounded well within it (reads by ``APIAnswering/requestDeadline``, pushes by the batcher's wait and
    /// the writers' `statement_timeout`).
    static let gracefulShutdownLimit: Duration = .seconds(5)

    /// How long a stop may take in all before the watchdog gives up on the services still running:
    /// the graceful limit, then a second for the cancelled ones to end.
    static let stopLimit: Duration = gracefulShutdownLimit + .seconds(1)

    /// Migrates the schema once PostgreSQL answers, waiting at most `waitForDatabase` seconds for
    /// it to (``PostgresClient/waitUntilAnswering(within:logger:)``). The migrations themselves are
    /// not bounded (one may rewrite a large table).
    static func migrate(_ client: PostgresClient, logger: Logger, waitForDatabase: Int) async throws {
        try await client.waitUntilAnswering(within: .seconds(waitForDatabase), logger: logger)
        var attempt = 0
        while true {
            do {
                try await PostgresSchema.migrate(client, logger: logger)
                return
            } catch {
                attempt += 1
                if attempt > waitForDatabase * 2 { throw error }
                if attempt == 1 {
                    logger.warning(
                        "the migrations failed; trying again",
                        metadata: ["cause": "\(DatabaseUnavailable.describe(error))"])
                }
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }
}
