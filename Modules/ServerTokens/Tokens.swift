import Crypto
import Foundation
import JWTKit
import Synchronization
import TourCodec

/// What a token lets its bearer do.
public struct TokenClaims: Equatable, Sendable {
    public enum Scope: String, Sendable {
        /// Read and write one account's records, in one app.
        case account
        /// The one shared admin token of releases before 0.19: refused since
        /// (``TokenSigner/Failure/adminRetired``).
        case admin
        /// A named person's credential: what it may do is the person's roles, read from the
        /// database on every request (Docs/Security.md), so removing a role or revoking the
        /// credential takes effect on the next request.
        case person
        /// One install of an app without sign-in (``Installs``): reads and writes the records of
        /// its own subject, `install.<id>`, in one app.
        case install
    }

    /// The account (for an account token) or the person's name (for a person's credential).
    public var subject: String
    public var scope: Scope
    /// The app the token is for. Required for an account token (a token for `ann` in Finite does
    /// not open `ann` in Growth); an admin token without one reads every app's reports.
    public var app: String?
    /// When it was issued, in seconds since 1970 (with a fraction: a sign-out at 12:00:00.400
    /// refuses a token issued at 12:00:00.300 and keeps one issued at 12:00:00.500).
    public var issuedAt: Double
    /// Seconds since 1970 after which the token is refused.
    public var expires: Int64
    /// The id of the key that signed it; set by ``TokenSigner/sign(_:)``.
    public var keyID: String?
    /// A person's credential: the id of its row in `person_credentials`, which must be live.
    public var credential: String?

    public init(
        subject: String, scope: Scope, app: String?, issuedAt: Double = Date().timeIntervalSince1970,
        expires: Int64, credential: String? = nil
    ) {
        self.credential = credential
        self.subject = subject
        self.scope = scope
        self.app = app
        self.issuedAt = issuedAt
        self.expires = expires
    }
}

/// The token's payload: `{"sub", "scope", "app", "iat", "exp", "kid", "cid"}`.
extension TokenClaims: TourValueCodable {
    public var tourValue: TourValue {
        .members([
            "sub": .string(subject), "scope": .string(scope.rawValue), "app": app.map(TourValue.string),
            "iat": .double(issuedAt), "exp": .int(Int(expires)), "kid": keyID.map(TourValue.string),
            "cid": credential.map(TourValue.string),
        ])
    }

    public init(tourValue: TourValue) throws {
        let payload = try TourValueReader(tourValue, as: "token claims")
        self.init(
            subject: try payload.string("sub"), scope: try payload.raw("scope"),
            app: try payload.optionalString("app"),
            issuedAt: try payload.double("iat"), expires: Int64(try payload.int("exp")),
            credential: try payload.optionalString("cid"))
        keyID = try payload.optionalString("kid")
    }
}

/// One key of the server's key ring: an id that tokens name, and its secret.
public struct TokenKey: Sendable {
    public var id: String
    /// Internal for the keys derived from it (``TokenSigner/derivedKey(_:keyID:)``); never printed.
    var key: SymmetricKey

    /// The shortest secret accepted, in bytes.
    public static let minimumSecretLength = 32

    public init(id: String, secret: String) throws(ServerConfigurationError) {
        guard !id.isEmpty, id.utf8.count <= 64,
            id.unicodeScalars.allSatisfy({
                $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)
            })
        else {
            throw ServerConfigurationError(
                "a key id must be 1 to 64 letters, digits, '-', '_' or '.' (got '\(id)')")
        }
        guard secret.utf8.count >= Self.minimumSecretLength else {
            throw ServerConfigurationError(
                """
                the secret of key '\(id)' must be at least \(Self.minimumSecretLength) bytes (got \
                \(secret.utf8.count))
                """
            )
        }
        self.id = id
        key = SymmetricKey(data: Data(secret.utf8))
    }
}

