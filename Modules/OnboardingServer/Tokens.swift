import Crypto
import Foundation

/// What a token lets its bearer do.
public struct TokenClaims: Codable, Equatable, Sendable {
    public enum Scope: String, Codable, Sendable {
        /// Read and write one account's records.
        case account
        /// Read reports across accounts.
        case admin
    }

    /// The account (for an account token) or the operator's name (for an admin token).
    public var subject: String
    public var scope: Scope
    /// Seconds since 1970 after which the token is refused.
    public var expires: Int64

    enum CodingKeys: String, CodingKey {
        case subject = "sub", scope, expires = "exp"
    }

    public init(subject: String, scope: Scope, expires: Int64) {
        self.subject = subject
        self.scope = scope
        self.expires = expires
    }
}

/// Signs and checks bearer tokens: `obt1.<claims>.<signature>`, the claims as base64url JSON and
/// the signature HMAC-SHA256 of `obt1.<claims>` under the server's secret. Nothing about a token
/// is stored: the server checks the signature and the expiry on every request, so a token can be
/// minted anywhere the secret is (`onboarding-server token`) and leaked tokens expire.
public struct TokenSigner: Sendable {
    static let prefix = "obt1"
    /// The shortest secret accepted, in bytes.
    public static let minimumSecretLength = 32
    private let key: SymmetricKey

    public init(secret: String) throws(ServerConfigurationError) {
        guard secret.utf8.count >= Self.minimumSecretLength else {
            throw ServerConfigurationError(
                "the server secret must be at least \(Self.minimumSecretLength) bytes (got \(secret.utf8.count))")
        }
        key = SymmetricKey(data: Data(secret.utf8))
    }

    public func sign(_ claims: TokenClaims) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let payload = Self.base64URL((try? encoder.encode(claims)) ?? Data())
        let signed = "\(Self.prefix).\(payload)"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: key)
        return "\(signed).\(Self.base64URL(Data(mac)))"
    }

    public enum Failure: Error, Equatable {
        case malformed, badSignature, expired
    }

    /// The token's claims if its signature is ours and it has not expired at `now`.
    public func verify(_ token: String, now: Date) throws(Failure) -> TokenClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.prefix, let signature = Self.data(base64URL: parts[2]),
            let payload = Self.data(base64URL: parts[1])
        else { throw .malformed }
        let signed = Data("\(parts[0]).\(parts[1])".utf8)
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: key) else {
            throw .badSignature
        }
        guard let claims = try? JSONDecoder().decode(TokenClaims.self, from: payload) else { throw .malformed }
        guard Double(claims.expires) > now.timeIntervalSince1970 else { throw .expired }
        return claims
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func data(base64URL text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
