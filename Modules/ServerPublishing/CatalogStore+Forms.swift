import AccountSync
import CatalogDocuments
import Crypto
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import TourCodec
import TourCore

// A stored catalog's forms: its JSON, its fingerprint, and the store's own mistake.
extension CatalogStore.Entry: TourValueRepresentable {
    /// Without the document: what lists and answers show.
    public var tourValue: TourValue {
        .members([
            "app": .string(app), "version": .int(version), "source": .string(source.rawValue),
            "fingerprint": .string(fingerprint), "rollout": .int(rollout), "salt": .string(salt),
            "recordedAt": .double(recordedAt), "recordedBy": .string(recordedBy),
            "withdrawnAt": withdrawnAt.map(TourValue.double),
            "signedBy": source == .published ? .list(signatures.map { .string($0.key) }) : nil,
        ])
    }
}

extension CatalogStore {
    /// A document's fingerprint: the SHA-256 of its canonical text in lowercase hex, through
    /// swift-crypto. The same digits the devices compute with TourCore's own hasher (the engine
    /// depends on nothing); the publishing tests compare the two.
    package static func fingerprint(_ text: String) -> String {
        ByteText.hex(SHA256.hash(data: Data(text.utf8)))
    }
}

/// A catalog the store wrote is not where it wrote it: the server's mistake.
struct CatalogStoreInvariant: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
