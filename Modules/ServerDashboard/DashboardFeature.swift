import Hummingbird
import OnboardingServer
import ServerControlPlane
import ServerInsights

/// The dashboard and its studio as a feature of the server (``ServerFeature``): `/dashboard` and
/// everything under it, on the server's repositories, its control plane and the insights' reads.
public struct DashboardFeature: ServerFeature {
    public init() {}

    public func add(to router: Router<ServerRequestContext>, with parts: ServerParts) throws {
        Dashboard(
            reports: parts.reports, catalogs: parts.catalogs, drafts: parts.drafts, rollouts: parts.rollouts,
            archive: parts.archive, people: parts.people, keys: parts.keys, auditTrail: parts.audit,
            writes: parts.writes,
            insights: Insights(reads: parts.insightsReads, logger: parts.logger),
            controlPlane: parts.controlPlane,
            signIns: SignIns(
                controlPlane: parts.controlPlane, people: parts.people, sessions: parts.sessions,
                auditTrail: parts.audit,
                provider: parts.configuration.oidc.map {
                    OIDCSignIn(configuration: $0, http: parts.http, logger: parts.logger)
                }, logger: parts.logger),
            publicOrigin: parts.configuration.publicURL,
            publicationMaxAge: parts.configuration.publicationMaxAge,
            freshness: parts.freshness, logger: parts.logger
        ).add(to: router)
    }
}
