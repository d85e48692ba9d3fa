import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOHTTP1
import ServerDatabase
import TourCodec

/// An identity provider's signing keys (a JWKS), as jwt-kit's key collection: fetched from the
/// provider's URL and kept for the lifetime its answer gives (`Cache-Control: max-age`, held between
/// 5 minutes and a day), or read from a file. A token naming a key id the keys do not hold makes
/// them fetched again (at most once per ``minimumRefetch``), so a provider that rotates its keys
/// keeps working without a restart. A fetch that fails keeps the keys held, for up to a day past
/// their lifetime; with none held, the token is refused.
public actor JWKSource {
    public enum Origin: Sendable, Equatable {
        case url(URL)
        case file(String)
    }

    public nonisolated let origin: Origin
    private let http: HTTPClient?
    private let logger: Logger
    private var keys: JWTKeyCollection?
    /// The algorithm of each key, by its id (nil: the key published without one).
    private var algorithms: [String?: String] = [:]
    private var expires = Date.distantPast
    /// When a token naming an unknown key id last made the keys fetched.
    private var lastUnknownKidFetch = Date.distantPast
    private var inFlight: Task<Void, any Error>?

    /// Seconds between two fetches caused by an unknown key id: a stream of tokens naming made-up
    /// ids fetches at most this often (a fetch for the keys' lifetime does not count).
    static let minimumRefetch: TimeInterval = 10
    package static let timeout: TimeAmount = .seconds(5)
    static let lifetimeBounds: ClosedRange<TimeInterval> = 300...86_400
    package static let maximumBytes = 1 << 20

    public init(_ origin: Origin, http: HTTPClient? = nil, logger: Logger) {
        self.origin = origin
        self.http = http
        self.logger = logger
    }

    /// The keys to check a token whose header names `kid`: fetched when none are held, when held
    /// ones are past their lifetime, or when they lack `kid`.
    ///
    /// Throws ``JWKSourceError/unavailable`` when the keys could not be fetched and those held (if
    /// any) cannot check this token: the provider, not the token, is at fault (a 503, not a 401).
    private func keys(for kid: String?) async throws -> (JWTKeyCollection, algorithm: String?) {
        (try await collection(for: kid), algorithms[kid])
    }

    private func collection(for kid: String?) async throws -> JWTKeyCollection {
        let now = Date()
        let due = keys == nil || now >= expires
        let lacksKid = kid.map { algorithms[$0] == nil } ?? false
        let unknownKid = !due && lacksKid && now.timeIntervalSince(lastUnknownKidFetch) >= Self.minimumRefetch
        if due || unknownKid {
            if unknownKid { lastUnknownKidFetch = now }
            do {
                try await refresh()
            } catch {
                logger.inRequest.warning(
                    "the identity provider's keys were not fetched",
                    metadata: ["jwks": "\(origin)", "error": "\(error)"])
                guard let keys, now < expires.addingTimeInterval(86_400), !lacksKid else {
                    throw JWKSourceError.unavailable(
                        "the identity provider's keys could not be fetched: \(error)")
                }
                return keys
            }
        }
        guard let keys else { throw JWKSourceError("no keys of the identity provider are held") }
        return keys
    }

    /// The payload of `token`, checked with the algorithm of the key that verifies it: a header
    /// naming any other algorithm is refused before the signature is looked at (RFC 8725, 3.1), so
    /// the token's own header never chooses how it is checked. (The check runs outside the actor:
    /// tokens are checked in parallel.)
    public nonisolated func verify<Payload: JWTPayload>(_ token: String, as payload: Payload.Type)
        async throws -> Payload
    {
        guard Self.isCanonical(token) else {
            throw JWKSourceError("the token is not a compact JWS in base64url's one spelling")
        }
        let header = Self.header(of: token)
        let (keys, expected) = try await keys(for: header.keyID)
        guard let named = header.algorithm, let expected, named == expected else {
            throw JWKSourceError(
                """
                the token's header names \(header.algorithm ?? "no algorithm"), not its key's \
                \(expected ?? "(no such key)")
                """
            )
        }
        return try await keys.verify(token, as: Payload.self)
    }

    /// Fetches (or reads) the keys now; concurrent callers share one fetch.
    public func refresh() async throws {
        if let inFlight { return try await inFlight.value }
        let task = Task { try await self.load() }
        inFlight = task
        defer { inFlight = nil }
        try await task.value
    }

    private func load() async throws {
        let (text, lifetime) = try await read()
        let (collection, algorithms) = try await Self.collection(jwks: text)
        keys = collection
        self.algorithms = algorithms
        expires = Date().addingTimeInterval(lifetime)
    }

    private func read() async throws -> (String, TimeInterval) {
        switch origin {
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw JWKSourceError("the JWKS file \(path) cannot be read")
            }
            // A file is read again when a token names a key it lacks (or after five minutes).
            return (String(decoding: data, as: UTF8.self), Self.lifetimeBounds.lowerBound)
        case .url(let url):
            guard let http else { throw JWKSourceError("no HTTP client to fetch \(url)") }
            var request = HTTPClientRequest(url: url.absoluteString)
            request.headers.add(name: "Accept", value: "application/json")
            let response = try await http.execute(request, timeout: Self.timeout)
            guard response.status == .ok else {
                throw JWKSourceError("\(url) answered \(response.status.code)")
            }
            let body = try await response.body.collect(upTo: Self.maximumBytes)
            return (
                String(buffer: body),
                Self.lifetime(cacheControl: response.headers.first(name: "Cache-Control"))
            )
        }
    }

    /// The lifetime a `Cache-Control` header gives (its `max-age`), held within ``lifetimeBounds``;
    /// an hour without one.
    static func lifetime(cacheControl: String?) -> TimeInterval {
        let maxAge = cacheControl?.split(separator: ",").lazy.compactMap { directive -> TimeInterval? in
            let parts = directive.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            return parts.count == 2 && parts[0] == "max-age" ? TimeInterval(parts[1]) : nil
        }.first
        return min(max(maxAge ?? 3600, lifetimeBounds.lowerBound), lifetimeBounds.upperBound)
    }

    /// The algorithms accepted: asymmetric only (an HMAC or `none` token is never an identity).
    package static let algorithms: Set<String> = ["RS256", "ES256"]

    /// A key collection of the RS256 and ES256 keys of a JWKS (others are left out and logged by
    /// the caller's refusal when none is left), and each key's algorithm by its id.
    static func collection(jwks: String) async throws -> (JWTKeyCollection, [String?: String]) {
        do {
            let set = try JSONDecoder().decode(JWKS.self, from: Data(jwks.utf8))
            return try await collection(set)
        } catch let error as JWKSourceError {
            throw error
        } catch {
            throw JWKSourceError("the JWKS is not a key set: \(error)")
        }
    }

    private static func collection(_ set: JWKS) async throws -> (JWTKeyCollection, [String?: String]) {
        let collection = JWTKeyCollection()
        var algorithms: [String?: String] = [:]
        for key in set.keys {
            guard let algorithm = key.algorithm?.rawValue ?? defaultAlgorithm(of: key),
                Self.algorithms.contains(algorithm)
            else {
                continue
            }
            do { try await collection.add(jwk: key) } catch { continue }
            algorithms[key.keyIdentifier?.string] = algorithm
        }
        guard !algorithms.isEmpty else {
            throw JWKSourceError("the JWKS holds no RS256 or ES256 key; only those are accepted")
        }
        return (collection, algorithms)
    }

    private static func defaultAlgorithm(of key: JWK) -> String? {
        switch key.keyType {
        case .rsa: "RS256"
        case .ecdsa: key.curve?.rawValue == "P-256" ? "ES256" : nil
        default: nil
        }
    }

    /// Whether `token` is a compact JWS written the one way RFC 7515 writes it: three parts, each
    /// base64url without padding and with the unused low bits of its last character zero
    /// (``ByteText/data(base64URL:)``), and a signature. A JWS library decodes leniently, so
    /// without this a genuine token with its last character's unused bits changed would check
    /// too: a second text for one token, which a memory of checked tokens keyed by text, or a
    /// list of refused ones, would take for another.
    public static func isCanonical(_ token: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && !parts[2].isEmpty
            && parts.allSatisfy { !$0.contains("=") && ByteText.data(base64URL: $0) != nil }
    }

    /// The `alg` and `kid` a compact JWS's header names, unchecked (read before any key is trusted:
    /// they only choose which keys, and whose, to check it with).
    static func header(of token: String) -> (algorithm: String?, keyID: String?) {
        guard let header = token.split(separator: ".", maxSplits: 1).first, header.utf8.count <= 4096,
            let data = ByteText.data(base64URL: header),
            let object = (try? TourValue(jsonUTF8: data))?.objectValue
        else { return (nil, nil) }
        return (
            object["alg"]?.stringValue.map { String($0.prefix(32)) },
            object["kid"]?.stringValue.map { String($0.prefix(256)) }
        )
    }
}

public struct JWKSourceError: Error, CustomStringConvertible {
    public var description: String
    /// Whether the provider did not answer (try again), rather than answered something unusable.
    public var isUnavailable = false
    package init(_ description: String) { self.description = description }

    static func unavailable(_ description: String) -> JWKSourceError {
        var error = JWKSourceError(description)
        error.isUnavailable = true
        return error
    }
}
