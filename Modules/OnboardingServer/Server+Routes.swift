import AsyncHTTPClient
import Hummingbird
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import ServerKit
import ServerPublishing
import ServerSyncAPI
import ServerTokens

extension OnboardingServer {
    /// The router of every feature: the request log and metrics, the public routes, then one
    /// group behind ``APIAuthentication`` to which each feature's controller adds its routes, then
    /// the composed ``ServerFeature``s (the dashboard); with the services the routes need.
    static func routes(
        _ configuration: ServerConfiguration, features: [any ServerFeature], client: PostgresClient,
        replica: ReadOnlyDatabase?,
        store: AccountStore,
        http: HTTPClient, logger: Logger
    ) async throws -> (
        router: Router<ServerRequestContext>, controlPlane: ControlPlane, freshness: InsightsFreshness,
        readiness: CommitProbe
    ) {
        let router = Router(context: ServerRequestContext.self)
        router.middlewares.add(RequestLog<ServerRequestContext>())
        router.middlewares.add(RequestMetrics<ServerRequestContext>())
        let catalogs = CatalogStore(writes: store.writes, reads: store.reads, logger: logger)
        let rollouts = GuardedRollouts(writes: store.writes, reads: store.reads, logger: logger)
        let archive = FlowArchive(writes: store.writes, reads: store.reads, logger: logger)
        let controlPlane = ControlPlane(
            writes: store.writes, reads: store.reads, tokens: configuration.tokens,
            clients: ClientAddress(trustedProxies: configuration.trustedProxies, logger: logger),
            logger: logger)
        var identityProvider: IdentityProvider?
        if let settings = configuration.identityProvider {
            let keys = JWKSource(settings.keys, http: http, logger: logger)
            identityProvider = try IdentityProvider(keys: keys, issuer: settings.issuer)
            // Read now so a bad file stops the start; a provider that does not answer yet is tried again
            // on the first token.
            do { try await keys.refresh() } catch {
                if case .file = settings.keys {
                    throw ServerConfigurationError("ONBOARDING_IDP_JWKS: \(error)")
                }
                logger.warning(
                    "the identity provider's keys were not fetched at start", metadata: ["error": "\(error)"])
            }
        }
        // The features' routes. Every route that needs a caller is in the group whose middleware
        // proves one (``APIAuthentication``), and its context carries it, so no handler of the
        // group runs without it; a route a person calls is in a group that requires their role.
        // Each controller is given the repositories its routes use, and no other store.
        var sync = SyncRoutes(
            accounts: store, figures: store, history: catalogs, controlPlane: controlPlane,
            enrollmentStore: EnrollmentStore(writes: store.writes, reads: store.reads, logger: logger),
            flowArchive: archive,
            enrollments: RateLimiter(
                limits: .init(
                    sourceBurst: Double(configuration.enrollmentsPerMinute),
                    sourceRefill: 60 / Double(configuration.enrollmentsPerMinute),
                    personBurst: 1, personRefill: 1)),
            writes: store.writes, logger: logger)
        let freshness = InsightsFreshness(
            listen: try configuration.database.connectionConfiguration(
                role: "onboarding-server insights follower"), replica: replica,
            replicaStandbyOnly: configuration.readDatabase?.targetSessionAttributes == "standby",
            logger: logger)
        sync.freshness = freshness
        let readiness = CommitProbe(
            configuration: try configuration.database.connectionConfiguration(
                role: "onboarding-server readiness"), logger: logger)
        sync.readiness = readiness
        if let replica { sync.reports = AccountStore(client: client, reads: replica, logger: logger) }
        sync.addPublicRoutes(to: router)
        let authenticated = router.group()
            .add(
                middleware: APIAuthentication(controlPlane: controlPlane, identityProvider: identityProvider)
            )
            .group(context: AuthenticatedRequestContext.self)
        sync.add(to: authenticated)
        CatalogRoutes(
            catalogs: catalogs,
            rollouts: rollouts,
            controlPlane: controlPlane, writes: store.writes,
            publicationMaxAge: configuration.publicationMaxAge,
            logger: logger
        ).add(to: authenticated)
        ControlPlaneRoutes(
            controlPlane: controlPlane, people: controlPlane.people, keys: controlPlane.keys,
            audit: controlPlane.audit, writes: store.writes
        ).add(to: authenticated)
        let parts = ServerParts(
            configuration: configuration, controlPlane: controlPlane, reports: store, catalogs: catalogs,
            drafts: CatalogDrafts(writes: store.writes, reads: store.reads, logger: logger),
            rollouts: rollouts, archive: archive, people: controlPlane.people, keys: controlPlane.keys,
            audit: controlPlane.audit,
            sessions: DashboardSessions(writes: store.writes, reads: store.reads, logger: logger),
            writes: store.writes, insightsReads: replica ?? store.reads, freshness: freshness, http: http,
            logger: logger)
        for feature in features { try feature.add(to: router, with: parts) }
        return (router, controlPlane, freshness, readiness)
    }
}
