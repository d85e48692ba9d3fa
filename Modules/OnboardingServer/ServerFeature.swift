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

/// What the server made that a feature's routes work with: its configuration, its stores and
/// pools, the insights' freshness and the outgoing HTTP client.
public struct ServerParts: Sendable {
    package let configuration: ServerConfiguration
    package let store: AccountStore
    package let catalogs: CatalogStore
    package let controlPlane: ControlPlane
    /// Where the insights' figures are read (a replica's pool when there is one).
    package let insightsReads: ReadOnlyDatabase
    package let freshness: InsightsFreshness
    package let http: HTTPClient
    package let logger: Logger
}
