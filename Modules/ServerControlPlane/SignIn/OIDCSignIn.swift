import AsyncHTTPClient
import Crypto
import Foundation
import JWTKit
import Logging
import NIOCore
import ServerTokens
import TourCodec

/// The authorization code flow with PKCE, state and nonce, for the dashboard's sign-in (``SignIns``):
/// the browser goes to the provider, comes back with a code, the server exchanges it for an ID token
/// (as a confidential client), checks the token against the provider's keys (``JWKSource``) and
/// signs in the person whose identity is the configured claim's value. The flow's secrets ride in a
/// cookie sealed by the key ring, so no state is kept on the server between the two legs.
public struct OIDCSignIn: Sendable {
    let configuration: OIDCConfiguration
    let http: HTTPClient
    let discovery: Discovery
    let logger: Logger

    public init(configuration: OIDCConfiguration, http: HTTPClient, logger: Logger) {
        self.configuration = configuration
        self.http = http
        self.logger = logger
        discovery = Discovery(issuer: configuration.issuer, http: http, logger: logger)
    }

    /// The provider's endpoints, read from its discovery document and kept an hour.
    actor Discovery {
        let issuer: String
        let http: HTTPClient
        let logger: Logger
        private var document: (authorization: String, token: String, keys: JWKSource)?
        private var expires = Date.distantPast

        init(issuer: String, http: HTTPClient, logger: Logger) {
            self.issuer = issuer
            self.http = http
            self.logger = logger
        }

        func endpoints() async throws -> (authorization: String, token: String, keys: JWKSource) {
            if let document, Date() < expires { return document }
            let url =
                issuer.hasSuffix("/")
                ? issuer + ".well-known/openid-configuration" : issuer + "/.well-known/openid-configuration"
            let response = try await http.execute(HTTPClientRequest(url: url), timeout: JWKSource.timeout)
            guard response.status == .ok else {
                throw JWKSourceError("\(url) answered \(response.status.code)")
            }
            let body = try await response.body.collect(upTo: JWKSource.maximumBytes)
            guard let object = (try? TourValue(jsonUTF8: body.readableBytesView))?.objectValue,
                object["issuer"]?.stringValue == issuer,
                let authorization = object["authorization_endpoint"]?.stringValue,
                let token = object["token_endpoint"]?.stringValue, let jwks = object["jwks_uri"]?.stringValue,
                let jwksURL = URL(string: jwks)
            else {
                throw JWKSourceError("\(url) is not the discovery document of \(issuer)")
            }
            // The same JWKS source as long as its URL stays, so its keys stay cached.
            let keys: JWKSource
            if let cached = document?.keys, cached.origin == .url(jwksURL) {
                keys = cached
            } else {
                keys = JWKSource(.url(jwksURL), http: http, logger: logger)
            }
            let read = (authorization: authorization, token: token, keys: keys)
            document = read
            expires = Date().addingTimeInterval(3600)
            return read
        }
    }

    /// What the first leg hands the browser: the provider's URL to go to, and the sealed cookie
    /// that the second leg must bring back.
    package struct Start: Sendable {
        package var location: String
        package var cookie: String
    }

    package static let cookie = "onboarding_oidc"
    /// How long a person has at the provider.
    package static let flowLifetime: TimeInterval = 600

    func start(sealingWith tokens: TokenSigner, now: Date) async throws -> Start {
        let endpoints = try await discovery.endpoints()
        let state = Self.random(), nonce = Self.random(), verifier = Self.random()
        let challenge = ByteText.base64URL(Data(SHA256.hash(data: Data(verifier.utf8))))
        let sealed = tokens.seal(
            (try? TourValue.members([
                "state": .string(state), "nonce": .string(nonce), "verifier": .string(verifier),
                "expires": .int(Int(now.timeIntervalSince1970 + Self.flowLifetime)),
            ]).jsonText()) ?? "")
        var components = URLComponents(string: endpoints.authorization)
        let given = components?.queryItems ?? []
        components?.queryItems =
            given + [
                .init(name: "response_type", value: "code"),
                .init(name: "client_id", value: configuration.clientID),
                .init(name: "redirect_uri", value: configuration.redirectURI),
                .init(name: "scope", value: "openid \(configuration.claim == "email" ? "email" : "profile")"),
                .init(name: "state", value: state), .init(name: "nonce", value: nonce),
                .init(name: "code_challenge", value: challenge),
                .init(name: "code_challenge_method", value: "S256"),
            ]
        guard let location = components?.url?.absoluteString else {
            throw JWKSourceError("the provider's authorization endpoint is not a URL")
        }
        return Start(location: location, cookie: sealed)
    }

