import TourCodec

/// One published catalog document: as `GET /v1/apps/{app}/catalogs` lists it, and as a device
/// keeps it once verified (`published_catalog`).
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

    public init(version: Int, fingerprint: String, rollout: Int, salt: String, document: String) {
        self.version = version
        self.fingerprint = fingerprint
        self.rollout = rollout
        self.salt = salt
        self.document = document
    }
}

extension PublishedCatalog: TourValueCodable {
    public var tourValue: TourValue {
        [
            "version": .int(version), "fingerprint": .string(fingerprint), "rollout": .int(rollout), "salt": .string(salt),
            "document": .string(document),
        ]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "publication")
        self.init(
            version: try wire.int("version"), fingerprint: try wire.string("fingerprint"), rollout: try wire.int("rollout"),
            salt: try wire.string("salt"), document: try wire.string("document"))
    }
}
