import Foundation
import HTTPTypes
import Hummingbird
import InsightsPages
import NIOCore
import OnboardingServer
import ServerControlPlane
import ServerDatabase
import ServerKit

/// Signing in and out of the dashboard (Docs/Security.md): with a person's credential, or through
/// the identity provider. Every form carries an anti-forgery token, and every request that changes
/// something must come from this dashboard's own pages (`Sec-Fetch-Site`, `Origin`).
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
        if oidc != nil {
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
            let access = context.access
            let audit = AuditLog.Entry(
                at: Date().timeIntervalSince1970,
                actor: Actor(
                    name: access.person.name, source: controlPlane.clients.of(request, context),
                    person: access.person),
                app: nil, action: "sign-out")
            try await (sessions.close(access.session.cookie, audit: audit))
            var response = Self.redirect("/dashboard/sign-in")
            response.setCookie(Self.clearing(Self.cookie, request))
            return response
        }
    }

    // MARK: - With a credential

    private func signIn(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        var request = request
        let source = controlPlane.clients.of(request, context)
        let now = Date()
        // Login CSRF: a page elsewhere posting its own credential into this browser is refused. The
        // refusal counts against the source, so it cannot flood the audit trail either.
        guard isSameOrigin(request) else {
            if let wait = controlPlane.limiter.retryAfter(source: source, now: now.timeIntervalSince1970) {
                throw limitedPage(wait)
            }
            controlPlane.limiter.failed(source: source, now: now.timeIntervalSince1970)
            try await audit(
                .unverified("unknown", source), "sign-in.refused",
                why: "the form was posted from another site")
            throw DashboardError(
                .forbidden, "This sign-in did not come from this dashboard's own page, so it was refused.")
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
        let person: Person
        do {
            person = try await controlPlane.person(credential: credential, source: source, now: now)
        } catch let error as APIError {
            // Refused unchecked (past the limit): not audited one by one.
            if error.status == .tooManyRequests { throw limitedPage(Double(error.retryAfter ?? 1)) }
            // The name the credential claims, when its signature is good (a revoked one): never the
            // credential.
            let claimed = (try? await controlPlane.tokens.verify(credential, now: now))?.subject ?? "unknown"
            try await audit(.unverified(claimed, source), "sign-in.failed", why: error.message)
            if controlPlane.limiter.retryAfter(source: source, now: now.timeIntervalSince1970) != nil {
                try await audit(
                    .unverified(claimed, source), "sign-in.rate-limited",
                    why: "too many failures from this address")
            }
            let message =
                error.code == "token_outdated"
                ? """
                Shared admin tokens are no longer accepted: sign in with your own credential (an owner \
                or operator makes one with onboarding-server people add).
                """
                : "That is not a live credential of a person of this server: \(error.message)."
            return signInPage(
                request, message: message, status: error.status == .forbidden ? .forbidden : .unauthorized)
        }
        let claims = try? await controlPlane.tokens.verify(credential, now: now)
        return try await openSession(
            for: person, credential: claims?.credential, expires: Double(claims?.expires ?? 0), request,
            source: source,
            method: "credential")
    }

    /// Opens a session for `person` (who must hold a role somewhere), audited in the same
    /// transaction, and sends them in.
    private func openSession(
        for person: Person, credential: String?, expires: Double, _ request: Request, source: String,
        method: String
    ) async throws -> Response {
        let now = Date().timeIntervalSince1970
        guard !person.roles.isEmpty else {
            throw DashboardError(.forbidden, "\(person.name) holds no role in any app; an owner gives one.")
        }
        let audit = AuditLog.Entry(
            at: now, actor: Actor(name: person.name, source: source, person: person), app: nil,
            action: "sign-in",
            details: ["method": .string(method)])
        let session = try await
            (sessions.open(
                person: person.name, credential: credential, expires: expires, now: now, audit: audit))
        logger.inRequest.info(
            "dashboard sign-in", metadata: ["person": "\(person.name)", "method": "\(method)"])
        var response = Self.redirect("/dashboard")
        response.setCookie(
            Self.makeCookie(Self.cookie, value: session.cookie, maxAge: Int(session.expiresAt - now), request)
        )
        response.headers.append(
            HTTPField(name: .setCookie, value: Self.clearing(Self.signInCookie, request).description))
        return response
    }

    private func audit(_ actor: Actor, _ action: String, why: String?, method: String? = nil) async throws {
        if action != "sign-in" { ServerMetrics.signInFailures.increment() }
        try await auditTrail.record(
            .init(
                at: Date().timeIntervalSince1970, actor: actor, app: nil, action: action,
                details: .members(["reason": why.map { .string($0) }, "method": method.map { .string($0) }])))
    }

    private func limitedPage(_ wait: Double) -> DashboardError {
        var error = DashboardError(
            .tooManyRequests,
            """
            Too many failed sign-ins from this address. Try again in \(Int(wait.rounded(.up))) seconds; \
            every failure waits longer.
            """
        )
        error.retryAfter = Int(wait.rounded(.up))
        return error
    }

    /// The sign-in page with a fresh form secret (its cookie) and the token derived from it.
    func signInPage(_ request: Request, message: String?, status: HTTPResponse.Status) -> Response {
        let secret = DashboardOIDC.random()
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
        if oidc != nil {
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
        guard let oidc else {
            throw DashboardError(.notFound, "No identity provider is configured for the dashboard.")
        }
        let start: DashboardOIDC.Start
        do { start = try await oidc.start(sealingWith: controlPlane.tokens, now: Date()) } catch {
            logger.inRequest.warning(
                "the identity provider's discovery failed", metadata: ["error": "\(error)"])
            throw DashboardError(
                .serviceUnavailable,
                "The identity provider does not answer; try again, or sign in with your credential.")
        }
        var response = Self.redirect(start.location)
        // Lax: the provider's redirect back is a top-level navigation from its site.
        response.setCookie(
            Self.makeCookie(
                DashboardOIDC.cookie, value: start.cookie, maxAge: Int(DashboardOIDC.flowLifetime),
                path: "/dashboard/sign-in",
                sameSite: .lax, request))
        return response
    }

    private func finishOIDC(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        guard let oidc else {
            throw DashboardError(.notFound, "No identity provider is configured for the dashboard.")
        }
        let source = controlPlane.clients.of(request, context)
        let now = Date()
        if let wait = controlPlane.limiter.retryAfter(source: source, now: now.timeIntervalSince1970) {
            throw limitedPage(wait)
        }
        let query = request.uri.queryParameters
        if let error = query.get("error") {
            throw DashboardError(
                .unauthorized, "The identity provider did not sign you in (\(error.prefix(100))).")
        }
        guard let code = query.get("code"), let state = query.get("state"), code.count <= 4096,
            state.count <= 256
        else {
            throw DashboardError(.badRequest, "The identity provider's answer has no code and state.")
        }
        let identity: String
        do {
            identity = try await oidc.finish(
                code: code, state: state, cookie: Self.cookieValue(DashboardOIDC.cookie, request),
                tokens: controlPlane.tokens, now: now)
        } catch .unavailable(let why) {
            logger.inRequest.warning(
                "sign-in through the identity provider failed", metadata: ["error": "\(why)"])
            throw DashboardError(.serviceUnavailable, "The identity provider does not answer; try again.")
        } catch .refused(let why) {
            controlPlane.limiter.failed(source: source, now: now.timeIntervalSince1970)
            try await audit(
                .unverified("unknown", source), "sign-in.failed", why: why, method: "identity provider")
            throw DashboardError(.unauthorized, "Not signed in: \(why).")
        }
        guard let person = try await (people.person(identity: identity)) else {
            controlPlane.limiter.failed(source: source, now: now.timeIntervalSince1970)
            try await audit(
                .unverified(identity, source), "sign-in.failed", why: "no person has this identity",
                method: "identity provider")
            throw DashboardError(
                .forbidden,
                """
                \(identity) is not a person of this server. An owner or operator adds you (onboarding-server \
                people add --identity).
                """
            )
        }
        var response = try await openSession(
            for: person, credential: nil, expires: now.timeIntervalSince1970 + DashboardSessions.lifetime,
            request, source: source,
            method: "identity provider")
        response.headers.append(
            HTTPField(
                name: .setCookie,
                value: Self.clearing(DashboardOIDC.cookie, request, path: "/dashboard/sign-in").description))
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

extension Actor {
    /// Who a failed sign-in claimed to be: never taken for a person of that name (audit rows say
    /// `unverified:` before it).
    static func unverified(_ claimed: String, _ source: String) -> Actor {
        Actor(name: "unverified:" + String(claimed.prefix(200)), source: source, person: nil)
    }
}