/// Signs and checks the server's own bearer tokens: JWTs (RFC 7519) made and checked by jwt-kit,
/// HS256 under a key of the server's key ring, the key named in the header (`kid`), with `iss`
/// `onboarding-server`, `sub`, `iat`, `exp`, `aud` (the app, for an account token), `scope` and,
/// for a person's credential, `cid`. Any JWT tool or gateway reads them. Nothing about a token is
/// stored: the server checks the signature, the expiry and the account's sign-out cut-off on every
/// request (a signature this process has already checked is remembered, ``VerifiedTokens``; the
/// expiry and the cut-off are checked every time).
///
/// Tokens of the format before 0.22 (`obt2.<claims>.<HMAC>`) are still accepted until they expire
/// (Docs/Security.md says when their support ends); none is made any more.
///
/// Several keys are accepted at once, so a key is rotated with overlap: add the new key first
/// (it signs from then on), keep the old one until the tokens it signed have expired, then drop
/// it (Docs/Server.md, "Rotating keys").
public struct TokenSigner: Sendable {
    /// The format of 0.10 to 0.21, accepted until its tokens expire.
    static let prefix = "obt2"
    /// The format before 0.10, which named no app, no issue time and no key.
    static let outdatedPrefix = "obt1"
    public static let minimumSecretLength = TokenKey.minimumSecretLength
    /// The key that signs new tokens, then the others that are still accepted.
    public let keys: [TokenKey]
    /// Tokens whose signature a key of this ring checked, shared by copies of this signer.
    let verified = VerifiedTokens()
    /// The ring as jwt-kit's key collection (made on first use: adding a key is asynchronous).
    private let collection: JWTRing
    /// Each key's pseudonym key for subjects, derived once (a push names its subject's pseudonyms).
    let subjectPseudonymKeys: [SymmetricKey]
    /// The `iss` of every token this server makes.
    public static let issuer = "onboarding-server"

    /// One key, with the id `default` (`ONBOARDING_SERVER_SECRET`).
    public init(secret: String) throws(ServerConfigurationError) {
        try self.init(keys: [TokenKey(id: "default", secret: secret)])
    }

    /// Several keys; the first signs.
    public init(keys: [TokenKey]) throws(ServerConfigurationError) {
        guard !keys.isEmpty else {
            throw ServerConfigurationError("the key ring is empty: give at least one key")
        }
        var seen: Set<String> = []
        for key in keys where !seen.insert(key.id).inserted {
            throw ServerConfigurationError("the key id '\(key.id)' is given twice")
        }
        self.keys = keys
        collection = JWTRing(keys)
        subjectPseudonymKeys = keys.map { Self.derive(from: $0, for: "pseudonym subject") }
    }

