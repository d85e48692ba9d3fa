import AccountSync
import Foundation
import Hummingbird
import ServerTokens

/// Checks every `/v1` request that needs a caller before its route's handler runs, and puts the
/// caller in its context (``AuthenticatedRequestContext``): a request without a credential, or with
/// one that does not check, never reaches a handler. The role a person needs is the route group's
/// ``RequiredRole``; a device's own subject is the handler's ``Routes/deviceClaims(_:app:)``.
struct APIAuthentication: RouterMiddleware {
    typealias Context = ServerRequestContext
    let routes: Routes

    func handle(
        _ request: Request, context: ServerRequestContext,
        next: (Request, ServerRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        do {
            context.caller = try await routes.authenticate(request, context)
        } catch {
            return await routes.answer { throw error }
        }
        return try await next(request, context)
    }
}

/// Refuses a `/v1` request whose caller is not a person holding `role` in the route's app, and puts
/// the person, as the actor of the audit trail, in the context (``AuthenticatedRequestContext/actor()``).
/// The route's app is the path's; without one, the `app` query's (the audit trail's); without
/// either, every app (an operator's role). It is the middleware of a group of one route
/// (``Routes/requiring(_:to:devicesToo:in:)``), so its refusal names what the route does.
struct RequiredRole: RouterMiddleware {
    typealias Context = AuthenticatedRequestContext
    let routes: Routes
    let role: Role
    /// What the route does, for the refusal ("publishing needs ..."), given the route's app.
    let what: @Sendable (String?) -> String
    /// Whether a device's token goes on to the handler, which checks that it is the path's own
    /// subject: the routes a device and an app's people share (publications, export, sign-out).
    let devicesToo: Bool

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard case .person = context.caller else {
            if devicesToo { return try await next(request, context) }
            return await routes.answer { throw Routes.personNeeded(to: what(nil)) }
        }
        var context = context
        do {
            let app =
                try context.parameters.get("app").map { _ in try Routes.name(context, "app") }
                ?? request.uri.queryParameters.get("app").map { value in
                    guard SyncAPI.isValidName(value) else {
                        throw APIError.invalid("app must be \(SyncAPI.nameRule)")
                    }
                    return String(value)
                }
            context.staff = try routes.staff(request, context, app: app, role: role, to: what(app))
        } catch {
            return await routes.answer { throw error }
        }
        return try await next(request, context)
    }
}

/// Who may call a route: the bearer token (the server's own or an identity provider's), its app and
/// account, and the account's sign-out cut-off.
extension Routes {
    /// The caller a request's credential proves: a person's credential (the only kind a route
    /// without an app in its path takes), or a device's token for the path's app.
    func authenticate(_ request: Request, _ context: ServerRequestContext) async throws -> Caller {
        guard let token = ControlPlane.bearer(request) else {
            throw APIError(
                status: .unauthorized, code: "unauthorized",
                message:
                    "send a credential as 'Authorization: Bearer CREDENTIAL': a device's token (onboarding-server "
                    + "token --app APP --account ACCOUNT mints one) or a person's (onboarding-server people add)"
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
                        "this token's format (obt1) names no app and is no longer accepted; mint a new one with onboarding-server token --app APP --account ACCOUNT"
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

    /// `claims`, when they are not another app's.
    static func forApp(_ claims: TokenClaims, _ app: String) throws -> TokenClaims {
        if let tokenApp = claims.app, tokenApp != app {
            throw APIError(
                status: .forbidden, code: "forbidden",
                message: "this token is for the app '\(tokenApp)', not '\(app)'")
        }
        return claims
    }

    /// The refusal of a device's token on a route that a person calls.
    static func personNeeded(to what: String) -> APIError {
        APIError(
            status: .forbidden, code: "forbidden",
            message:
                "an account token opens only its account; \(what) needs a person's credential (onboarding-server people add)"
        )
    }

    /// The claims of the caller's token for `app`; a person is refused (the route is a device's).
    func deviceClaims(_ context: AuthenticatedRequestContext, app: String) throws -> TokenClaims {
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
    func requiring(
        _ role: Role, to what: String, devicesToo: Bool = false,
        in router: RouterGroup<AuthenticatedRequestContext>
    ) -> RouterGroup<AuthenticatedRequestContext> {
        router.group().add(
            middleware: RequiredRole(routes: self, role: role, what: { _ in what }, devicesToo: devicesToo))
    }

    /// The actor behind a request that needs `role` in `app` (nil: every app, an operator's act).
    func staff(
        _ request: Request, _ context: AuthenticatedRequestContext, app: String?, role: Role, to what: String
    ) throws -> Actor {
        guard case .person(let person) = context.caller else { throw Self.personNeeded(to: what) }
        return try ControlPlane.actor(
            person, source: controlPlane.clients.of(request, context), app: app, role: role, to: what)
    }

    /// The app and account of the path, when the token is that account's, for that app, and was
    /// issued after the account last signed out everywhere.
    func accountPath(_ context: AuthenticatedRequestContext) async throws -> (String, String) {
        let (app, account, claims) = try accountClaims(context)
        try await refuseIfSignedOut(claims, app: app, account: account)
        return (app, account)
    }

    /// The app, account and claims of an account request, before the sign-out check (a push makes
    /// that check in its own statement, saving a round trip).
    func accountClaims(_ context: AuthenticatedRequestContext) throws -> (String, String, TokenClaims) {
        let app = try Self.name(context, "app")
        let account = try Self.name(context, "account")
        let claims = try deviceClaims(context, app: app)
        // An install's subject opens with its install credential only; an account's with an account token
        // only.
        guard claims.scope == (Installs.isInstall(account) ? .install : .account), claims.subject == account
        else {
            throw APIError(
                status: .forbidden, code: "forbidden", message: "this token is not for account '\(account)'")
        }
        return (app, account, claims)
    }

    static let revoked = APIError(
        status: .unauthorized, code: "token_revoked",
        message: "the account signed out everywhere after this token was issued; sign in again")

    func refuseIfSignedOut(_ claims: TokenClaims, app: String, account: String) async throws {
        let cutoff = try await store.tokenCutoff(
            app: app, names: tokens.subjectPseudonyms(app: app, subject: account))
        if let cutoff, claims.issuedAt < cutoff { throw Self.revoked }
    }

    static func name(_ context: some RequestContext, _ parameter: String) throws -> String {
        let value = context.parameters.get(parameter) ?? ""
        guard SyncAPI.isValidName(value) else {
            throw APIError.invalid("the \(parameter) id must be \(SyncAPI.nameRule)")
        }
        return value
    }
}
