import Crypto
import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A public key that may sign an app's catalog publications (Docs/Security.md): Ed25519, its id
/// derived from the key itself, and when it was retired, if it was.
public struct PublicationKey: Equatable, Sendable {
    public var app: String
    public var id: String
    /// The raw 32-byte Ed25519 public key, base64.
    public var publicKey: String
    /// Seconds since 1970 from which nothing it signed is run or accepted; nil while in use.
    public var retiredAt: Double?

    public init(app: String, publicKey: String, retiredAt: Double? = nil) throws(PublicationKeyError) {
        guard let raw = Data(base64Encoded: publicKey),
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
        else {
            throw PublicationKeyError("a publication key is a raw 32-byte Ed25519 public key in base64")
        }
        self.init(app: app, key: key, retiredAt: retiredAt)
    }

    /// The public half of a key in hand: valid by its type.
    init(app: String, key: Curve25519.Signing.PublicKey, retiredAt: Double? = nil) {
        self.app = app
        publicKey = key.rawRepresentation.base64EncodedString()
        id = Self.id(app: app, raw: key.rawRepresentation)
        self.retiredAt = retiredAt
    }

    /// `APP-` and the first 16 hex digits of the key's SHA-256: the same key always has the same
    /// id, and a file cannot name a key it does not hold.
    static func id(app: String, raw: Data) -> String {
        app + "-" + ByteText.hex(SHA256.hash(data: raw).prefix(8))
    }

    /// Whether the key is retired at `time`.
    public func isRetired(at time: Double) -> Bool { retiredAt.map { time >= $0 } ?? false }
}

public struct PublicationKeyError: Error, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The private half, as `onboarding-server keys new` writes it to a file that stays with the
/// publisher (mode 0600; never on the server, never committed).
public struct PublicationSigningKey: Sendable {
    public let app: String
    private let key: Curve25519.Signing.PrivateKey

    /// A new random key for `app`.
    public init(newFor app: String) {
        self.app = app
        key = Curve25519.Signing.PrivateKey()
    }

    public var publicKey: PublicationKey {
        PublicationKey(app: app, key: key.publicKey)
    }

    public var id: String { publicKey.id }

    /// Signs a document's canonical text.
    public func sign(document: String) throws -> CatalogSignature {
        let signature = try key.signature(for: PublicationSigning.message(document: document))
        return CatalogSignature(key: id, signature: Data(signature).base64EncodedString())
    }

    /// The key file's JSON: `{"format", "app", "id", "privateKey"}`.
    public var fileText: String {
        let value: TourValue = [
            "format": .string(Self.format), "app": .string(app), "id": .string(id),
            "privateKey": .string(key.rawRepresentation.base64EncodedString()),
        ]
        return ((try? value.jsonText()) ?? "") + "\n"
    }

    public static let format = "onboarding-publication-signing-key"

    public init(fileText: String) throws(PublicationKeyError) {
        guard let value = try? TourValue(jsonText: fileText), let object = value.objectValue,
            object["format"]?.stringValue == Self.format, let app = object["app"]?.stringValue,
            let encoded = object["privateKey"]?.stringValue, let raw = Data(base64Encoded: encoded),
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)
        else {
            throw PublicationKeyError(
                """
                not a signing key file of onboarding-server keys new ({\"format\": \"\(Self.format)\", \
                \"app\", \"id\", \"privateKey\"})
                """
            )
        }
        self.app = app
        self.key = key
    }
}

/// Makes and checks the signatures of catalog publications. Every signature covers
/// ``message(document:)``: a fixed context string, then the canonical document text (which names
/// its app and version), so a signature made for anything else never passes for one.
public enum PublicationSigning {
    static let context = "onboarding catalog publication v1\n"

    public static func message(document: String) -> Data { Data((context + document).utf8) }

    /// What the check found.
    public enum Verdict: Equatable, Sendable {
        /// A signature by this trusted, unretired key checks.
        case signed(by: String)
        /// None does; why, in words.
        case refused(String)
    }

    /// Whether `document` carries a good signature by one of `trusted` (keys of the document's app)
    /// that is not retired at `now`, by its own date or by `retirements` (key id to the time it was
    /// retired, as the device learned it).
    public static func verdict(
        document: String, signatures: [CatalogSignature], trusted: [PublicationKey],
        retirements: [String: Double] = [:],
        now: Double
    ) -> Verdict {
        guard !signatures.isEmpty else { return .refused("it carries no signature") }
        let message = message(document: document)
        var reasons: [String] = []
        for signature in signatures.prefix(8) {
            guard let key = trusted.first(where: { $0.id == signature.key }) else {
                reasons.append("key \(signature.key.prefix(80)) is not one this binary trusts")
                continue
            }
            let retired = [key.retiredAt, retirements[key.id]].compactMap { $0 }.min()
            if let retired, now >= retired {
                reasons.append("key \(key.id) was retired on \(day(retired))")
                continue
            }
            guard let raw = Data(base64Encoded: key.publicKey),
                let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: raw),
                let bytes = Data(base64Encoded: signature.signature),
                publicKey.isValidSignature(bytes, for: message)
            else {
                reasons.append(
                    "the signature of key \(key.id) does not match the document (altered after signing?)")
                continue
            }
            return .signed(by: key.id)
        }
        return .refused("no good signature by a trusted key: " + reasons.joined(separator: "; "))
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` of a time, for messages.
    static func day(_ time: Double) -> String {
        ISOTime.wholeSeconds(time)
    }
}

/// What the server tells devices of an app's publication keys with its list of publications: each
/// key's retirement. A device only ever refuses more because of it: it trusts the keys compiled
/// into its binary, never a key the server names.
public struct PublicationKeyStatus: Equatable, Sendable {
    public var id: String
    public var retiredAt: Double?

    public init(id: String, retiredAt: Double?) {
        self.id = id
        self.retiredAt = retiredAt
    }
}

extension PublicationKeyStatus: TourValueCodable {
    public var tourValue: TourValue {
        .members(["id": .string(id), "retiredAt": retiredAt.map(TourValue.double)])
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "publication key")
        self.init(id: try wire.string("id"), retiredAt: try wire.optionalDouble("retiredAt"))
    }
}
