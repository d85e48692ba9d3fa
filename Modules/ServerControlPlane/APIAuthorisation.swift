import AccountSync
import Foundation
import Hummingbird
import HummingbirdAuth
import ServerKit
import ServerTokens

/// Checks every `/v1` request that needs a caller before its route's handler runs, and puts the
/// caller in its context's identity (hummingbird-auth's authenticator; the group's routes take
/// ``AuthenticatedRequestContext``): a request without a credential, or with one that does not
/// check, never reaches a handler. The role a person needs is the route group's ``RequiredRole``;
/// a device's own subject is the handler's ``AuthorisedRoutes/deviceClaims(_:app:)``.
package struct APIAuthentication: AuthenticatorMiddleware, APIAnswering {
    package typealias Context = ServerRequestContext
    package typealias Identity = ServerIdentity
    let controlPlane: ControlPlane
    /// The identity provider whose JWTs open an app's accounts, when one is configured.
    let identityProvider: IdentityProvider?
    var tokens: TokenSigner { controlPlane.tokens }

    package init(controlPlane: ControlPlane, identityProvider: IdentityProvider?) {
        self.controlPlane = controlPlane
        self.identityProvider = identityProvider
    }

    /// The caller the request's credential proves; a request without one, or whose credential does
    /// not check, is refused (every route behind this middleware needs a caller).
    package func authenticate(
        request: Request, context: ServerRequestContext
    ) async throws -> ServerIdentity? {
        .api(try await caller(request, context))
    }

    /// hummingbird-auth's, with the refusal answered as the API answers (a JSON error with its code)
    /// rather than thrown to Hummingbird's plain one.
    package func handle(
        _ request: Request, context: ServerRequestContext,
        next: (Request, ServerRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        do {
            context.identity = try await authenticate(request: request, context: context)
        } catch {
            return await answer { throw error }
        }
        return try await next(request, context)
    }
}

/// Refuses a `/v1` request whose caller is not a person holding `role` in the route's app, and puts
/// the person, as the actor of the audit trail, in the context (``AuthenticatedRequestContext/actor()``).
/// The route's app is the path's; without one, the `app` query's (the audit trail's); without
/// either, every app (an operator's role). It is the middleware of a group of one route
/// (``AuthorisedRoutes/requiring(_:to:devicesToo:in:)``), so its refusal names what the route does.
package struct RequiredRole: RouterMiddleware, APIAnswering {
    package typealias Context = AuthenticatedRequestContext
    let controlPlane: ControlPlane
    let role: Role
    /// What the route does, for the refusal ("publishing needs ..."), given the route's app.
    let what: @Sendable (String?) -> String
    /// Whether a device's token goes on to the handler, which checks that it is the path's own
    /// subject: the routes a device and an app's people share (publications, export, sign-out).
    let devicesToo: Bool

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard case .person = context.caller else {
            if devicesToo { return try await next(request, context) }
            return await answer { throw Self.personNeeded(to: what(nil)) }
        }
        var context = context
        do {
            let app =
                try context.parameters.get("app").map { _ in try Self.name(context, "app") }
                ?? request.uri.queryParameters.get("app").map { value in
                    guard SyncAPI.isValidName(value) else {
                        throw APIError.invalid("app must be \(SyncAPI.nameRule)")
                    }
                    return String(value)
                }
            context.staff = try Self.staff(
                request, context, app: app, role: role, to: what(app), controlPlane: controlPlane)
        } catch {
            return await answer { throw error }
        }
        return try await next(request, context)
    }
}

/// Who may call a route: the bearer token (the server's own or an identity provider's) and its app.
extension APIAuthentication {
    /// The caller a request's credential proves: a person's credential (the only kind a route
    /// without an app in its path takes), or a device's token for the path's app.
    func caller(_ request: Request, _ context: ServerRequestContext) async throws -> Caller {
        guard let token = ControlPlane.bearer(request) else {
            throw APIError(
                status: .unauthorized, code: "unauthorized",
                message:
                    """
                    send a credential as 'Authorization: Bearer CREDENTIAL': a device's token \
                    (onboarding-server 
                    """
                        + """
                        token --app APP --account ACCOUNT mints one) or a person's (onboarding-server people \
                        add)
                        """
            )
        }
        let app = try context.parameters.get("app").map { _ in try Self.name(context, "app") }
        let now = Date()
        // Which check applies is read from the token: one of the server's own that checks is
        // taken as it is (a person's goes on to its row); any other is checked in full below.
        let isOwn = tokens.isOwnToken(token)
        let own: TokenClaims? = isOwn ? try? await tokens.verify(token, now: now) : nil
        // A person's credential that did not check (expired, say) is refused in a person's words
        // below: what its holder needs is a new credential from an owner, not a device's token.
        let person =
            own?.scope == .person || (own == nil && isOwn && TokenSigner.statedScope(of: token) == .person)
        if let app, !person {
            if let own { return .subject(try Self.forApp(own, app)) }
            return .subject(try await verify(token, request, context, app: app, now: now))
        }
        return .person(
            try await controlPlane.person(
                credential: token, source: controlPlane.clients.of(request, context), now: now))
    }