    /// `ONBOARDING_SERVER_KEYS`: `ID=SECRET` entries separated by spaces or new lines, the signing
    /// key first (`2026-12=… 2026-11=…`).
    public init(keyRing text: String) throws(ServerConfigurationError) {
        var keys: [TokenKey] = []
        for entry in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }) {
            let parts = entry.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else {
                throw ServerConfigurationError(
                    "ONBOARDING_SERVER_KEYS holds ID=SECRET entries separated by spaces; an entry has no '='")
            }
            keys.append(try TokenKey(id: String(parts[0]), secret: String(parts[1])))
        }
        try self.init(keys: keys)
    }

    public var signingKeyID: String { keys[0].id }

    /// A JWT of `claims`, signed by the ring's first key.
    public func sign(_ claims: TokenClaims) async -> String {
        let payload = ServerTokenPayload(claims)
        do {
            return try await collection.made().sign(payload, kid: JWKIdentifier(string: keys[0].id))
        } catch {
            // HS256 over claims of strings and finite numbers cannot fail to sign.
            preconditionFailure("a token could not be signed: \(error)")
        }
    }

    /// `text` with a MAC of the signing key: for a value this server hands out and must get back
    /// unchanged (the state of a sign-in through the identity provider, in a cookie).
    package func seal(_ text: String) -> String {
        let payload = ByteText.base64URL(Data(text.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data("seal.\(payload)".utf8), using: keys[0].key)
        return "\(payload).\(ByteText.base64URL(Data(mac)))"
    }

    /// The text ``seal(_:)`` sealed, if a key of the ring made its MAC.
    package func unseal(_ sealed: String) -> String? {
        let parts = sealed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = ByteText.data(base64URL: parts[0]),
            let mac = ByteText.data(base64URL: parts[1])
        else {
            return nil
        }
        let signed = Data("seal.\(parts[0])".utf8)
        guard
            keys.contains(where: {
                HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: signed, using: $0.key)
            })
        else {
            return nil
        }
        return String(data: payload, encoding: .utf8)
    }

    public enum Failure: Error, Equatable {
        case malformed, badSignature, expired, unknownKey, outdated
        /// A shared admin token (before 0.19): each person now has a credential of their own.
        case adminRetired
    }

    /// Whether `token` is one of this server's (as opposed to an identity provider's JWT): the
    /// old `obt` forms, or a JWT signed with HS256, which an identity provider's never is (those
    /// are RS256 or ES256, ``JWKSource/algorithms``), so neither path ever checks the other's.
    /// A token already checked by this signer is answered from memory, without reading its header.
    public func isOwnToken(_ token: String) -> Bool {
        verified.claims(of: token) != nil || token.hasPrefix(Self.prefix + ".")
            || token.hasPrefix(Self.outdatedPrefix + ".") || JWKSource.header(of: token).algorithm == "HS256"
    }

    /// The scope a token of this server's says it has, unchecked: for choosing the words of a
    /// refusal only (which credential to ask for anew), never for a decision.
    public static func statedScope(of token: String) -> TokenClaims.Scope? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].utf8.count <= 8192, let data = ByteText.data(base64URL: parts[1]),
            let scope = (try? TourValue(jsonUTF8: data))?.objectValue?["scope"]?.stringValue
        else { return nil }
        return TokenClaims.Scope(rawValue: String(scope))
    }

    /// The token's claims if a key of the ring signed it and it has not expired at `now`.
    public func verify(_ token: String, now: Date) async throws(Failure) -> TokenClaims {
        if let claims = verified.claims(of: token) {
            guard Double(claims.expires) > now.timeIntervalSince1970 else { throw .expired }
            return claims
        }
        let claims = try await check(token, now: now)
        verified.remember(token, claims)
        return claims
    }

    /// ``verify(_:now:)`` without the memory of checked tokens: the form, the key, the signature,
    /// the expiry and the scope.
    func check(_ token: String, now: Date) async throws(Failure) -> TokenClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        if parts.first.map(String.init) == Self.outdatedPrefix { throw .outdated }
        if parts.first.map(String.init) == Self.prefix { return try checkOBT2(token, now: now) }
        guard parts.count == 3, token.utf8.count <= 8192, JWKSource.isCanonical(token) else {
            throw .malformed
        }
        // The header names the key; the token is trusted only once that key's signature checks.
        let header = JWKSource.header(of: token)
        guard header.algorithm == "HS256", let keyID = header.keyID else { throw .malformed }
        guard keys.contains(where: { $0.id == keyID }) else { throw .unknownKey }
        let payload: ServerTokenPayload
        do {
            payload = try await collection.made().verify(token, as: ServerTokenPayload.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw .badSignature
        } catch {
            throw .malformed
        }
        guard var claims = payload.claims else { throw .malformed }
        claims.keyID = keyID
        return try Self.checked(claims, now: now)
    }

    /// Expiry and scope, the same for both forms.
    private static func checked(_ claims: TokenClaims, now: Date) throws(Failure) -> TokenClaims {
        guard Double(claims.expires) > now.timeIntervalSince1970 else { throw .expired }
        switch claims.scope {
        case .admin: throw .adminRetired
        case .account, .install: guard claims.app != nil else { throw .malformed }
        case .person: guard claims.credential != nil, claims.app == nil else { throw .malformed }
        }
        return claims
    }

    /// An `obt2` token (0.10 to 0.21): accepted until it expires.
    private func checkOBT2(_ token: String, now: Date) throws(Failure) -> TokenClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.prefix, let signature = ByteText.data(base64URL: parts[2]),
            let payload = ByteText.data(base64URL: parts[1])
        else { throw .malformed }
        // The claims name their key; they are trusted only once that key's signature checks.
        guard let claims = try? TokenClaims(jsonUTF8: payload) else { throw .malformed }
        guard let key = keys.first(where: { $0.id == claims.keyID }) else { throw .unknownKey }
        let signed = Data("\(parts[0]).\(parts[1])".utf8)
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: key.key) else {
            throw .badSignature
        }
        return try Self.checked(claims, now: now)
    }
}

