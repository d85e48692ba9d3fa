import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServerDatabase
import ServerKit
import ServerTokens
import Synchronization

/// The context of every request: Hummingbird's, with the address of the connection's peer (the
/// client, or the balancer in front of it; ``ClientAddress`` tells which).
public struct ServerRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// Who is calling, once ``APIAuthentication`` checked the request's credential.
    package var caller: Caller?
    /// Who is signed in to the dashboard, once the dashboard's session middleware opened the
    /// request's session cookie.
    public var dashboardAccess: DashboardAccess?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// The caller of a `/v1` route, as its credential proved it.
package enum Caller: Sendable {
    /// A person of the control plane (their credential's row is live).
    case person(Person)
    /// A device: an account's or an install's token (the server's own or an identity provider's),
    /// for the path's app.
    case subject(TokenClaims)
}

/// The context of every `/v1` route that needs a caller: made from the server's context only once
/// ``APIAuthentication`` put a caller in it, so a handler of such a route cannot run without one
/// (the pattern of hummingbird-auth's authenticated contexts). A route that is public (health,
/// readiness, enrollment) is added outside this group, by name.
package struct AuthenticatedRequestContext: ChildRequestContext, RemoteAddressRequestContext {
    package typealias ParentContext = ServerRequestContext
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?
    package let caller: Caller
    /// The person of the caller, as the actor of the audit trail, once the route group's
    /// ``RequiredRole`` found that they hold its role in the route's app.
    package var staff: Actor?

    package init(context: ServerRequestContext) throws {
        // Reached only when a route of the group was added without the middleware in front.
        guard let caller = context.caller else {
            throw HTTPError(.internalServerError, message: "this route was added without its authentication")
        }
        coreContext = context.coreContext
        remoteAddress = context.remoteAddress
        self.caller = caller
    }

    /// The person calling, who holds the route's role in its app: a handler of a route that a
    /// person calls reads them here, so a route added without its ``RequiredRole`` fails rather
    /// than acts for someone who may not.
    package func actor() throws -> Actor {
        guard let staff else {
            throw HTTPError(.internalServerError, message: "this route was added without its role")
        }
        return staff
    }
}
