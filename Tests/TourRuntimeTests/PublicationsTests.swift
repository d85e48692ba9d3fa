import AccountSync
import CSQLite
import CatalogDocuments
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
                    .computed("weeks", .number, default: 0, "weeks"),
                    .computed("hasItems", .flag, default: false, "items"),
                    .computed("filledCount", .number, default: 0, "filled"),
                ],
                requests: ["connect"])
        }
        var domainState: DomainStateVocabulary {
            DomainStateVocabulary(format: 1, [.init("bank", .any, "activate's bank")])
        }
        func apply(_ effect: FixtureEffect, to domain: inout [String: TourValue], now: Date) {}
    }

    static let product = Product(catalog: Fixtures.catalog(), handler: Handler(), currentVersion: "2.5")
    /// The publisher's key, made by the test; the binary trusts its public half.
    static let key = PublicationSigningKey(newFor: "test")
    static let trusted = [key.publicKey]
    static var trust: PublicationTrust { PublicationTrust(keys: trusted, now: Date().timeIntervalSince1970) }

    /// The fixture catalog as version `version`, its canonical text and fingerprint, signed by `key`.
    static func publication(_ version: Int, rollout: Int, signedBy signer: PublicationSigningKey? = key)
        throws -> PublishedCatalog
    {
        var catalog = Fixtures.catalog()
        catalog.version = version
        let text = try CatalogDocument(catalog, declarations: product.handler.vocabulary).text()
        return PublishedCatalog(
            version: version, fingerprint: SHA256Hasher.hex(text.utf8), rollout: rollout,
            salt: Rollout.catalogSalt(app: catalog.app, version: version), document: text,
            signatures: try signer.map { [try $0.sign(document: text)] } ?? [])
    }

    static func store(keeping publications: [PublishedCatalog], binary: String? = nil) throws -> (
        DeviceStore, String
    ) {
        let path = Scratch.folder.appendingPathComponent("publications-\(UUID().uuidString).sqlite").path
        let database = try OnboardingDatabase.open(path: path)
        try database.storePull(
            app: "test", kept: publications, entityTag: nil, binary: binary, refused: nil, at: Date())
        return (try DeviceStore.open(path: path), path)
    }

    static func problems(_ publication: PublishedCatalog, trust: PublicationTrust = trust) -> [String] {
        Publications.problems(
            version: publication.version, fingerprint: publication.fingerprint, text: publication.document,
            signatures: publication.signatures, product: product, releases: [], others: [], trust: trust)
    }

    static func choose(_ store: DeviceStore, keys: [PublicationKey] = trusted, now: Date = Date()) throws -> (
        product: Product, choice: CatalogChoice
    ) {
        try Publications.choose(store, product: product, releases: [], trustedKeys: keys, now: now) {
            "install:x"
        }
    }

    /// The keys are read only when a publication is kept: a launch that runs its compiled catalog
    /// never parses one (which would start the signature library for nothing).
    /// What `Cache-Control` tells a device about the publications list's freshness.
    @Test(
        arguments: [
            ("private, max-age=300", 300), ("max-age=0", 0), ("MAX-AGE = 60 , private", 60), ("no-cache", 0),
            ("no-store", 0),
            ("private", nil), (nil, nil), ("max-age=-5", nil), ("max-age=abc", nil),
            ("max-age=99999999999", 366 * 86_400),
        ] as [(String?, Int?)])
    func theListIsFreshForTheServersMaxAge(header: String?, seconds: Int?) {
        #expect(CatalogPull.maxAge(cacheControl: header) == seconds)
    }

    @Test func theTrustedKeysAreReadOnlyWhenAPublicationIsKept() throws {
        final class Asked: @unchecked Sendable { var count = 0 }
        let asked = Asked()
        func keys() -> [PublicationKey] {
            asked.count += 1
            return Self.trusted
        }
        let (empty, emptyPath) = try Self.store(keeping: [])
        defer { try? FileManager.default.removeItem(atPath: emptyPath) }
        _ = try Publications.choose(
            empty, product: Self.product, releases: [], trustedKeys: keys(), now: Date()
        ) { "install:x" }
        #expect(asked.count == 0)
        let (kept, keptPath) = try Self.store(keeping: [
            try Self.publication(Self.product.catalog.version + 1, rollout: 100)
        ])
        defer { try? FileManager.default.removeItem(atPath: keptPath) }
        let chosen = try Publications.choose(
            kept, product: Self.product, releases: [], trustedKeys: keys(), now: Date()
        ) { "install:x" }
        #expect(asked.count == 1)
        #expect(chosen.choice.source == .published)
    }

    @Test func aPublicationNotNewerThanTheBinarysCatalogIsNeverRun() throws {
        let same = try Self.publication(Self.product.catalog.version, rollout: 100)
        let problems = Self.problems(same)
        #expect(
            problems == [
                """
                version \(same.version) is not newer than the catalog compiled into this binary \
                (version \(same.version))
                """
            ])
        let (store, path) = try Self.store(keeping: [same])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let chosen = try Self.choose(store)
        #expect(chosen.choice.source == .compiled)
    }

    @Test func theNewestIncludedPublicationRunsUnderItsPublishedFingerprint() throws {
        let next = Self.product.catalog.version + 1
        let older = try Self.publication(next, rollout: 100)
        let newer = try Self.publication(next + 1, rollout: 0)
        #expect(Self.problems(older).isEmpty)
        let (store, path) = try Self.store(keeping: [newer, older])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let chosen = try Self.choose(store)
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
        // Altered after signing: the signature no longer matches, whatever the fingerprint says.
        let problems = Self.problems(tampered)
        #expect(problems.first?.contains("does not match the document") == true, "\(problems)")
        tampered.fingerprint = SHA256Hasher.hex(tampered.document.utf8)
        #expect(Self.problems(tampered).first?.contains("does not match the document") == true)
        // Signed, but not what the fingerprint names: refused too.
        var misnamed = try Self.publication(Self.product.catalog.version + 1, rollout: 100)
        misnamed.fingerprint = String(repeating: "0", count: 64)
        #expect(Self.problems(misnamed).first?.contains("is not the fingerprint the server gave") == true)
    }

    /// Only a signature by a key the binary trusts, unretired, lets a document run.
    @Test func unsignedForeignAndRetiredSignaturesAreRefused() throws {
        let next = Self.product.catalog.version + 1
        #expect(
            Self.problems(try Self.publication(next, rollout: 100, signedBy: nil)) == [
                "it carries no signature"
            ])
        let stranger = PublicationSigningKey(newFor: "test")
        let foreign = Self.problems(try Self.publication(next, rollout: 100, signedBy: stranger))
        #expect(
            foreign.first?.contains("key \(stranger.id) is not one this binary trusts") == true, "\(foreign)")
        // A signature by a trusted key, claimed for another key's id, is not that key's.
        var borrowed = try Self.publication(next, rollout: 100)
        borrowed.signatures = [
            CatalogSignature(key: stranger.id, signature: borrowed.signatures[0].signature)
        ]
        #expect(
            !Self.problems(
                borrowed, trust: PublicationTrust(keys: Self.trusted + [stranger.publicKey], now: 0)
            ).isEmpty)
        // Retired in the binary (its file's retiredAt) or as the device heard: refused from then on.
        let signed = try Self.publication(next, rollout: 100)
        var retiredKey = Self.key.publicKey
        retiredKey.retiredAt = 1_000
        #expect(Self.problems(signed, trust: PublicationTrust(keys: [retiredKey], now: 999)).isEmpty)
        #expect(
            Self.problems(signed, trust: PublicationTrust(keys: [retiredKey], now: 1_000)).first?.contains(
                "was retired") == true)
        let heard = PublicationTrust(keys: Self.trusted, retirements: [Self.key.id: 500], now: 600)
        #expect(Self.problems(signed, trust: heard).first?.contains("was retired on") == true)
        // Two signatures during a rotation: the new key alone is enough once the old one retires.
        let newKey = PublicationSigningKey(newFor: "test")
        var both = signed
        both.signatures.append(try newKey.sign(document: both.document))
        #expect(
            Self.problems(both, trust: PublicationTrust(keys: [retiredKey, newKey.publicKey], now: 2_000))
                .isEmpty)
    }

    /// A kept document is checked again on every use: one altered in the file, or whose key was
    /// retired since, is refused, journalled once with what runs instead, and the compiled runs.
    @Test func aKeptDocumentThatFailsOnUseIsRefusedAndJournalledOnce() throws {
        let next = Self.product.catalog.version + 1
        var kept = try Self.publication(next, rollout: 100)
        kept.document = kept.document.replacingOccurrences(of: "\"Done\"", with: "\"Done, honestly\"")
        kept.fingerprint = SHA256Hasher.hex(kept.document.utf8)
        // Pulled by this very binary: on use only the signature and the hash are checked again.
        let (store, path) = try Self.store(keeping: [kept], binary: Self.product.fingerprint)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let chosen = try Self.choose(store)
        #expect(chosen.choice.source == .compiled)
        #expect(chosen.choice.refused.map(\.version) == [next])
        #expect(chosen.choice.refused.first?.reason.contains("does not match the document") == true)
        let first = Publications.noteRefusals(store, app: "test", chosen.choice, now: Date())
        #expect(first.count == 1)
        #expect(first.first?.contains("published catalog version \(next) refused") == true)
        #expect(
            first.first?.contains("runs compiled version \(Self.product.catalog.version) instead") == true)
        // Named once: the next run says nothing new, and the journal has one row.
        #expect(
            Publications.noteRefusals(store, app: "test", try Self.choose(store).choice, now: Date()).isEmpty)
        #expect(try store.catalogRefusals(app: "test").count == 1)
        // The journal of refusals is append-only.
        #expect(throws: (any Error).self) {
            try Self.sqlite(path, "DELETE FROM catalog_refusal")
        }
        // A good document whose key the binary no longer trusts (an update dropped it) is refused too.
        let good = try Self.publication(next, rollout: 100)
        let (other, otherPath) = try Self.store(keeping: [good], binary: Self.product.fingerprint)
        defer { try? FileManager.default.removeItem(atPath: otherPath) }
        #expect(try Self.choose(other).choice.source == .published)
        let untrusted = try Self.choose(other, keys: [PublicationSigningKey(newFor: "test").publicKey])
        #expect(untrusted.choice.source == .compiled)
        #expect(untrusted.choice.refused.first?.reason.contains("not one this binary trusts") == true)
    }

    static func sqlite(_ path: String, _ sql: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK else { throw CocoaError(.fileReadUnknown) }
        defer { sqlite3_close(handle) }
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [NSLocalizedDescriptionKey: String(cString: sqlite3_errmsg(handle))])
        }
    }

    /// The subject is fixed by the file, not by a command's options: the install unless the user
    /// is enrolled for an account with a user-scoped flow.
    @Test func theSubjectIsTheSameOnEveryRunOfAFile() throws {
        let (store, path) = try Self.store(keeping: [])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try Publications.subject(store, product: Self.product, user: "ann")
        #expect(first.hasPrefix("install:"))
        #expect(try Publications.subject(store, product: Self.product, user: "ben") == first)
        #expect(
            try Publications.subject(DeviceStore.open(path: path), product: Self.product, user: "ann")
                == first)
    }
}

