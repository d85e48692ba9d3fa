import Foundation
import HTTPTypes
import Hummingbird
import InsightsPages
import NIOCore
import OnboardingServer
import ServerControlPlane
import ServerDatabase
import ServerKit

/// The dashboard's sign-in and sign-out pages (Docs/Security.md): the forms, their anti-forgery
/// tokens and cookies, and the origin check of a change; what a sign-in may do, its audit rows and
/// its limit are ``SignIns``' (ServerControlPlane). Every request that changes something must come
/// from this dashboard's own pages (`Sec-Fetch-Site`, `Origin`).
extension Dashboard {
    /// The sign-in form's cookie: a random secret the form's anti-forgery token is derived from.
    static let signInCookie = "onboarding_sign_in"

    func addSignIn(to router: Router<ServerRequestContext>) {
        router.get("/dashboard/sign-in") { request, _ in
            await page {
                if try await access(request) != nil { return Self.redirect("/dashboard") }
                return signInPage(request, message: nil, status: .ok)
            }
        }
        router.post("/dashboard/sign-in") { request, context in
            await page { try await signIn(request, context) }
        }
        if signIns.offersProvider {
            router.get("/dashboard/sign-in/oidc") { request, context in
                await page { try await startOIDC(request, context) }
            }
            router.get("/dashboard/sign-in/oidc/callback") { request, context in
                await page { try await finishOIDC(request, context) }
            }
        }
    }

    /// Sign-out, in the dashboard's guarded group: a forged one is refused there, and changes
    /// nothing (the cookie stays, the session goes on); without a session, the group's answer is a
    /// redirect to sign in.
    func addSignOut(to router: RouterGroup<DashboardRequestContext>) {
        router.post("/dashboard/sign-out") { request, context in
            try await signIns.signOut(
                context.access, source: controlPlane.clients.of(request, context), now: Date())
            var response = Self.redirect("/dashboard/sign-in")
            response.setCookie(Self.clearing(Self.cookie, request))
            return response
        }
    }

    // MARK: - With a credential

