import AsyncHTTPClient
import Hummingbird
import Logging
import ServerControlPlane
import ServerDatabase
import ServerKit
import ServerPublishing
import ServerSyncAPI

/// A part of the server beyond the API, in a module of its own (the dashboard and its studio:
/// `ServerDashboard`): given what the server made, it adds its routes, with their middleware, to
/// the router. The executable composes the features, so this module names none of them, as a
/// Hummingbird application composes its route collections.
public protocol ServerFeature: Sendable {
    func add(to router: Router<ServerRequestContext>, with parts: ServerParts) throws
}

/// What the server made that a feature's routes work with: its configuration, the repositories
/// (what a feature may ask of storage, each module's `Repositories.swift`), the insights' pool and
/// freshness and the outgoing HTTP client. No store: a feature reaches the database only through
/// these, as the API's controllers do.
public struct ServerParts: Sendable {
    package let configuration: ServerConfiguration
    /// Who calls (authentication, roles, the sign-in limiter) and the server's signer: not how a
    /// feature reaches storage.
    package let controlPlane: ControlPlane
    /// An app's figures on the primary: experiments' arms, facts set apart as unplanned.
    package let reports: any ReportRepository
    package let catalogs: any CatalogRepository
    package let drafts: any DraftRepository
    package let rollouts: any GuardedRolloutRepository
    package let archive: any FlowArchiveRepository
    package let people: any PeopleRepository
    package let keys: any PublicationKeyRepository
    package let audit: any AuditRepository
    package let sessions: any SessionRepository
    /// Where a form's answer is kept under its idempotency key, in the write's transaction.
    package let writes: WritableDatabase
    /// Where the insights' figures are read (a replica's pool when there is one).
    package let insightsReads: ReadOnlyDatabase
    package let freshness: InsightsFreshness
    package let http: HTTPClient
    package let logger: Logger
}
