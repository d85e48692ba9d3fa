import AccountSync
import CatalogDocuments
import Foundation
import LockedInOnboarding
import Persistence
import TourCore
import TourRuntime

/// What checking a publication's signature costs a launch: LockedIn's catalog published
/// as the next version, signed, kept by a device; the catalog choice every command makes with it
/// (read the kept document, check its Ed25519 signature and SHA-256, read the document) against the
/// same choice on a device that keeps none (the path of every product with no publication).
enum SignatureCheck {
    struct Figures {
        var verify: Double
        var chooseSigned: Double
        var chooseNone: Double
        var documentBytes: Int
    }

    static func run(folder: URL, rounds: Int) throws -> Figures {
        let product = LockedInOnboarding.registration.make(RunEnvironment(databasePath: ":memory:"))
        var catalog = product.catalog
        catalog.version += 1
        let text = try CatalogDocument(catalog, declarations: product.handler.vocabulary).text()
        let key = PublicationSigningKey(newFor: catalog.app)
        let publication = PublishedCatalog(
            version: catalog.version, fingerprint: SHA256Hasher.hex(text.utf8), rollout: 100,
            salt: Rollout.catalogSalt(app: catalog.app, version: catalog.version), document: text,
            signatures: [try key.sign(document: text)])
        let keys = [key.publicKey]

        var verifies: [Double] = []
        for _ in 0..<rounds {
            let began = ContinuousClock.now
            let verdict = PublicationSigning.verdict(
                document: text, signatures: publication.signatures, trusted: keys,
                now: Date().timeIntervalSince1970)
            verifies.append(seconds(ContinuousClock.now - began))
            guard case .signed = verdict else {
                throw BenchFailure("the bench's own signature does not check")
            }
        }

        func choices(keeping kept: [PublishedCatalog], name: String) throws -> [Double] {
            let path = folder.appendingPathComponent("\(name).sqlite").path
            let database = try OnboardingDatabase.open(path: path)
            try database.storePull(
                app: catalog.app, kept: kept, entityTag: nil, binary: product.fingerprint, refused: nil,
                at: Date())
            let store = try DeviceStore.open(path: path)
            var times: [Double] = []
            for _ in 0..<rounds {
                let began = ContinuousClock.now
                let chosen = try Publications.choose(
                    store, product: product, releases: [], trustedKeys: keys, now: Date()
                ) { "install:bench" }
                times.append(seconds(ContinuousClock.now - began))
                guard chosen.choice.source == (kept.isEmpty ? .compiled : .published) else {
                    throw BenchFailure(
                        """
                        the bench's publication was not \
                        chosen: \(chosen.choice.reason) \(chosen.choice.refused)
                        """
                    )
                }
            }
            return times
        }
        let signed = try choices(keeping: [publication], name: "signed")
        let none = try choices(keeping: [], name: "none")
        return Figures(
            verify: percentile(verifies.sorted(), 0.5), chooseSigned: percentile(signed.sorted(), 0.5),
            chooseNone: percentile(none.sorted(), 0.5), documentBytes: text.utf8.count)
    }
}
