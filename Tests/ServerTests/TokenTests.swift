import Crypto
import Foundation
import JWTKit
import OnboardingServer
import ServerTokens
import TestThreads
import Testing
import TourFixtures
import _CryptoExtras

/// Tokens against the real server: each names its app, its key and when it was issued; keys
/// rotate with overlap; an account signs out everywhere; an identity provider's JWTs are accepted.
@Suite("Tokens: apps, keys, sign-out and identity providers", .ownThread)
struct TokenTests {
    static func flows(_ server: ServerProcess, app: String = "growth", account: String = "ann") -> URL {
        server.url.appendingPathComponent("v1/apps/\(app)/accounts/\(account)/flows")
    }

    static let oldSecret = "old-key-secret-0123456789abcdef-0123456789"
    static let newSecret = "new-key-secret-0123456789abcdef-0123456789"

    /// Tokens of every padding length (the payload's length mod 3) verify, read back as signed,
    /// decode with another base64url reader, and fail once any character of them changes.
    @Test func tokensOfEveryLengthRoundTripAndAnyChangedCharacterIsRefused() async throws {
        let signer = try TokenSigner(secret: ServerProcess.secret)
        let now = Date(timeIntervalSince1970: 1_767_603_600)
        for length in 1...9 {
            let claims = TokenClaims(
                subject: String(repeating: "a", count: length) + "~?>", scope: .account, app: "growth",
                issuedAt: now.timeIntervalSince1970, expires: Int64(now.timeIntervalSince1970) + 60)
            let token = await signer.sign(claims)
            #expect(!token.contains("+") && !token.contains("/") && !token.contains("="), "\(token)")
            var expected = claims
            expected.keyID = signer.signingKeyID
            #expect(try await signer.verify(token, now: now) == expected)
            let payload = try #require(String(token.split(separator: ".")[1]).base64URLDecodedJSON())
            #expect(payload["sub"] as? String == claims.subject)
            for index in [
                token.index(token.endIndex, offsetBy: -3), token.index(token.startIndex, offsetBy: 12),
            ] {
                var tampered = token
                tampered.replaceSubrange(index...index, with: token[index] == "A" ? "B" : "A")
                await #expect(throws: TokenSigner.Failure.self) {
                    try await signer.verify(tampered, now: now)
                }
            }
        }
    }

    /// A signature checked once is remembered, but nothing else is: a remembered token still
    /// expires, a token changed after the original was remembered is checked afresh and refused,
    /// and another ring's signer knows nothing of it.
    @Test func aRememberedTokenStillExpiresAndAChangedOneIsCheckedAfresh() async throws {
        let signer = try TokenSigner(secret: ServerProcess.secret)
        let now = Date(timeIntervalSince1970: 1_767_603_600)
        let token = await signer.sign(
            TokenClaims(
                subject: "ann", scope: .account, app: "growth", issuedAt: now.timeIntervalSince1970,
                expires: Int64(now.timeIntervalSince1970) + 60))
        let first = try await signer.verify(token, now: now)
        #expect(try await signer.verify(token, now: now.addingTimeInterval(30)) == first)
        await #expect(throws: TokenSigner.Failure.expired) {
            try await signer.verify(token, now: now.addingTimeInterval(61))
        }
        for index in [token.index(token.endIndex, offsetBy: -2), token.index(token.startIndex, offsetBy: 9)] {
            var tampered = token
            tampered.replaceSubrange(index...index, with: token[index] == "A" ? "B" : "A")
            await #expect(throws: TokenSigner.Failure.self) { try await signer.verify(tampered, now: now) }
        }
        let other = try TokenSigner(secret: String(repeating: "z", count: 40))
        await #expect(throws: TokenSigner.Failure.self) { try await other.verify(token, now: now) }
    }

    @Test func aTokenOpensItsAccountInItsAppOnly() async throws {
        let server = try ServerProcess()
        let growth = try server.token(account: "ann", app: "growth")
        #expect(try await HTTP.get(Self.flows(server), token: growth).status == 200)
        let other = try await HTTP.get(Self.flows(server, app: "finite"), token: growth)
        #expect(other.status == 403)
        #expect(
            (other.json["error"] as? [String: Any])?["message"] as? String
                == "this token is for the app 'growth', not 'finite'")
        // The format before 0.10 named no app: refused, saying how to get a new one.
        let outdated = "obt1." + growth.split(separator: ".").dropFirst().joined(separator: ".")
        let answer = try await HTTP.get(Self.flows(server), token: outdated)
        #expect(answer.status == 401 && answer.errorCode == "token_outdated")
        // An account token must name its app.
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARDING_SERVER_SECRET"] = ServerProcess.secret
        let minted = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("onboarding-server").path,
            ["token", "--account", "ann"],
            environment: environment)
        #expect(minted.status != 0 && minted.stderr.contains("give --app APP"), "\(minted.stderr)")
    }

    /// Rotation with overlap: while both keys are in the ring, tokens of either are accepted and
    /// new ones are signed by the first; once the old key is dropped, its tokens are refused.
    @Test func keysRotateWithOverlap() async throws {
        let old = try TokenKey(id: "2026-10", secret: Self.oldSecret)
        let oldToken = try await TokenSigner(keys: [old]).sign(
            TokenClaims(
                subject: "ann", scope: .account, app: "growth",
                expires: Int64(Date().timeIntervalSince1970) + 600))
        let server = try ServerProcess(environment: [
            "ONBOARDING_SERVER_KEYS": "2026-11=\(Self.newSecret) 2026-10=\(Self.oldSecret)"
        ])
        let newToken = try server.token(account: "ann")
        let header = try #require(String(newToken.split(separator: ".")[0]).base64URLDecodedJSON())
        let claims = try #require(String(newToken.split(separator: ".")[1]).base64URLDecodedJSON())
        #expect(header["kid"] as? String == "2026-11")
        #expect((claims["iat"] as? Double).map { abs($0 - Date().timeIntervalSince1970) < 600 } == true)
        #expect(try await HTTP.get(Self.flows(server), token: oldToken).status == 200)
        #expect(try await HTTP.get(Self.flows(server), token: newToken).status == 200)

        server.stop()
        server.environment["ONBOARDING_SERVER_KEYS"] = "2026-11=\(Self.newSecret)"
        try server.start()
        let refused = try await HTTP.get(Self.flows(server), token: oldToken)
        #expect(refused.status == 401 && refused.errorCode == "unauthorized")
        #expect(try await HTTP.get(Self.flows(server), token: newToken).status == 200)
    }

    /// A token is a JWT any tool reads: header `{"alg": "HS256", "kid", "typ": "JWT"}`, and the
    /// claims `iss`, `sub`, `aud` (the app), `iat`, `exp` and `scope`, as `onboarding-server token`
    /// mints it and the server accepts it.
    @Test func aTokenIsAJWTThatAnyToolReads() async throws {
        let server = try ServerProcess()
        let token = try server.token(account: "ann", app: "growth", days: 30)
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try #require(parts[0].base64URLDecodedJSON())
        let claims = try #require(parts[1].base64URLDecodedJSON())
        #expect(
            header["alg"] as? String == "HS256" && header["kid"] as? String == "default"
                && header["typ"] as? String == "JWT", "\(header)")
        #expect(claims["iss"] as? String == "onboarding-server")
        #expect(claims["sub"] as? String == "ann")
        #expect(
            claims["aud"] as? String == "growth" || (claims["aud"] as? [String]) == ["growth"], "\(claims)")
        #expect(claims["scope"] as? String == "account")
        let issued = try #require(claims["iat"] as? Double), expires = try #require(claims["exp"] as? Double)
        #expect(
            abs(issued - Date().timeIntervalSince1970) < 600 && abs(expires - issued - 30 * 86_400) < 2,
            "\(claims)")
        // The signature is HMAC-SHA256 of the first two parts under the server's key (RFC 7515).
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data((parts[0] + "." + parts[1]).utf8),
            using: SymmetricKey(data: Data(ServerProcess.secret.utf8)))
        #expect(Data(mac).base64URL == parts[2])
        #expect(try await HTTP.get(Self.flows(server), token: token).status == 200)
    }

    /// A token of the format before 0.22 (`obt2.<claims>.<HMAC>`, made here as 0.21 made it) is
    /// still accepted until it expires, then refused as expired; one changed in any part is refused.
    @Test func aTokenOfTheOldFormatWorksUntilItExpires() async throws {
        let server = try ServerProcess()
        func obt2(_ claims: [String: Any]) throws -> String {
            let json = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
            let signed = "obt2." + json.base64URL
            let mac = HMAC<SHA256>.authenticationCode(
                for: Data(signed.utf8), using: SymmetricKey(data: Data(ServerProcess.secret.utf8)))
            return signed + "." + Data(mac).base64URL
        }
        // Short-lived, but long enough for its first request however loaded the machine: a life
        // that ran out before the server read it is tried again, twice as long.
        var claims: [String: Any] = [:]
        var old = ""
        var expires = 0
        var accepted = false
        for seconds in [3, 6, 12, 24, 48] where !accepted {
            let now = Date().timeIntervalSince1970
            expires = Int(now) + seconds
            claims = [
                "sub": "ann", "scope": "account", "app": "growth", "iat": now, "exp": expires,
                "kid": "default",
            ]
            old = try obt2(claims)
            let first = try await HTTP.get(Self.flows(server), token: old)
            accepted = first.status == 200
            if !accepted {
                #expect(first.errorCode == "token_expired", "\(first.status) \(first.errorCode ?? "")")
            }
        }
        #expect(accepted, "a token of the old format living 48 s was not accepted")
        // Tampered: the claims (another account), the signature, the prefix.
        var other = claims
        other["sub"] = "bob"
        let forged = try obt2(other).split(separator: ".")[1]
        let parts = old.split(separator: ".").map(String.init)
        for tampered in [
            "obt2.\(forged).\(parts[2])", "obt2.\(parts[1]).\(parts[2].dropLast(3))AAA",
            "obt3.\(parts[1]).\(parts[2])",
        ] {
            let answer = try await HTTP.get(
                Self.flows(server, account: tampered.contains(forged) ? "bob" : "ann"), token: tampered)
            #expect(answer.status == 401, "\(tampered): \(answer.status)")
        }
        try await Task.sleep(for: .seconds(max(0, Double(expires) - Date().timeIntervalSince1970) + 1))
        let expired = try await HTTP.get(Self.flows(server), token: old)
        #expect(
            expired.status == 401 && expired.errorCode == "token_expired",
            "\(expired.status) \(expired.errorCode ?? "")")
    }

    /// A JWT changed in any of its three parts is refused: every character of the header, the
    /// claims and the signature, its last too (a second spelling of the same bytes, in the low bits
    /// base64url does not carry, included); and the classic attacks: `alg` none, `alg` RS256 or HS512 over
    /// the same key, a `kid` the ring
    /// does not have, a token signed by another key.
    @Test func aJWTTamperedInAnyPartIsRefused() async throws {
        let signer = try TokenSigner(secret: ServerProcess.secret)
        let now = Date(timeIntervalSince1970: 1_767_603_600)
        let token = await signer.sign(
            TokenClaims(
                subject: "ann", scope: .account, app: "growth", issuedAt: now.timeIntervalSince1970,
                expires: Int64(now.timeIntervalSince1970) + 60))
        #expect(try await signer.verify(token, now: now).subject == "ann")
        let characters = Array(token)
        for index in characters.indices where characters[index] != "." {
            var tampered = characters
            tampered[index] = characters[index] == "A" ? "B" : "A"
            let text = String(tampered)
            await #expect(throws: TokenSigner.Failure.self, "character \(index)") {
                try await TokenSigner(secret: ServerProcess.secret).verify(text, now: now)
            }
        }
        // The signature's 32 bytes leave the low 2 bits of its last character unused: each of the
        // three other characters that differ only there decodes to the same signature, and is
        // refused, by a signer that has not seen the token and by one that remembers it.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = try #require(alphabet.firstIndex(of: characters[characters.count - 1]))
        #expect(last & 3 == 0, "a canonical signature's last character has its unused bits zero")
        for unused in 1...3 {
            let variant = String(characters.dropLast()) + String(alphabet[last | unused])
            await #expect(throws: TokenSigner.Failure.self, "variant \(unused)") {
                try await TokenSigner(secret: ServerProcess.secret).verify(variant, now: now)
            }
            await #expect(throws: TokenSigner.Failure.self, "variant \(unused), remembered") {
                try await signer.verify(variant, now: now)
            }
        }
        let parts = token.split(separator: ".").map(String.init)
        let key = SymmetricKey(data: Data(ServerProcess.secret.utf8))
        func forge(header: String, payload: String = parts[1], sign: Bool = true) -> String {
            let head = Data(header.utf8).base64URL
            let mac =
                sign
                ? Data(HMAC<SHA256>.authenticationCode(for: Data((head + "." + payload).utf8), using: key))
                    .base64URL : ""
            return head + "." + payload + "." + mac
        }
        for forged in [
            forge(header: #"{"alg":"none","kid":"default","typ":"JWT"}"#, sign: false),
            forge(header: #"{"alg":"none","kid":"default","typ":"JWT"}"#),
            forge(header: #"{"alg":"RS256","kid":"default","typ":"JWT"}"#),
            forge(header: #"{"alg":"HS512","kid":"default","typ":"JWT"}"#),
            forge(header: #"{"alg":"HS256","kid":"other","typ":"JWT"}"#),
            forge(header: #"{"alg":"HS256","typ":"JWT"}"#),
            await (try TokenSigner(secret: String(repeating: "z", count: 40))).sign(
                TokenClaims(
                    subject: "ann", scope: .account, app: "growth", issuedAt: now.timeIntervalSince1970,
                    expires: Int64(now.timeIntervalSince1970) + 60)),
        ] {
            await #expect(throws: TokenSigner.Failure.self, "\(forged)") {
                try await TokenSigner(secret: ServerProcess.secret).verify(forged, now: now)
            }
        }
        // The same header re-signed with the right key and algorithm is the token itself: the
        // forgeries above fail for what they changed, not for how the test made them.
        #expect(
            try await signer.verify(
                forge(header: String(decoding: Data(base64URL: parts[0]) ?? Data(), as: UTF8.self)), now: now
            ).subject == "ann")
    }

    /// Sign out everywhere: every token of the account issued until then is refused, in that app;
    /// a token issued afterwards works, and so do other accounts'.
    @Test func signingOutEverywhereRefusesEarlierTokens() async throws {
        let server = try ServerProcess()
        let phone = try server.token(account: "ann")
        let tablet = try server.token(account: "ann")
        let bob = try server.token(account: "bob")
        let finite = try server.token(account: "ann", app: "finite")
        let signOut = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/ann/sign-out"), token: phone,
            body: Data())
        #expect(signOut.status == 200)
        for token in [phone, tablet] {
            let answer = try await HTTP.get(Self.flows(server), token: token)
            #expect(answer.status == 401 && answer.errorCode == "token_revoked")
        }
        #expect(try await HTTP.get(Self.flows(server, account: "bob"), token: bob).status == 200)
        #expect(try await HTTP.get(Self.flows(server, app: "finite"), token: finite).status == 200)
        #expect(try await HTTP.get(Self.flows(server), token: try server.token(account: "ann")).status == 200)
        // Another account cannot sign ann out.
        let forbidden = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/ann/sign-out"), token: bob,
            body: Data())
        #expect(forbidden.status == 403)

        // The operator's command does the same.
        let fresh = try server.token(account: "ann")
        // Without the server's key ring it is refused, saying what it needs (its audit row names
        // the account by a keyed hash), and changes nothing.
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = server.databaseURL
        environment["ONBOARDING_SERVER_SECRET"] = nil
        environment["ONBOARDING_SERVER_KEYS"] = nil
        let keyless = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("onboarding-server").path,
            ["sign-out", "--app", "growth", "--account", "ann"], environment: environment)
        #expect(
            keyless.status != 0 && keyless.stderr.contains("ONBOARDING_SERVER_SECRET"), "\(keyless.stderr)")
        #expect(try await HTTP.get(Self.flows(server), token: fresh).status == 200)
        let command = try server.command(["sign-out", "--app", "growth", "--account", "ann"])
        #expect(command.status == 0, "\(command.stderr)")
        #expect(try await HTTP.get(Self.flows(server), token: fresh).errorCode == "token_revoked")
    }
}

extension Data {
    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }
}

extension Data {
    init?(base64URL text: String) {
        var text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        self.init(base64Encoded: text)
    }
}

extension String {
    func base64URLDecodedJSON() -> [String: Any]? {
        var text = replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Data(base64Encoded: text).flatMap {
            try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
        }
    }
}
