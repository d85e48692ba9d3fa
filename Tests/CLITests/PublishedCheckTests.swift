import CatalogDocuments
import Foundation
import TestThreads
import Testing
import TourCodec
import TourCore

/// `check --catalog FILE --published LIST`: a version published on the server but compiled into no
/// binary is history too, so the next document checks clean against it, and a change
/// that strands its users is caught; without the list, the advice says how to give it.
@Suite("check against published versions", .ownThread)
struct PublishedCheckTests {
    /// LockedIn's compiled version 1 with its first flow's steps 2 and 3 in the other order,
    /// as `version`.
    static func reordered(_ document: CatalogDocument, version: Int, swapped: Bool) -> CatalogDocument {
        var catalog = document.catalog
        catalog.version = version
        if swapped { catalog.flows[0].steps.swapAt(1, 2) }
        return CatalogDocument(catalog, declarations: document.vocabulary)
    }

    /// The server's answer to GET /v1/apps/{app}/catalogs, with these documents published.
    static func list(app: String, _ documents: [CatalogDocument]) throws -> TourValue {
        let publications = try documents.map { document in
            let text = try document.text()
            return PublishedCatalog(
                version: document.catalog.version, fingerprint: try document.fingerprint(), rollout: 100,
                salt: "s",
                document: text
            ).tourValue
        }
        return ["app": .string(app), "entityTag": "\"x\"", "publications": .list(publications), "keys": []]
    }

    @Test func aDocumentAfterAPublishedVersionChecksAgainstIt() throws {
        let cli = try CLI("lockedin")
        let v1 = try CatalogDocument(
            text: String(decoding: try CatalogCommandTests.recorded("lockedin", version: 1), as: UTF8.self))
        let published = Self.reordered(v1, version: 2, swapped: true)
        let list = try CatalogCommandTests.write(
            try Self.list(app: "lockedin", [published]), in: cli, name: "published.json")
        let next = try CatalogCommandTests.write(
            Self.reordered(v1, version: 3, swapped: false).value, in: cli, name: "v3.json")

        // Without the list: version 2 is in no history given, and the advice names both ways.
        let alone = try cli.run("check", "--catalog", next)
        #expect(alone.status == 1)
        #expect(alone.stdout.contains("missing_release"), "\(alone.stdout)")
        #expect(
            alone.stdout.contains("if it was published, check against the server's list (--published FILE"),
            "\(alone.stdout)")
        #expect(!alone.stdout.contains("record each version when it ships"))

        // With it: clean, and the published versions are named.
        let withList = try cli.run("check", "--catalog", next, "--published", list)
        #expect(withList.status == 0, "\(withList.stdout)\(withList.stderr)")
        #expect(withList.stdout.contains("(published: 2)"), "\(withList.stdout)")
        let json = try cli.run("check", "--catalog", next, "--published", list, "--json")
        let body = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(body?["publishedVersions"] as? [Int] == [2])
        #expect(body?["recordedVersions"] as? [Int] == [1, 2])

        // A change to the published version without raising it is caught against the published text.
        let sameVersion = try CatalogCommandTests.write(
            Self.reordered(v1, version: 2, swapped: false).value, in: cli, name: "v2-again.json")
        let unraised = try cli.run("check", "--catalog", sameVersion, "--published", list)
        #expect(unraised.status == 1)
        #expect(
            unraised.stdout.contains("differs from its recorded release 2 and is still version 2"),
            "\(unraised.stdout)")

        // Removing a step the published version has, with no migration, strands its users.
        var stranding = v1.catalog
        stranding.version = 3
        let removed = stranding.flows[0].steps.remove(at: 1).id
        let strands = try CatalogCommandTests.write(
            CatalogDocument(stranding, declarations: v1.vocabulary).value, in: cli, name: "strands.json")
        let stranded = try cli.run("check", "--catalog", strands, "--published", list)
        #expect(stranded.status == 1)
        #expect(stranded.stdout.contains("unplaced_step (onboarding step \(removed))"), "\(stranded.stdout)")

        // A gap above the newest known version is still one (a withdrawn version below it is not).
        let leap = try CatalogCommandTests.write(
            Self.reordered(v1, version: 5, swapped: false).value, in: cli, name: "v5.json")
        let leapt = try cli.run("check", "--catalog", leap, "--published", list)
        #expect(leapt.status == 1)
        #expect(leapt.stdout.contains("version 3 is in no history given"), "\(leapt.stdout)")
        #expect(leapt.stdout.contains("version 4 is in no history given"), "\(leapt.stdout)")
        let withdrawn = try CatalogCommandTests.write(
            try Self.list(app: "lockedin", [Self.reordered(v1, version: 4, swapped: true)]), in: cli,
            name: "after-rollback.json")
        #expect(try cli.run("check", "--catalog", leap, "--published", withdrawn).status == 0)
    }

    /// A list that is not one, or another app's, is refused with one message naming what is taken.
    @Test func aWrongListIsRefusedSayingWhatIsTaken() throws {
        let cli = try CLI("lockedin")
        let v1 = try CatalogDocument(
            text: String(decoding: try CatalogCommandTests.recorded("lockedin", version: 1), as: UTF8.self))
        let next = try CatalogCommandTests.write(
            Self.reordered(v1, version: 2, swapped: true).value, in: cli, name: "v2.json")
        let finite = try CatalogCommandTests.write(
            try Self.list(app: "finite", []), in: cli, name: "finite.json")
        let garbage = cli.folder.appendingPathComponent("garbage.json").path
        try Data("<html>".utf8).write(to: URL(fileURLWithPath: garbage))
        for (path, words) in [
            (finite, "lists finite's publications, not lockedin's"),
            (garbage, "is not the JSON the server answers to GET /v1/apps/lockedin/catalogs"),
            (cli.folder.appendingPathComponent("nothing.json").path, "there is no file"),
        ] {
            let refused = try cli.run("check", "--catalog", next, "--published", path)
            #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
            #expect(refused.stderr.contains(words), "\(refused.stderr)")
        }
    }
}