    /// The claims of a device's token for `app`: one of the server's own tokens (signed by a key
    /// of its ring, naming `app`), or a JWT of the configured identity provider whose audience is
    /// `app`. A source past its limit of failed tokens is refused first, unchecked.
    private func verify(
        _ token: String, _ request: Request, _ context: ServerRequestContext, app: String, now: Date
    ) async throws -> TokenClaims {
        do {
            return try await verify(token, app: app, now: now)
        } catch let error as APIError
            where error.status == .unauthorized && !["token_expired", "token_outdated"].contains(error.code)
        {
            // A token that did not check: counted against its source (429 past the limit). A genuine
            // old one (expired, revoked by a sign-out) is not a guess and is not counted.
            throw controlPlane.refusal(
                error, source: controlPlane.clients.of(request, context), now: now.timeIntervalSince1970)
        }
    }

    private func verify(_ token: String, app: String, now: Date) async throws -> TokenClaims {
        let claims: TokenClaims
        if let identityProvider, !tokens.isOwnToken(token) {
            do {
                claims = try await identityProvider.verify(token, app: app, now: now)
            } catch .expired {
                throw APIError(
                    status: .unauthorized, code: "token_expired",
                    message: "the token has expired; sign in again")
            } catch .invalid(let why) {
                throw APIError(
                    status: .unauthorized, code: "unauthorized",
                    message: "the identity token is not accepted: \(why)")
            } catch .unavailable {
                throw APIError(
                    status: .serviceUnavailable, code: "unavailable",
                    message:
                        "the identity provider's keys could not be fetched to check the token; try again",
                    retryAfter: 5)
            }
        } else {
            do {
                claims = try await tokens.verify(token, now: now)
            } catch .expired {
                throw APIError(
                    status: .unauthorized, code: "token_expired",
                    message: "the token has expired; get a new one")
            } catch .outdated {
                throw APIError(
                    status: .unauthorized, code: "token_outdated",
                    message:
                        """
                        this token's format (obt1) names no app and is no longer accepted; \
                        mint a new one with onboarding-server token --app APP --account ACCOUNT
                        """
                )
            } catch .adminRetired {
                throw ControlPlane.adminRetired
            } catch .unknownKey {
                throw APIError(
                    status: .unauthorized, code: "unauthorized",
                    message: "the token was signed by a key this server no longer accepts; get a new one")
            } catch {
                throw APIError(status: .unauthorized, code: "unauthorized", message: "the token is not valid")
            }
        }
        return try Self.forApp(claims, app)
    }
}

/// Routes of an app's people and devices: a group of them needs a role (``RequiredRole``), and a
/// device's route takes only a token for the path's app.
package protocol AuthorisedRoutes: IdempotentWrites {
    var controlPlane: ControlPlane { get }
}

extension AuthorisedRoutes {
    package var tokens: TokenSigner { controlPlane.tokens }

    /// The claims of the caller's token for `app`; a person is refused (the route is a device's).
    package func deviceClaims(_ context: AuthenticatedRequestContext, app: String) throws -> TokenClaims {
        switch context.caller {
        case .subject(let claims):
            return try Self.forApp(claims, app)
        case .person:
            throw APIError(
                status: .forbidden, code: "forbidden",
                message:
                    "a person's credential does not open an account's data here; send the account's own token"
            )
        }
    }

    /// A group of `router` whose route needs a person holding `role` in its app (``RequiredRole``);
    /// with `devicesToo`, a device's token goes on to the handler too.
    package func requiring(
        _ role: Role, to what: String, devicesToo: Bool = false,
        in router: RouterGroup<AuthenticatedRequestContext>
    ) -> RouterGroup<AuthenticatedRequestContext> {
        router.group().add(
            middleware: RequiredRole(
                controlPlane: controlPlane, role: role, what: { _ in what }, devicesToo: devicesToo))
    }

    /// A token issued before its account signed out everywhere (or was erased).
    package static var revoked: APIError {
        APIError(
            status: .unauthorized, code: "token_revoked",
            message: "the account signed out everywhere after this token was issued; sign in again")
    }

    /// Refuses a device's token issued before its account last signed out everywhere.
    package func refuseIfSignedOut(_ claims: TokenClaims, app: String, account: String) async throws {
        let cutoff = try await controlPlane.tokenCutoff(
            app: app, names: tokens.subjectPseudonyms(app: app, subject: account))
        if let cutoff, claims.issuedAt < cutoff { throw Self.revoked }
    }
}

/// What every authorising part of the control plane shares: a token for its app, a person's
/// refusal, and the actor behind a request that needs a role.
extension APIAnswering {
    /// `claims`, when they are not another app's.
    package static func forApp(_ claims: TokenClaims, _ app: String) throws -> TokenClaims {
        if let tokenApp = claims.app, tokenApp != app {
            throw APIError(
                status: .forbidden, code: "forbidden",
                message: "this token is for the app '\(tokenApp)', not '\(app)'")
        }
        return claims
    }

    /// The refusal of a device's token on a route that a person calls.
    package static func personNeeded(to what: String) -> APIError {
        APIError(
            status: .forbidden, code: "forbidden",
            message:
                """
                an account token opens only its account; \(what) needs a person's credential \
                (onboarding-server people add)
                """
        )
    }

    /// The actor behind a request that needs `role` in `app` (nil: every app, an operator's act).
    static func staff(
        _ request: Request, _ context: AuthenticatedRequestContext, app: String?, role: Role, to what: String,
        controlPlane: ControlPlane
    ) throws -> Actor {
        guard case .person(let person) = context.caller else { throw Self.personNeeded(to: what) }
        return try ControlPlane.actor(
            person, source: controlPlane.clients.of(request, context), app: app, role: role, to: what)
    }
}