    /// The identity the second leg proves: the code exchanged, the ID token checked (signature,
    /// issuer, audience, expiry, nonce), the claim's value.
    func finish(
        code: String, state: String, cookie: String?, tokens: TokenSigner, now: Date
    ) async throws(OIDCFailure) -> String {
        guard let cookie, let text = tokens.unseal(cookie),
            let flow = (try? TourValue(jsonText: text))?.objectValue,
            let expected = flow["state"]?.stringValue, let nonce = flow["nonce"]?.stringValue,
            let verifier = flow["verifier"]?.stringValue,
            let expires = flow["expires"]?.intValue.map(Double.init)
        else { throw .refused("the sign-in did not start in this browser (no sign-in cookie); start again") }
        guard now.timeIntervalSince1970 < expires else {
            throw .refused("the sign-in took over 10 minutes; start again")
        }
        guard Self.equal(state, expected) else {
            throw .refused("the provider's answer is for another sign-in; start again")
        }
        let idToken: String
        let endpoints: (authorization: String, token: String, keys: JWKSource)
        do {
            endpoints = try await discovery.endpoints()
            idToken = try await exchange(code: code, verifier: verifier, at: endpoints.token)
        } catch let error as OIDCFailure {
            throw error
        } catch {
            throw .unavailable("the identity provider did not answer: \(error)")
        }
        let claims: OIDCClaims
        do {
            claims = try await endpoints.keys.verify(idToken, as: OIDCClaims.self)
        } catch let error as JWKSourceError where error.isUnavailable {
            throw .unavailable("\(error)")
        } catch {
            throw .refused("the identity provider's token does not check against its keys")
        }
        guard claims.iss.value == configuration.issuer, claims.aud.value.contains(configuration.clientID)
        else {
            throw .refused("the identity token is for another issuer or client")
        }
        guard now < claims.exp.value else { throw .refused("the identity token has expired") }
        guard let given = claims.nonce, Self.equal(given, nonce) else {
            throw .refused("the identity token is for another sign-in")
        }
        guard let identity = claims.strings[configuration.claim], !identity.isEmpty else {
            throw .refused("the identity token has no \(configuration.claim) claim")
        }
        // An email the provider has not vouched for (`email_verified` absent or false) is anyone's to
        // type in at some providers: it signs no one in.
        if configuration.claim == "email", claims.emailVerified != true {
            throw .refused("the identity provider has not verified the email \(identity)")
        }
        return identity
    }

    private func exchange(code: String, verifier: String, at endpoint: String) async throws -> String {
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        let credentials = Data(
            "\(Self.formEncoded(configuration.clientID)):\(Self.formEncoded(configuration.clientSecret))".utf8
        )
        request.headers.add(name: "Authorization", value: "Basic \(credentials.base64EncodedString())")
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        let form = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", configuration.redirectURI),
            ("code_verifier", verifier), ("client_id", configuration.clientID),
        ].map { "\($0)=\(Self.formEncoded($1))" }.joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await http.execute(request, timeout: JWKSource.timeout)
        let body = try await response.body.collect(upTo: JWKSource.maximumBytes)
        guard response.status == .ok,
            let object = (try? TourValue(jsonUTF8: body.readableBytesView))?.objectValue,
            let idToken = object["id_token"]?.stringValue
        else {
            throw OIDCFailure.refused("the identity provider refused the code (\(response.status.code))")
        }
        return idToken
    }

    /// 256 random bits, base64url: a flow's state, nonce and verifier, a form's secret.
    package static func random() -> String {
        ByteText.base64URL(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
    }

    static func equal(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        return x.count == y.count && zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// `application/x-www-form-urlencoded` of one value (RFC 6749 for client credentials too).
    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}

public enum OIDCFailure: Error, Equatable {
    /// The answer does not sign anyone in; why.
    case refused(String)
    /// The provider did not answer.
    case unavailable(String)
}

/// The ID token's claims the dashboard reads: the standard ones checked, and every string claim
/// kept so the configured one can be read by name.
struct OIDCClaims: JWTPayload {
    var iss: IssuerClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var nonce: String?
    var emailVerified: Bool?
    var strings: [String: String] = [:]

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        iss = try container.decode(IssuerClaim.self, forKey: Key(stringValue: "iss"))
        aud = try container.decode(AudienceClaim.self, forKey: Key(stringValue: "aud"))
        exp = try container.decode(ExpirationClaim.self, forKey: Key(stringValue: "exp"))
        nonce = try? container.decode(String.self, forKey: Key(stringValue: "nonce"))
        // A boolean, or the string "true" some providers send.
        emailVerified =
            (try? container.decode(Bool.self, forKey: Key(stringValue: "email_verified")))
            ?? (try? container.decode(String.self, forKey: Key(stringValue: "email_verified"))).map {
                $0 == "true"
            }
        for key in container.allKeys {
            if let value = try? container.decode(String.self, forKey: key) {
                strings[key.stringValue] = value
            }
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(iss, forKey: Key(stringValue: "iss"))
        try container.encode(aud, forKey: Key(stringValue: "aud"))
        try container.encode(exp, forKey: Key(stringValue: "exp"))
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {
        guard JWKSource.algorithms.contains(algorithm.name) else {
            throw JWTError.generic(identifier: "alg", reason: "only RS256 and ES256 are accepted")
        }
    }
}