/// A list a test serves: unchanged (a 304) to the tag it gave, the list otherwise; it notes the
/// tags it was asked with.
private final class ListTransport: SyncTransport, @unchecked Sendable {
    let list: PublishedCatalogs
    static let tag = "\"" + String(repeating: "ab", count: 32) + "\""
    private(set) var askedWith: [String?] = []

    init(_ publications: [PublishedCatalog]) {
        list = PublishedCatalogs(app: "test", publications: publications, entityTag: Self.tag)
    }

    func catalogs(app: String, ifNoneMatch entityTag: String?) async throws(SyncError) -> CatalogPull {
        askedWith.append(entityTag)
        return entityTag == Self.tag ? .unchanged(maxAge: 0) : .changed(list, entityTag: Self.tag, maxAge: 0)
    }
    func push(app: String, account: String, _ batch: PushBatch) async throws(SyncError) -> PushAck {
        throw .unreachable("no")
    }
    func pull(app: String, account: String) async throws(SyncError) -> AccountRecords {
        throw .unreachable("no")
    }
    func budget(app: String, account: String, _ exchange: BudgetExchange) async throws(SyncError)
        -> AccountBudget
    {
        throw .unreachable("no")
    }
}

extension PublicationsTests {
    /// A kept copy altered in the device's file is refused on use; the next pull does not say "I
    /// hold this list" (no If-None-Match), so it gets the document again instead of a 304, and the
    /// publication runs again.
    @Test func aKeptCopyAlteredOnTheDeviceIsFetchedAgainNotAnswered304() async throws {
        let next = Self.product.catalog.version + 1
        let genuine = try Self.publication(next, rollout: 100)
        let transport = ListTransport([genuine])
        let (store, path) = try Self.store(keeping: [])
        defer { try? FileManager.default.removeItem(atPath: path) }
        func pull() async {
            _ = await Publications.update(
                store, product: Self.product, releases: [], trustedKeys: Self.trusted, transport: transport,
                now: Date())
        }
        await pull()
        #expect(try Self.choose(store).choice.source == .published)
        await pull()
        #expect(transport.askedWith.last == ListTransport.tag, "an intact list is asked for with its tag")

        // Altered in the file: refused on use, the compiled runs.
        try Self.sqlite(
            path,
            "UPDATE published_catalog SET document = replace(document, '\"Done\"', '\"Done, honestly\"')")
        #expect(try Self.choose(store).choice.source == .compiled)
        await pull()
        #expect(transport.askedWith.last == .some(nil), "an altered copy is asked for afresh")
        #expect(try Self.choose(store).choice.source == .published)
        #expect(
            try OnboardingDatabase.open(path: path).publications(app: "test").first?.document
                == genuine.document)
    }
}
