import Foundation
import JWTKit

/// An identity provider whose JWTs the server accepts as account tokens (Firebase Auth, Sign in
/// with Apple, any OpenID Connect issuer): RS256 and ES256 signatures checked against the keys of
/// a JWKS file, and the issuer, the audience (the app of the request's path) and the expiry
/// checked. The token's `sub` is the account. Through vapor/jwt-kit: nothing of JOSE is written here.
public struct IdentityProvider: Sendable {
    /// The `iss` every accepted token carries.
    public let issuer: String
    /// How many keys the JWKS held.
    public let keyCount: Int
    private let keys: JWTKeyCollection

    /// The algorithms accepted: asymmetric only (an HMAC or `none` token is never an identity).
    static let algorithms: Set<String> = ["RS256", "ES256"]

    /// - Parameters:
    ///   - jwks: the JSON of a JWKS (`{"keys": [...]}`), as the provider publishes it.
    ///   - issuer: the `iss` to require.
    public init(jwks: String, issuer: String) async throws(ServerConfigurationError) {
        guard !issuer.isEmpty else { throw ServerConfigurationError("the identity provider's issuer is empty") }
        let collection = JWTKeyCollection()
        let count: Int
        do {
            let set = try JSONDecoder().decode(JWKS.self, from: Data(jwks.utf8))
            for key in set.keys {
                guard let algorithm = key.algorithm?.rawValue ?? Self.defaultAlgorithm(of: key),
                    Self.algorithms.contains(algorithm)
                else {
                    throw ServerConfigurationError(
                        "the JWKS holds a key that is neither RS256 nor ES256; only those are accepted")
                }
                try await collection.add(jwk: key)
            }
            count = set.keys.count
        } catch let error as ServerConfigurationError {
            throw error
        } catch {
            throw ServerConfigurationError("the JWKS is not a usable key set: \(error)")
        }
        guard count > 0 else { throw ServerConfigurationError("the JWKS holds no keys") }
        self.issuer = issuer
        self.keyCount = count
        self.keys = collection
    }

    private static func defaultAlgorithm(of key: JWK) -> String? {
        switch key.keyType {
        case .rsa: "RS256"
        case .ecdsa: key.curve?.rawValue == "P-256" ? "ES256" : nil
        default: nil
        }
    }

    public enum Failure: Error, Equatable {
        case invalid(String)
        case expired
    }

    /// The account claims of `token`, when it is the provider's, for `app`, and not expired.
    public func verify(_ token: String, app: String, now: Date) async throws(Failure) -> TokenClaims {
        let payload: IdentityClaims
        do {
            payload = try await keys.verify(token, as: IdentityClaims.self)
        } catch {
            throw .invalid("its signature is not one of the identity provider's keys")
        }
        guard payload.iss.value == issuer else { throw .invalid("it was issued by another issuer") }
        guard payload.aud.value.contains(app) else { throw .invalid("it is not for the app '\(app)'") }
        guard now < payload.exp.value else { throw .expired }
        return TokenClaims(
            subject: payload.sub.value, scope: .account, app: app,
            issuedAt: payload.iat?.value.timeIntervalSince1970 ?? 0, expires: Int64(payload.exp.value.timeIntervalSince1970))
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
        guard IdentityProvider.algorithms.contains(algorithm.name) else {
            throw JWTError.generic(identifier: "alg", reason: "only RS256 and ES256 are accepted")
        }
    }
}
