import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import NIOCore
import OnboardingServer
import ServerControlPlane

// The dashboard's route groups, outermost first (``Dashboard/add(to:)``):
//
// 1. ``DashboardPages``: whatever a page throws becomes an HTML page with its status.
// 2. ``DashboardForgeryGuard``: a change comes from a page of this dashboard, or nothing is done.
// 3. ``DashboardSessionAuthenticator``: the request's session is opened and its person put in the
//    context's identity (``DashboardRequestContext``), or the answer is a redirect to sign in.
// 4. ``DashboardRoleGuard``: the person holds the group's role in the path's app.
//
// Each is a group's middleware, so a route added to a group is covered without its handler doing
// anything; the route-table test (`RouteTableSecurityTests`) walks every route and fails when any
// one of them is missing.

/// Renders what a dashboard page throws: a refusal (``Dashboard/DashboardError``) as a page with its
/// status, a database that does not answer as a 503 page, anything else as a 500 page.
struct DashboardPages: RouterMiddleware {
    typealias Context = ServerRequestContext
    let dashboard: Dashboard

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        await dashboard.page { try await next(request, context) }
    }
}

/// Opens the request's session (hummingbird-auth's authenticator): with a live one, its person,
/// with their roles as they are now, goes in the context's identity for the group's pages. Every
/// page behind it needs a session, so where hummingbird-auth's passes a request without one on,
/// this one answers with a redirect to sign in (and clears a cookie that opened nothing).
struct DashboardSessionAuthenticator: AuthenticatorMiddleware {
    typealias Context = ServerRequestContext
    typealias Identity = ServerIdentity
    let dashboard: Dashboard

    func authenticate(request: Request, context: Context) async throws -> ServerIdentity? {
        try await dashboard.access(request).map { .dashboard($0) }
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let identity = try await authenticate(request: request, context: context) else {
            var response = Dashboard.redirect("/dashboard/sign-in")
            if Dashboard.cookieValue(Dashboard.cookie, request) != nil {
                response.setCookie(Dashboard.clearing(Dashboard.cookie, request))
            }
            return response
        }
        var context = context
        context.identity = identity
        // A page reads the aggregates as they are and says how fresh they are: no page writes on
        // the primary (the catch-up job counts) or waits for a count.
        return try await Dashboard.$freshnessNotice.withValue(dashboard.freshness?.notice()) {
            try await next(request, context)
        }
    }
}

/// The context of every page behind a session: made only once ``DashboardSessionAuthenticator`` put
/// the person in the request's identity, so a page of the group cannot run without one.
struct DashboardRequestContext: ChildRequestContext, RemoteAddressRequestContext {
    typealias ParentContext = ServerRequestContext
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    let access: Dashboard.Access
    /// The path's app, once ``DashboardRoleGuard`` found that the person holds the group's role
    /// there.
    fileprivate(set) var permittedApp: String?

    init(context: ServerRequestContext) throws {
        // Reached only when a route of the group was added without the middleware in front.
        guard let access = context.identity?.dashboardAccess else {
            throw HTTPError(.internalServerError, message: "this page was added without its session check")
        }
        coreContext = context.coreContext
        remoteAddress = context.remoteAddress
        self.access = access
    }

    /// The path's app, which the person holds the group's role in. A page with an app in its path
    /// reads it here, so a page added to a group without a ``DashboardRoleGuard`` fails rather than
    /// shows an app to someone without a role in it.
    func app() throws -> String {
        guard let permittedApp else {
            throw HTTPError(.internalServerError, message: "this page was added without its role check")
        }
        return permittedApp
    }
}

/// Refuses a request whose person does not hold `role` (or one above it) in the path's app, with a
/// page that says which role they hold and which the page needs.
struct DashboardRoleGuard: RouterMiddleware {
    typealias Context = DashboardRequestContext
    let role: Role

    init(_ role: Role) { self.role = role }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.permittedApp = try Dashboard.name(context, "app", access: context.access, role: role)
        return try await next(request, context)
    }
}

extension RouterMethods<DashboardRequestContext> {
    /// A group of this one whose pages need `role` in the path's app (``DashboardRoleGuard``).
    func requiring(_ role: Role) -> RouterGroup<DashboardRequestContext> {
        group().add(middleware: DashboardRoleGuard(role))
    }
}
