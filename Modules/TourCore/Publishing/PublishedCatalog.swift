import TourCodec

/// A catalog document published on the account server, as a device receives and keeps it
/// (Docs/Publishing.md): the canonical text, its fingerprint, the rollout that decides who runs it,
/// and the publisher's signatures over it.
public struct PublishedCatalog: Equatable, Sendable {
    public var version: Int
    /// SHA-256 of ``document``, hex: the device checks it before anything else.
    public var fingerprint: String
    /// The percentage of subjects it reaches.
    public var rollout: Int
    /// What a subject is hashed with (``Rollout``).
    public var salt: String
    /// The canonical document text.
    public var document: String
    /// Signatures over ``document`` by the app's publication keys (Docs/Security.md): a device runs
    /// the document only when one is by a key its binary trusts and has not retired.
    public var signatures: [CatalogSignature]

    public init(
        version: Int, fingerprint: String, rollout: Int, salt: String, document: String,
        signatures: [CatalogSignature] = []
    ) {
        self.version = version
        self.fingerprint = fingerprint
        self.rollout = rollout
        self.salt = salt
        self.document = document
        self.signatures = signatures
    }
}

extension PublishedCatalog: TourValueCodable {
    public var tourValue: TourValue {
        [
            "version": .int(version), "fingerprint": .string(fingerprint), "rollout": .int(rollout),
            "salt": .string(salt),
            "document": .string(document), "signatures": signatures.tourValue,
        ]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "publication")
        self.init(
            version: try wire.int("version"), fingerprint: try wire.string("fingerprint"),
            rollout: try wire.int("rollout"),
            salt: try wire.string("salt"), document: try wire.string("document"),
            signatures: wire.value("signatures") == nil ? [] : try wire.list("signatures"))
    }
}

/// One signature over a publication's document: the signing key's id and the Ed25519 signature,
/// base64. Made and checked in `AccountSync.PublicationSigning` (swift-crypto), never here.
public struct CatalogSignature: Equatable, Hashable, Sendable {
    public var key: String
    public var signature: String

    public init(key: String, signature: String) {
        self.key = key
        self.signature = signature
    }
}

extension CatalogSignature: TourValueCodable {
    public var tourValue: TourValue { ["key": .string(key), "signature": .string(signature)] }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "signature")
        self.init(key: try wire.string("key"), signature: try wire.string("signature"))
    }
}
