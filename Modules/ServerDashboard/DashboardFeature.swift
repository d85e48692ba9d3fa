import Hummingbird
import OnboardingServer
import ServerControlPlane
import ServerInsights

/// The dashboard and its studio as a feature of the server (``ServerFeature``): `/dashboard` and
/// everything under it, on the server's stores, its control plane and the insights' reads.
public struct DashboardFeature: ServerFeature {
    public init() {}

    public func add(to router: Router<ServerRequestContext>, with parts: ServerParts) throws {
        let store = parts.store
        Dashboard(
            store: store, catalogs: parts.catalogs,
            insights: Insights(reads: parts.insightsReads, logger: parts.logger),
            sessions: DashboardSessions(writes: store.writes, reads: store.reads, logger: parts.logger),
            controlPlane: parts.controlPlane,
            oidc: parts.configuration.oidc.map {
                DashboardOIDC(configuration: $0, http: parts.http, logger: parts.logger)
            },
            publicOrigin: parts.configuration.publicURL,
            publicationMaxAge: parts.configuration.publicationMaxAge,
            freshness: parts.freshness, logger: parts.logger
        ).add(to: router)
    }
}
