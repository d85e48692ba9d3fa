import Foundation
import JWTKit

/// An identity provider whose JWTs the server accepts as account tokens (Firebase Auth, Sign in
/// with Apple, any OpenID Connect issuer): RS256 and ES256 signatures checked against the
/// provider's keys (``JWKSource``: its JWKS URL, fetched and cached, fetched again when a token
/// names a key it has not seen, so the provider's key rotation needs no restart), and the issuer,
/// the audience (the app of the request's path) and the expiry checked. The token's `sub` is the
/// account. Through vapor/jwt-kit: nothing of JOSE is written here.
public struct IdentityProvider: Sendable {
    /// The `iss` every accepted token carries.
    public let issuer: String
    public let keys: JWKSource

    public init(keys: JWKSource, issuer: String) throws(ServerConfigurationError) {
        guard !issuer.isEmpty else {
            throw ServerConfigurationError("the identity provider's issuer is empty")
        }
        self.issuer = issuer
        self.keys = keys
    }

    public enum Failure: Error, Equatable {
        case invalid(String)
        case expired
        /// The provider's keys could not be fetched to check it: try again.
        case unavailable
    }

    /// The account claims of `token`, when it is the provider's, for `app`, and not expired.
    public func verify(_ token: String, app: String, now: Date) async throws(Failure) -> TokenClaims {
        let payload: IdentityClaims
        do {
            payload = try await keys.verify(token, as: IdentityClaims.self)
        } catch let error as JWKSourceError where error.isUnavailable {
            throw .unavailable
        } catch {
            throw .invalid("its signature is not one of the identity provider's keys")
        }
        guard payload.iss.value == issuer else { throw .invalid("it was issued by another issuer") }
        guard payload.aud.value.contains(app) else { throw .invalid("it is not for the app '\(app)'") }
        guard now < payload.exp.value else { throw .expired }
        return TokenClaims(
            subject: payload.sub.value, scope: .account, app: app,
            issuedAt: payload.iat?.value.timeIntervalSince1970 ?? 0,
            expires: Int64(payload.exp.value.timeIntervalSince1970))
    }
}

/// The claims of an identity token the server reads. Issuer, audience and expiry are checked by
/// ``IdentityProvider/verify(_:app:now:)`` (the audience depends on the request).
struct IdentityClaims: JWTPayload {
    var iss: IssuerClaim
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim?

    func verify(using algorithm: some JWTAlgorithm) async throws {
        guard JWKSource.algorithms.contains(algorithm.name) else {
            throw JWTError.generic(identifier: "alg", reason: "only RS256 and ES256 are accepted")
        }
    }
}
