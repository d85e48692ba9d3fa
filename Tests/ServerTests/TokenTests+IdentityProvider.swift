import Crypto
import Foundation
import JWTKit
import OnboardingServer
import ServerTokens
import Testing
import TourFixtures
import _CryptoExtras

extension TokenTests {
    // MARK: - An identity provider

    struct IdentityPayload: JWTPayload {
        var iss: IssuerClaim
        var sub: SubjectClaim
        var aud: AudienceClaim
        var exp: ExpirationClaim
        var iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static let issuer = "https://securetoken.google.com/onboarding-tests"

    static func payload(
        sub: String = "ann", aud: String = "growth", iss: String = issuer, expires: TimeInterval = 600
    ) -> IdentityPayload {
        IdentityPayload(
            iss: IssuerClaim(value: iss), sub: SubjectClaim(value: sub), aud: AudienceClaim(value: [aud]),
            exp: ExpirationClaim(value: Date().addingTimeInterval(expires)), iat: IssuedAtClaim(value: Date())
        )
    }

    /// The provider's JWTs (RS256 and ES256, keys the test makes and publishes as a JWKS file)
    /// open the account of their `sub` in the app of their audience; anything else is refused.
    @Test func anIdentityProvidersJWTsAreAccountTokens() async throws {
        let ecKey = ES256PrivateKey()
        let rsaBacking = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let rsaKey = try Insecure.RSA.PrivateKey(backing: rsaBacking)
        let stranger = ES256PrivateKey()
        let signers = JWTKeyCollection()
        await signers.add(ecdsa: ecKey, kid: "ec-1")
        await signers.add(rsa: rsaKey, digestAlgorithm: .sha256, kid: "rsa-1")
        await signers.add(ecdsa: stranger, kid: "ec-1-stranger")

        let ec = try #require(ecKey.publicKey.parameters)
        let rsa = try rsaKey.publicKey.getKeyPrimitives()
        let jwks: [String: Any] = [
            "keys": [
                [
                    "kty": "EC", "crv": "P-256", "x": ec.x, "y": ec.y, "kid": "ec-1", "alg": "ES256",
                    "use": "sig",
                ],
                [
                    "kty": "RSA", "n": rsa.modulus.base64URL, "e": rsa.publicExponent.base64URL,
                    "kid": "rsa-1",
                    "alg": "RS256", "use": "sig",
                ],
            ]
        ]
        let file = Scratch.folder.appendingPathComponent("jwks-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: jwks).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try ServerProcess(environment: [
            "ONBOARDING_IDP_JWKS": file.path, "ONBOARDING_IDP_ISSUER": Self.issuer,
        ])

        for kid in ["ec-1", "rsa-1"] {
            let token = try await signers.sign(Self.payload(), kid: JWKIdentifier(string: kid))
            let answer = try await HTTP.get(Self.flows(server), token: token)
            #expect(answer.status == 200, "\(kid): \(answer.json)")
            // The same token with its signature's last character changed only in the bits
            // base64url does not carry (the same signature's bytes, spelled another way): refused.
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            let lastCharacter = try #require(token.last)
            let last = try #require(alphabet.firstIndex(of: lastCharacter))
            let variant = String(token.dropLast()) + String(alphabet[last ^ 1])
            let refused = try await HTTP.get(Self.flows(server), token: variant)
            #expect(
                refused.status == 401 && refused.errorCode == "unauthorized",
                "\(kid) respelled: \(refused.json)")
        }
        // Another app's audience, another issuer, expired, another account, a key not published.
        let refusals: [(IdentityPayload, String, URL, Int, String)] = [
            (Self.payload(aud: "finite"), "ec-1", Self.flows(server), 401, "unauthorized"),
            (Self.payload(iss: "https://evil.example.com"), "ec-1", Self.flows(server), 401, "unauthorized"),
            (Self.payload(expires: -60), "ec-1", Self.flows(server), 401, "token_expired"),
            (Self.payload(sub: "bob"), "rsa-1", Self.flows(server), 403, "forbidden"),
            (Self.payload(), "ec-1-stranger", Self.flows(server), 401, "unauthorized"),
        ]
        for (payload, kid, url, status, code) in refusals {
            let token = try await signers.sign(payload, kid: JWKIdentifier(string: kid))
            let answer = try await HTTP.get(url, token: token)
            #expect(
                answer.status == status && answer.errorCode == code,
                "\(payload.aud.value) \(kid): \(answer.json)")
        }
        // An unsigned token (alg "none") naming a published key is refused.
        let header = Data(#"{"alg":"none","kid":"ec-1","typ":"JWT"}"#.utf8).base64URL
        let body = try JSONEncoder().encode(Self.payload()).base64URL
        #expect(try await HTTP.get(Self.flows(server), token: "\(header).\(body).").status == 401)
        // A genuine RS256 signature by the published key, under a header that names another
        // algorithm: checked with the key's algorithm, so refused for naming another.
        let now = Int(Date().timeIntervalSince1970)
        let claims = try JSONSerialization.data(withJSONObject: [
            "iss": Self.issuer, "sub": "ann", "aud": ["growth"], "iat": now, "exp": now + 600,
        ]).base64URL
        for algorithm in ["HS256", "ES256", "RS256"] {
            let header = Data(#"{"alg":"\#(algorithm)","kid":"rsa-1","typ":"JWT"}"#.utf8).base64URL
            let signed = try rsaBacking.signature(
                for: Data("\(header).\(claims)".utf8), padding: .insecurePKCS1v1_5)
            let answer = try await HTTP.get(
                Self.flows(server), token: "\(header).\(claims).\(signed.rawRepresentation.base64URL)")
            // RS256 is the key's own: the same signature under it is accepted (the check is the header's, not
            // the bytes').
            #expect(answer.status == (algorithm == "RS256" ? 200 : 401), "\(algorithm): \(answer.status)")
        }
        // The server's own tokens keep working beside the provider's.
        #expect(try await HTTP.get(Self.flows(server), token: try server.token(account: "ann")).status == 200)
    }
}