    private func signIn(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        var request = request
        let source = controlPlane.clients.of(request, context)
        guard isSameOrigin(request) else {
            throw Self.page(try await signIns.refuseCrossSite(source: source, now: Date()))
        }
        let fields = try await Self.form(&request)
        // Every cookie of that name: one tossed in from a sibling subdomain (for the whole site)
        // must not stop the form's own from matching.
        guard
            Self.cookieValues(Self.cookieName(Self.signInCookie, request), request).contains(where: {
                DashboardSessions.matches(fields["form_token"], "sign-in", $0)
            })
        else {
            return signInPage(
                request, message: "The sign-in form had expired; here is a new one.", status: .forbidden)
        }
        let credential = (fields["credential"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            return signedIn(
                try await signIns.withCredential(credential, source: source, now: Date()), request)
        } catch let refusal as SignIns.Refusal where refusal.asksAgain {
            return signInPage(request, message: refusal.message, status: refusal.status)
        } catch let refusal as SignIns.Refusal {
            throw Self.page(refusal)
        }
    }

    /// Sends a person whose session just opened in, with its cookie (the sign-in form's cleared).
    private func signedIn(_ session: DashboardSessions.Session, _ request: Request) -> Response {
        var response = Self.redirect("/dashboard")
        let maxAge = Int(session.expiresAt - Date().timeIntervalSince1970)
        response.setCookie(Self.makeCookie(Self.cookie, value: session.cookie, maxAge: maxAge, request))
        response.headers.append(
            HTTPField(name: .setCookie, value: Self.clearing(Self.signInCookie, request).description))
        return response
    }

    /// A refused sign-in as a page of its own.
    private static func page(_ refusal: SignIns.Refusal) -> DashboardError {
        var error = DashboardError(refusal.status, refusal.message)
        error.retryAfter = refusal.retryAfter
        return error
    }

    /// The sign-in page with a fresh form secret (its cookie) and the token derived from it.
    func signInPage(_ request: Request, message: String?, status: HTTPResponse.Status) -> Response {
        let secret = OIDCSignIn.random()
        var sections: [InsightsPage.Section] = []
        if let message { sections.append(.text(message)) }
        sections.append(
            .form(
                .init(
                    action: "/dashboard/sign-in", method: "post",
                    fields: [
                        .init(
                            name: "form_token", label: "", type: "hidden",
                            value: DashboardSessions.derive("sign-in", secret)),
                        .init(name: "credential", label: "Your credential", type: "password"),
                    ], submit: "Sign in")))
        // A link, not a form: the page's `form-action 'self'` would stop a form's redirect to the provider.
        if signIns.offersProvider {
            sections.append(
                .links("Or", [.init("Sign in with the identity provider", href: "/dashboard/sign-in/oidc")]))
        }
        sections.append(
            .text(
                """
                Your credential is exchanged for a session cookie of at most 8 hours; it is not kept. \
                An owner of an app, or an operator, gives you one.
                """
            ))
        var response = Self.html(
            InsightsPage(title: "Sign in", sections: sections, footer: Self.footer), status: status)
        response.setCookie(Self.makeCookie(Self.signInCookie, value: secret, maxAge: 3600, request))
        return response
    }

    // MARK: - Through the identity provider

    private func startOIDC(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let start: OIDCSignIn.Start
        do { start = try await signIns.startWithProvider(now: Date()) } catch let refusal as SignIns.Refusal {
            throw Self.page(refusal)
        }
        var response = Self.redirect(start.location)
        // Lax: the provider's redirect back is a top-level navigation from its site.
        response.setCookie(
            Self.makeCookie(
                OIDCSignIn.cookie, value: start.cookie, maxAge: Int(OIDCSignIn.flowLifetime),
                path: "/dashboard/sign-in", sameSite: .lax, request))
        return response
    }

    private func finishOIDC(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        let session: DashboardSessions.Session
        do {
            session = try await signIns.finishWithProvider(
                code: query.get("code"), state: query.get("state"), error: query.get("error"),
                cookie: Self.cookieValue(OIDCSignIn.cookie, request),
                source: controlPlane.clients.of(request, context), now: Date())
        } catch let refusal as SignIns.Refusal {
            throw Self.page(refusal)
        }
        var response = signedIn(session, request)
        response.headers.append(
            HTTPField(
                name: .setCookie,
                value: Self.clearing(OIDCSignIn.cookie, request, path: "/dashboard/sign-in").description))
        return response
    }

    // MARK: - Where a request came from

    /// Whether a request that changes something comes from a page of this dashboard: a browser
    /// says where a request came from in `Sec-Fetch-Site` (only `same-origin` is accepted; a
    /// sibling subdomain is `same-site`, which `SameSite` cookies do not stop) and in `Origin`
    /// (it must be this dashboard's). A client that sends neither (not a browser, so not a
    /// browser's victim) still needs the form's token.
    func isSameOrigin(_ request: Request) -> Bool { Self.isSameOrigin(request, publicOrigin: publicOrigin) }

    static func isSameOrigin(_ request: Request, publicOrigin: String?) -> Bool {
        if let site = request.headers[.secFetchSite], site != "same-origin" {
            return false
        }
        if let origin = request.headers[.origin] { return origin == (publicOrigin ?? ownOrigin(request)) }
        return true
    }

    /// `http(s)://HOST[:PORT]` as the browser that sent `request` addressed it.
    static func ownOrigin(_ request: Request) -> String {
        (isSecure(request) ? "https://" : "http://") + (request.head.authority ?? "")
    }

    /// Every value the request's `Cookie` headers give `name` (a browser sends two of one name when
    /// a host's own and a parent domain's are both set).
    static func cookieValues(_ name: String, _ request: Request) -> [String] {
        request.headers[values: .cookie].flatMap { header in
            header.split(separator: ";").compactMap { pair -> String? in
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                return parts.count == 2 && parts[0] == name ? parts[1] : nil
            }
        }
    }
}
