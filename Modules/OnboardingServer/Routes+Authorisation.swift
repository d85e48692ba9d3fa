import AccountSync
import Foundation
import Hummingbird

/// Who may call a route: the bearer token (the server's own or an identity provider's), its app and
/// account, and the account's sign-out cut-off.
extension Routes {
    /// The claims of the request's account token, for `app`: one of the server's own tokens (signed
    /// by a key of its ring, naming `app`), or a JWT of the configured identity provider whose
    /// audience is `app`. A source past its limit of failed tokens is refused first, unchecked.
    func authorize(_ request: Request, _ context: ServerRequestContext, app: String) async throws -> TokenClaims {
        guard let token = ControlPlane.bearer(request) else {
            throw APIError(
                status: .unauthorized, code: "unauthorized",
                message: "send a token as 'Authorization: Bearer TOKEN' (onboarding-server token --app APP --account ACCOUNT mints one)")
        }
        let now = Date()
        do {
            return try await verify(token, app: app, now: now)
        } catch let error as APIError where error.status == .unauthorized && !["token_expired", "token_outdated"].contains(error.code) {
            // A token that did not check: counted against its source (429 past the limit). A genuine
            // old one (expired, revoked by a sign-out) is not a guess and is not counted.
            throw controlPlane.refusal(error, source: controlPlane.clients.of(request, context), now: now.timeIntervalSince1970)
        }
    }

    private func verify(_ token: String, app: String, now: Date) async throws -> TokenClaims {
        let claims: TokenClaims
        if let identityProvider, !tokens.isOwnToken(token) {
            do {
                claims = try await identityProvider.verify(token, app: app, now: now)
            } catch .expired {
                throw APIError(status: .unauthorized, code: "token_expired", message: "the token has expired; sign in again")
            } catch .invalid(let why) {
                throw APIError(status: .unauthorized, code: "unauthorized", message: "the identity token is not accepted: \(why)")
            } catch .unavailable {
                throw APIError(
                    status: .serviceUnavailable, code: "unavailable",
                    message: "the identity provider's keys could not be fetched to check the token; try again", retryAfter: 5)
            }
        } else {
            do {
                claims = try await tokens.verify(token, now: now)
            } catch .expired {
                throw APIError(status: .unauthorized, code: "token_expired", message: "the token has expired; get a new one")
            } catch .outdated {
                throw APIError(
                    status: .unauthorized, code: "token_outdated",
                    message: "this token's format (obt1) names no app and is no longer accepted; mint a new one with onboarding-server token --app APP --account ACCOUNT")
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
        if let tokenApp = claims.app, tokenApp != app {
            throw APIError(status: .forbidden, code: "forbidden", message: "this token is for the app '\(tokenApp)', not '\(app)'")
        }
        return claims
    }

    /// The app and account of the path, when the token is that account's, for that app, and was
    /// issued after the account last signed out everywhere.
    func accountPath(_ context: ServerRequestContext, _ request: Request) async throws -> (String, String) {
        let (app, account, claims) = try await accountClaims(context, request)
        try await refuseIfSignedOut(claims, app: app, account: account)
        return (app, account)
    }

    /// The app, account and claims of an account request, before the sign-out check (a push makes
    /// that check in its own statement, saving a round trip).
    func accountClaims(_ context: ServerRequestContext, _ request: Request) async throws -> (String, String, TokenClaims) {
        let app = try Self.name(context, "app")
        let account = try Self.name(context, "account")
        let claims = try await authorize(request, context, app: app)
        // An install's subject opens with its install credential only; an account's with an account token only.
        guard claims.scope == (Installs.isInstall(account) ? .install : .account), claims.subject == account else {
            throw APIError(
                status: .forbidden, code: "forbidden", message: "this token is not for account '\(account)'")
        }
        return (app, account, claims)
    }

    static let revoked = APIError(
        status: .unauthorized, code: "token_revoked",
        message: "the account signed out everywhere after this token was issued; sign in again")

    func refuseIfSignedOut(_ claims: TokenClaims, app: String, account: String) async throws {
        let cutoff = try await store.tokenCutoff(app: app, names: tokens.subjectPseudonyms(app: app, subject: account))
        if let cutoff, claims.issuedAt < cutoff { throw Self.revoked }
    }

    static func name(_ context: ServerRequestContext, _ parameter: String) throws -> String {
        let value = context.parameters.get(parameter) ?? ""
        guard SyncAPI.isValidName(value) else {
            throw APIError.invalid("the \(parameter) id must be \(SyncAPI.nameRule)")
        }
        return value
    }
}
