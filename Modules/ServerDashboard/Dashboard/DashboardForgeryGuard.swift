import Foundation
import HTTPTypes
import Hummingbird
import OnboardingServer
import ServerControlPlane
import ServerKit

/// Every request that may change something in the dashboard (any method but GET and HEAD) comes
/// from a page of this dashboard, or nothing is done: it is the middleware of the dashboard's route
/// group (``Dashboard/add(to:)``), so a route added to the group tomorrow is covered without its
/// handler doing anything.
///
/// Two checks, both needed:
/// - **Same origin.** A browser says where a request came from in `Sec-Fetch-Site` (which must be
///   `same-origin`: a sibling subdomain is `same-site`, which `SameSite` cookies do not stop) and
///   in `Origin` (which must be this dashboard's). A client that sends neither (not a browser, so
///   not a browser's victim) still needs the token.
/// - **The session's anti-forgery token**, the form field `form_token`: derived from the session
///   cookie's secret (``DashboardSessions/derive(_:_:)``), so only a page this server rendered for
///   that session holds it. A request without a session cookie has none and is refused too.
///
/// The sign-in form is the one form posted before a session exists: it is not in the group and
/// checks its own token, tied to its own cookie, because a refusal there renders a fresh form and
/// counts against the source's limit of failures (``Dashboard/addSignIn(to:)``).
struct DashboardForgeryGuard: RouterMiddleware {
    typealias Context = ServerRequestContext

    /// The dashboard's address as browsers reach it, when configured (`ONBOARDING_PUBLIC_URL`).
    let publicOrigin: String?

    static let refusal = "This change did not come from a page of this dashboard, so nothing was done."

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.method != .get, request.method != .head else { return try await next(request, context) }
        var request = request
        let fields: [String: String]
        do {
            fields = try await Dashboard.form(&request)
        } catch let error as Dashboard.DashboardError {
            return Self.refused(error)
        }
        let cookies = Dashboard.cookieValues(Dashboard.cookieName(Dashboard.cookie, request), request)
        guard Dashboard.isSameOrigin(request, publicOrigin: publicOrigin),
            cookies.contains(where: { DashboardSessions.matches(fields["form_token"], "form", $0) })
        else {
            return Self.refused(Dashboard.DashboardError(.forbidden, Self.refusal))
        }
        // The body was read to find the token: the handler reads the same bytes again.
        return try await next(request, context)
    }

    private static func refused(_ error: Dashboard.DashboardError) -> Response {
        RequestOutcome.record(code: "refused")
        return Dashboard.html(Dashboard.messagePage(error.title, error.message), status: error.status)
    }
}