/// The claims of tokens whose signature was checked, by the token's whole text (signature
/// included, so a changed token is a different key and is checked afresh). A device sends the same
/// token with every push, and checking it again (base64, JSON, HMAC) is a visible part of a push's
/// CPU (Docs/Performance.md, section 5). The keys of a signer never change, so a
/// signature once good stays good; expiry is checked on every use, and a token's sign-out cut-off
/// is checked in the request's own statement. Bounded: at `capacity` entries it starts afresh.
final class VerifiedTokens: Sendable {
    private let entries = Mutex<[String: TokenClaims]>([:])
    let capacity: Int

    init(capacity: Int = 20_000) { self.capacity = capacity }

    func claims(of token: String) -> TokenClaims? { entries.withLock { $0[token] } }

    func remember(_ token: String, _ claims: TokenClaims) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[token] = claims
        }
    }
}

/// The key ring as jwt-kit's key collection, made once (adding keys to the collection, an actor,
/// is asynchronous) and shared by copies of a signer.
final class JWTRing: Sendable {
    private let keys: [TokenKey]
    private let collection = Mutex<JWTKeyCollection?>(nil)

    init(_ keys: [TokenKey]) { self.keys = keys }

    func made() async -> JWTKeyCollection {
        if let collection = collection.withLock({ $0 }) { return collection }
        let collection = JWTKeyCollection()
        for key in keys {
            await collection.add(
                hmac: HMACKey(key: key.key), digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.id))
        }
        return self.collection.withLock { made in
            if let earlier = made { return earlier }
            made = collection
            return collection
        }
    }
}

/// The payload of the server's JWT. Only the signature is checked by jwt-kit: the expiry is
/// checked against the request's clock by ``TokenSigner`` (as for the old form), the audience
/// against the request's app by the routes.
struct ServerTokenPayload: JWTPayload {
    var iss: IssuerClaim
    var sub: SubjectClaim
    var aud: AudienceClaim?
    var iat: IssuedAtClaim
    var exp: ExpirationClaim
    var scope: String
    var cid: String?

    init(_ claims: TokenClaims) {
        iss = IssuerClaim(value: TokenSigner.issuer)
        sub = SubjectClaim(value: claims.subject)
        aud = claims.app.map { AudienceClaim(value: $0) }
        iat = IssuedAtClaim(value: Date(timeIntervalSince1970: claims.issuedAt))
        exp = ExpirationClaim(value: Date(timeIntervalSince1970: Double(claims.expires)))
        scope = claims.scope.rawValue
        cid = claims.credential
    }

    /// The claims, when the payload is one this server makes: its issuer, one audience at most,
    /// a scope it knows.
    var claims: TokenClaims? {
        guard iss.value == TokenSigner.issuer, let scope = TokenClaims.Scope(rawValue: scope),
            (aud?.value.count ?? 1) == 1
        else { return nil }
        return TokenClaims(
            subject: sub.value, scope: scope, app: aud?.value.first,
            issuedAt: iat.value.timeIntervalSince1970,
            expires: Int64(exp.value.timeIntervalSince1970.rounded()), credential: cid)
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {
        // The collection holds only the ring's HMAC keys; this refuses anything else outright.
        guard algorithm.name == "HS256" else {
            throw JWTError.generic(identifier: "alg", reason: "only HS256 is accepted")
        }
    }
}
