import Crypto
import Foundation
import Hummingbird
import JWTKit
import Synchronization
import TestThreads
import Testing
import TourFixtures

/// An OpenID Connect provider of the test's own (a real HTTP server in this process): discovery,
/// JWKS (with `Cache-Control: max-age=3600`, so the server would keep stale keys an hour if it
/// did not fetch on an unknown `kid`), authorization (the person is already signed in there) and
/// the token endpoint (checks the client's secret and PKCE). It rotates its signing key on demand.
final class FakeIdentityProvider: Sendable {
    struct State {
        var keys: [(kid: String, key: ES256PrivateKey)]
        var email = "ann@example.com"
        /// What the ID token says of the email: `true`, `false`, or the string "false".
        var emailVerified = "true"
        var codes: [String: (nonce: String, challenge: String, redirect: String)] = [:]
        var jwksFetches = 0
    }

    let state: Mutex<State>
    let clientID = "dashboard"
    let clientSecret = "client-secret-\(UUID().uuidString)"
    let port = ServerProcess.freePort()
    var issuer: String { "http://127.0.0.1:\(port)" }

    init() { state = Mutex(State(keys: [("key-1", ES256PrivateKey())])) }

    /// A new key signs from now on; the JWKS holds it only (the old one is gone at once).
    func rotate() {
        state.withLock {
            $0.keys = [("key-\($0.keys.count + 1)-\(UUID().uuidString.prefix(4))", ES256PrivateKey())]
        }
    }

    var jwksFetches: Int { state.withLock { $0.jwksFetches } }

    func jwks() throws -> String {
        let keys = state.withLock { $0.keys }
        let entries = try keys.map { kid, key -> [String: Any] in
            let parameters = try #require(key.publicKey.parameters)
            return [
                "kty": "EC", "crv": "P-256", "x": parameters.x, "y": parameters.y, "kid": kid, "alg": "ES256",
                "use": "sig",
            ]
        }
        return String(decoding: try JSONSerialization.data(withJSONObject: ["keys": entries]), as: UTF8.self)
    }

    /// A JWT signed with the current key.
    func sign(_ claims: [String: Any]) async throws -> String {
        let (kid, key) = state.withLock { $0.keys[0] }
        let collection = JWTKeyCollection()
        await collection.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        return try await collection.sign(AnyClaims(claims), kid: JWKIdentifier(string: kid))
    }

