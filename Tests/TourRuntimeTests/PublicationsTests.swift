import Foundation
import Persistence
import Testing
import TourCodec
import TourCore
import TourFixtures
import TourRuntime

/// A device's choice among the publications it keeps (Docs/Publishing.md), without a server.
@Suite("Published catalogs kept on a device")
struct PublicationsTests {
    private struct Handler: ProductHandler {
        /// What the fixture catalog reads and asks for.
        var declarations: CatalogDeclarations {
            CatalogDeclarations(
                context: [
                    .computed("weeks", .number, default: 0, "weeks"), .computed("hasItems", .flag, default: false, "items"),
                    .computed("filledCount", .number, default: 0, "filled"),
                ],
                requests: ["connect"])
        }
        var domainState: DomainStateVocabulary { DomainStateVocabulary(format: 1, [.init("bank", .any, "activate's bank")]) }
        func apply(_ effect: FixtureEffect, to domain: inout [String: TourValue], now: Date) {}
    }

    static let product = Product(catalog: Fixtures.catalog(), handler: Handler(), currentVersion: "2.5")

    /// The fixture catalog as version `version`, its canonical text and fingerprint.
    static func publication(_ version: Int, rollout: Int) throws -> PublishedCatalog {
        var catalog = Fixtures.catalog()
        catalog.version = version
        let text = try CatalogDocument(catalog, declarations: product.handler.vocabulary).text()
        return PublishedCatalog(
            version: version, fingerprint: SHA256Hasher.hex(text.utf8), rollout: rollout,
            salt: Rollout.catalogSalt(app: catalog.app, version: version), document: text)
    }

    static func store(keeping publications: [PublishedCatalog]) throws -> (DeviceStore, String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("publications-\(UUID().uuidString).sqlite").path
        let database = try OnboardingDatabase.open(path: path)
        try database.storePull(app: "test", kept: publications, entityTag: nil, binary: nil, refused: nil, at: Date())
        return (try DeviceStore.open(path: path), path)
    }

    @Test func aPublicationNotNewerThanTheBinarysCatalogIsNeverRun() throws {
        let same = try Self.publication(Self.product.catalog.version, rollout: 100)
        let problems = Publications.problems(
            version: same.version, fingerprint: same.fingerprint, text: same.document, product: Self.product, releases: [],
            others: [])
        #expect(problems == ["version \(same.version) is not newer than the catalog compiled into this binary (version \(same.version))"])
        let (store, path) = try Self.store(keeping: [same])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let chosen = try Publications.choose(store, product: Self.product, releases: []) { "install:x" }
        #expect(chosen.choice.source == .compiled)
    }

    @Test func theNewestIncludedPublicationRunsUnderItsPublishedFingerprint() throws {
        let next = Self.product.catalog.version + 1
        let older = try Self.publication(next, rollout: 100)
        let newer = try Self.publication(next + 1, rollout: 0)
        #expect(
            Publications.problems(
                version: older.version, fingerprint: older.fingerprint, text: older.document, product: Self.product,
                releases: [], others: []
            ).isEmpty)
        let (store, path) = try Self.store(keeping: [newer, older])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let chosen = try Publications.choose(store, product: Self.product, releases: []) { "install:x" }
        // The newer one reaches nobody (0%): the older one, under the fingerprint it was published with.
        #expect(chosen.choice.source == .published)
        #expect(chosen.choice.version == next)
        #expect(chosen.product.catalog.version == next)
        #expect(chosen.product.fingerprint == older.fingerprint)
        #expect(chosen.product.engine.catalog.version == next)
    }

    @Test func aTamperedDocumentIsRefused() throws {
        var tampered = try Self.publication(Self.product.catalog.version + 1, rollout: 100)
        tampered.document = tampered.document.replacingOccurrences(of: "\"Done\"", with: "\"Done!\"")
        let problems = Publications.problems(
            version: tampered.version, fingerprint: tampered.fingerprint, text: tampered.document, product: Self.product,
            releases: [], others: [])
        #expect(problems.first?.contains("is not the fingerprint the server gave") == true, "\(problems)")
    }

    /// The subject is fixed by the file, not by a command's options: the install unless the user
    /// is enrolled for an account with a user-scoped flow.
    @Test func theSubjectIsTheSameOnEveryRunOfAFile() throws {
        let (store, path) = try Self.store(keeping: [])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try Publications.subject(store, product: Self.product, user: "ann")
        #expect(first.hasPrefix("install:"))
        #expect(try Publications.subject(store, product: Self.product, user: "ben") == first)
        #expect(try Publications.subject(DeviceStore.open(path: path), product: Self.product, user: "ann") == first)
    }
}
