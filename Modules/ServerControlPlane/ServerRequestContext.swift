import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import NIOCore
import ServerDatabase
import ServerKit
import ServerTokens
import Synchronization

/// The context of every request: Hummingbird's, with the address of the connection's peer (the
/// client, or the balancer in front of it; ``ClientAddress`` tells which), and hummingbird-auth's
/// identity once an authenticator proved one.
public struct ServerRequestContext: AuthRequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// Who is calling, once an authenticator checked the request's credential: ``APIAuthentication``
    /// for a `/v1` route, the dashboard's session authenticator for a page.
    public var identity: ServerIdentity?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// What a request's credential proved, by the authenticator of its route group. The API and the
/// dashboard take different credentials (a bearer token, a session cookie), so a request carries
/// at most one of them.
public enum ServerIdentity: Sendable {
    /// The caller of a `/v1` route, by its bearer credential (``APIAuthentication``).
    case api(Caller)
    /// A person signed in to the dashboard, by their session cookie.
    case dashboard(DashboardAccess)

    /// The `/v1` caller, when the identity is one.
    public var caller: Caller? {
        guard case .api(let caller) = self else { return nil }
        return caller
    }

    /// The dashboard's signed-in person, when the identity is one.
    public var dashboardAccess: DashboardAccess? {
        guard case .dashboard(let access) = self else { return nil }
        return access
    }
}

/// The caller of a `/v1` route, as its credential proved it.
public enum Caller: Sendable {
    /// A person of the control plane (their credential's row is live).
    case person(Person)
    /// A device: an account's or an install's token (the server's own or an identity provider's),
    /// for the path's app.
    case subject(TokenClaims)
}

/// The context of every `/v1` route that needs a caller: made from the server's context only once
/// ``APIAuthentication`` put a caller in its identity, so a handler of such a route cannot run
/// without one. A route that is public (health, readiness, enrollment) is added outside this
/// group, by name.
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
        guard let caller = context.identity?.caller else {
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