    struct AnyClaims: JWTPayload, @unchecked Sendable {
        var claims: [String: Any]
        init(_ claims: [String: Any]) { self.claims = claims }
        init(from decoder: any Decoder) throws { claims = [:] }
        func encode(to encoder: any Encoder) throws {
            struct Key: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }
            var container = encoder.container(keyedBy: Key.self)
            for (name, value) in claims {
                switch value {
                case let text as String: try container.encode(text, forKey: Key(stringValue: name))
                case let number as Int: try container.encode(number, forKey: Key(stringValue: name))
                case let flag as Bool: try container.encode(flag, forKey: Key(stringValue: name))
                case let list as [String]: try container.encode(list, forKey: Key(stringValue: name))
                default: break
                }
            }
        }
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    func routes(_ router: Router<BasicRequestContext>) {
        let issuer = issuer
        router.get("/.well-known/openid-configuration") { _, _ in
            let body: [String: String] = [
                "issuer": issuer, "authorization_endpoint": issuer + "/authorize",
                "token_endpoint": issuer + "/token",
                "jwks_uri": issuer + "/jwks",
            ]
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(data: try JSONSerialization.data(withJSONObject: body))))
        }
        router.get("/jwks") { _, _ in
            self.state.withLock { $0.jwksFetches += 1 }
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "max-age=3600"],
                body: .init(byteBuffer: ByteBuffer(string: try self.jwks())))
        }
        router.get("/authorize") { request, _ in
            let query = request.uri.queryParameters
            let code = UUID().uuidString
            let redirect = String(query.get("redirect_uri") ?? "")
            self.state.withLock {
                $0.codes[code] = (
                    String(query.get("nonce") ?? ""), String(query.get("code_challenge") ?? ""), redirect
                )
            }
            let state =
                String(query.get("state") ?? "").addingPercentEncoding(withAllowedCharacters: .alphanumerics)
                ?? ""
            return Response(
                status: .seeOther, headers: [.location: "\(redirect)?code=\(code)&state=\(state)"])
        }
        router.post("/token") { request, context in
            var request = request
            let body = String(buffer: try await request.collectBody(upTo: 65_536))
            var form: [String: String] = [:]
            for pair in body.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    String($0).removingPercentEncoding ?? ""
                }
                if parts.count == 2 { form[parts[0]] = parts[1] }
            }
            let basic = Data("\(self.clientID):\(self.clientSecret)".utf8).base64EncodedString()
            let flow = self.state.withLock { $0.codes.removeValue(forKey: form["code"] ?? "") }
            let challenge = Data(SHA256.hash(data: Data((form["code_verifier"] ?? "").utf8)))
                .base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            guard request.headers[.authorization] == "Basic \(basic)", let flow, flow.challenge == challenge,
                flow.redirect == form["redirect_uri"]
            else {
                return Response(
                    status: .badRequest,
                    body: .init(byteBuffer: ByteBuffer(string: #"{"error":"invalid_grant"}"#)))
            }
            let idToken = try await self.sign([
                "iss": issuer, "aud": [self.clientID], "sub": "provider-user-1",
                "email": self.state.withLock { $0.email },
                "email_verified": { () -> Any in
                    switch self.state.withLock({ $0.emailVerified }) {
                    case "true": true
                    case "false": false
                    default: "false"
                    }
                }(), "nonce": flow.nonce, "exp": Int(Date().timeIntervalSince1970) + 300,
                "iat": Int(Date().timeIntervalSince1970),
            ])
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(
                    byteBuffer: ByteBuffer(string: #"{"id_token": "\#(idToken)", "token_type": "Bearer"}"#)))
        }
    }
}

/// Sign-in through an identity provider, with the provider rotating its key mid-run:
/// account tokens checked against its JWKS URL, and people signing in to the dashboard through
/// OpenID Connect in a real browser. Neither needs a restart when the key changes.
@Suite("An identity provider that rotates its keys", .serialized, .ownThread)
struct IdentityProviderTests {
    /// A GET as a device makes it: a 503 (the provider's keys could not be fetched just now, as on a
    /// machine this loaded) is tried again, for as long as Patience waits.
    static func get(_ url: URL, token: String) async throws -> HTTP.Answer {
        try await Patience.untilAnswered({ try await HTTP.get(url, token: token) }) { $0.status == 503 }
    }

    @Test func theProviderRotatesItsKeyMidRunAndSignInKeepsWorking() async throws {
        let provider = FakeIdentityProvider()
        try await TransportTests.withServer(port: provider.port, provider.routes) { _ in
            let secretFile = Scratch.folder.appendingPathComponent("client-\(UUID().uuidString)")
            try provider.clientSecret.write(to: secretFile, atomically: true, encoding: .utf8)
            let port = ServerProcess.freePort()
            let server = try ServerProcess(
                port: port,
                environment: [
                    "ONBOARDING_IDP_ISSUER": provider.issuer,
                    "ONBOARDING_IDP_JWKS_URL": provider.issuer + "/jwks",
                    "ONBOARDING_OIDC_ISSUER": provider.issuer, "ONBOARDING_OIDC_CLIENT_ID": provider.clientID,
                    "ONBOARDING_OIDC_CLIENT_SECRET_FILE": secretFile.path,
                    "ONBOARDING_PUBLIC_URL": "http://127.0.0.1:\(port)",
                ])
            let flows = server.url.appendingPathComponent("v1/apps/growth/accounts/ann/flows")
            func accountToken() async throws -> String {
                try await provider.sign([
                    "iss": provider.issuer, "aud": ["growth"], "sub": "ann",
                    "exp": Int(Date().timeIntervalSince1970) + 600,
                    "iat": Int(Date().timeIntervalSince1970),
                ])
            }
            // Account tokens of the provider's current key open the account.
            #expect(try await Self.get(flows, token: try await accountToken()).status == 200)
            let fetchesBefore = provider.jwksFetches

            // People sign in to the dashboard through the provider, matched by their email.
            _ = try server.command([
                "people", "add", "--name", "ann", "--role", "viewer", "--app", "growth", "--identity",
                "ann@example.com",
            ])
            let browser = try Browser()
            /// Follows "Sign in with the identity provider"; a page saying the provider did not answer
            /// (its 5 s timeout, on a machine this loaded) is tried again, as a person would.
            func signInThroughProvider() throws {
                for _ in 0..<3 {
                    try browser.open(server.url.appendingPathComponent("dashboard/sign-in"))
                    do {
                        try browser.leave {
                            _ = try browser.evaluate(
                                "document.querySelector('a[href=\"/dashboard/sign-in/oidc\"]').click()")
                        }
                    } catch {
                        throw HarnessFailure(
                            """
                            \(error): at \(browser.location), \(browser.title); \
                            server: \(server.logText.suffix(2000))
                            """
                        )
                    }
                    // The provider sends the browser back at once; wait for the dashboard.
                    let deadline = Date().addingTimeInterval(30)
                    while !browser.title.hasPrefix("All apps"), Date() < deadline {
                        if (try? browser.evaluate("document.body.innerText.includes('does not answer')"))
                            as? Bool == true
                        {
                            break
                        }
                        // A refusal is the answer: not waited for, not tried again.
                        if browser.title.hasPrefix("Refused") || browser.title.hasPrefix("Not allowed") {
                            return
                        }
                        usleep(100_000)
                    }
                    if browser.title.hasPrefix("All apps") { return }
                }
            }
            try signInThroughProvider()
            #expect(
                browser.title.hasPrefix("All apps"),
                """
                \(browser.title) \(browser.location): \
                \((try? browser.evaluate("document.body.innerText")) as? String ?? "") \
                server: \(server.logText.suffix(1500))
                """
            )
            #expect(try server.sql("SELECT person FROM dashboard_sessions") == ["ann"])

            // The provider rotates its key: the old one is gone from its JWKS, and the server's cached
            // copy (an hour's max-age) does not have the new one. Both sign-ins go on, no restart.
            provider.rotate()
            #expect(try await Self.get(flows, token: try await accountToken()).status == 200)
            #expect(provider.jwksFetches > fetchesBefore, "an unknown kid made the keys fetched again")
            try browser.leave { _ = try browser.evaluate("document.querySelector('form.sign-out').submit()") }
            try signInThroughProvider()
            #expect(
                browser.title.hasPrefix("All apps"),
                """
                \(browser.title) \(browser.location) \
                \((try? browser.evaluate("document.body.innerText")) ?? "")
                """
            )
            // A token naming a made-up key id fetches at most once per 10 s, and is refused (twelve of
            // them: twenty failures from one address would rate-limit this test's own sign-in below).
            let before = provider.jwksFetches
            let started = Date()
            for _ in 0..<12 {
                let forged = try await accountToken()
                let parts = forged.split(separator: ".")
                let header = Data(#"{"alg":"ES256","kid":"made-up","typ":"JWT"}"#.utf8).base64URL
                #expect(try await HTTP.get(flows, token: "\(header).\(parts[1]).\(parts[2])").status == 401)
            }
            #expect(provider.jwksFetches - before <= 1 + Int(Date().timeIntervalSince(started) / 10))

            // An email the provider has not verified (false, or "false") signs no one in.
            for unverified in ["false", "\"false\""] {
                provider.state.withLock {
                    $0.emailVerified = unverified == "false" ? "false" : "false-string"
                }
                try browser.leave {
                    _ = try browser.evaluate("document.querySelector('form.sign-out').submit()")
                }
                try signInThroughProvider()
                #expect(!browser.title.hasPrefix("All apps"), "\(unverified)")
                #expect(
                    try browser.evaluate("document.body.innerText.includes('has not verified the email')")
                        as? Bool == true)
                provider.state.withLock { $0.emailVerified = "true" }
                try signInThroughProvider()
                #expect(browser.title.hasPrefix("All apps"))
            }

            // An identity no person has is refused, and audited.
            provider.state.withLock { $0.email = "stranger@example.com" }
            try browser.leave { _ = try browser.evaluate("document.querySelector('form.sign-out').submit()") }
            try browser.open(server.url.appendingPathComponent("dashboard/sign-in"))
            try browser.leave {
                _ = try browser.evaluate(
                    "document.querySelector('a[href=\"/dashboard/sign-in/oidc\"]').click()")
            }
            let deadline = Date().addingTimeInterval(20)
            while !(browser.title.hasPrefix("Not allowed")), Date() < deadline { usleep(100_000) }
            #expect(
                try browser.evaluate(
                    "document.body.innerText.includes('stranger@example.com is not a person of this server')")
                    as? Bool == true)
            #expect(
                try server.sql(
                    """
                    SELECT count(*) FROM audit_log WHERE action = 'sign-in' AND details LIKE '%identity \
                    provider%'
                    """
                ) == ["4"])
            #expect(
                try server.sql(
                    """
                    SELECT count(*) FROM audit_log WHERE action = 'sign-in.failed' AND actor = \
                    'unverified:stranger@example.com'
                    """
                ) == ["1"])
            // The two unverified emails: refused and audited, never as the person they name.
            #expect(
                try server.sql(
                    """
                    SELECT count(*) FROM audit_log WHERE action = 'sign-in.failed' AND actor = \
                    'unverified:unknown'
                    """
                ) == ["2"])
        }
    }
}
