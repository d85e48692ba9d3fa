import AccountSync
import CatalogDocuments
import Foundation
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures

/// Publications devices verify without trusting the server (Docs/Security.md): with an
/// owner's credential and the server's database in hand, an attacker cannot get a real device to
/// run a document the key holder did not sign; each refusal is named once, with what runs instead.
@Suite("Signed publications against a stolen server", .ownThread)
struct SignedPublicationTests {
    /// LockedIn's `activate` effect with the blocked apps an attacker chooses: what a stolen
    /// control plane would most like to ship.
    static func hostile(_ compiled: String, version: Int) throws -> String {
        try PublishingTests.edited(PublishingTests.reworded(compiled, title: "Pick what distracts you")) {
            document, flow in
            document["version"] = .int(version)
            flow["onComplete"] = [
                [
                    "product": [
                        "name": "activate",
                        "payload": [
                            "blockedApps": ["literal": ["Messages", "Phone"]],
                            "difficulty": ["field": "difficulty"],
                            "startingBankMinutes": ["literal": 0],
                        ],
                    ]
                ]
            ]
        }
    }

    static func source(_ device: Device) throws -> (String?, Int?, [[String: Any]]) {
        let catalog = try device.status()["catalog"] as? [String: Any]
        return (
            catalog?["source"] as? String, catalog?["version"] as? Int,
            catalog?["refused"] as? [[String: Any]] ?? []
        )
    }

    static func insert(_ server: ServerProcess, version: Int, text: String, signatures: [CatalogSignature])
        throws
    {
        let escaped = text.replacingOccurrences(of: "'", with: "''")
        _ = try server.sql(
            """
            INSERT INTO catalogs (app, version, source, fingerprint, document, rollout, recorded_at, \
            recorded_by, signatures)
            VALUES ('lockedin', \(version), 'published', '\(SHA256Hasher.hex(text.utf8))', '\(escaped)', \
            100, 0, 'mallory',
                    '\(try signatures.tourValue.jsonText())')
            """)
    }

    @Test func aStolenCredentialAndDatabaseCannotMakeADeviceRunAnUnsignedDocument() async throws {
        let server = try ServerProcess()
        let key = try server.publicationKey(app: "lockedin")
        let signing = try PublicationSigningKey(fileText: String(contentsOfFile: key, encoding: .utf8))
        let compiled = try PublishingTests.registerCompiled(on: server)
        let publisher = try server.credential("pat", role: "publisher", app: "lockedin")
        let v2 = try PublishingTests.reworded(compiled, title: "Pick your distractions")
        #expect(
            try await PublishingTests().publish(server, publisher, v2, rollout: 100, key: key).status == 201)
        let device = try Device("lockedin", account: "ann", server: server)
        #expect(try Self.source(device).1 == 2)

        // The attacker: an owner's credential, and the database.
        let mallory = try server.credential("mallory", role: "owner", app: "lockedin")
        // 1. Their own key, registered through the API with the owner's credential, signs version 3:
        //    the server accepts it (the key is registered), the device does not (not compiled in).
        let folder = Scratch.folder.appendingPathComponent("mallory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let theirs = PublicationSigningKey(newFor: "lockedin")
        let registered = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/lockedin/keys"), token: mallory,
            body: Data(#"{"publicKey": "\#(theirs.publicKey.publicKey)"}"#.utf8))
        #expect(registered.status == 201)
        let v3 = try Self.hostile(compiled, version: 3)
        let keyFile = folder.appendingPathComponent("theirs.signing-key.json")
        try theirs.fileText.write(to: keyFile, atomically: true, encoding: .utf8)
        let published = try await PublishingTests().publish(
            server, mallory, v3, rollout: 100, key: keyFile.path)
        #expect(published.status == 201, "\(String(decoding: published.body, as: UTF8.self))")
        let afterOwnKey = try device.run("status", "--json")
        #expect(afterOwnKey.stderr.contains("published catalog version 3 refused"), "\(afterOwnKey.stderr)")
        #expect(afterOwnKey.stderr.contains("key \(theirs.id) is not one this binary trusts"))
        #expect(afterOwnKey.stderr.contains("runs published version 2 instead"))
        #expect(try Self.source(device).1 == 2)
        // Named once: the next command is quiet about it, and status still says it.
        let quiet = try device.run("status")
        #expect(!quiet.stderr.contains("refused"), "\(quiet.stderr)")
        #expect(quiet.stdout.contains("published version 3 refused"))

        // 2. In the database: version 4 with the hostile effect, no signature, its fingerprint right.
        let v4 = try CatalogDocument(text: Self.hostile(compiled, version: 4)).text()
        try Self.insert(server, version: 4, text: v4, signatures: [])
        // 3. Version 5: a real signature of the key holder (copied from version 2) on another document.
        let v2Signature = try #require(
            try server.sql("SELECT signatures FROM catalogs WHERE app = 'lockedin' AND version = 2").first)
        let v5 = try CatalogDocument(text: Self.hostile(compiled, version: 5)).text()
        try Self.insert(
            server, version: 5, text: v5,
            signatures: try TourValue(jsonText: v2Signature).listValue!.map(CatalogSignature.init))
        // 4. Version 2 itself altered after signing, its stored fingerprint altered to match.
        let altered = try CatalogDocument(text: Self.hostile(compiled, version: 2)).text()
        _ = try server.sql(
            """
            UPDATE catalogs SET document = '\(altered.replacingOccurrences(of: "'", with: "''"))', \
            fingerprint = '\(SHA256Hasher.hex(altered.utf8))' WHERE app = 'lockedin' AND version = 2
            """
        )
        let attacked = try device.run("status", "--json")
        for (version, why) in [
            (4, "it carries no signature"), (5, "does not match the document"),
            (2, "does not match the document"),
        ] {
            #expect(
                attacked.stderr.contains("published catalog version \(version) refused"),
                "\(version): \(attacked.stderr)")
            #expect(attacked.stderr.contains(why), "\(version): \(attacked.stderr)")
        }
        // Nothing the key holder did not sign runs: the compiled catalog, since version 2 as served is not
        // theirs.
        let (source, version, refused) = try Self.source(device)
        #expect(source == "compiled")
        #expect(version == 1)
        #expect(Set(refused.compactMap { $0["version"] as? Int }) == [2, 3, 4, 5])
        // A new install never runs them either.
        let ben = try Device("lockedin", account: "ben", server: server)
        let launched = try ben.run("launch", "--json")
        #expect(!launched.stdout.contains("Pick what distracts you"))
        #expect(try Self.source(ben).0 == "compiled")
        // The journal of refusals keeps each, once, with what ran instead.
        let refusals = try Shell.run(
            "/usr/bin/sqlite3",
            [device.database.path, "SELECT version || ' ' || runs_instead FROM catalog_refusal ORDER BY id"])
        #expect(refusals.stdout.split(separator: "\n").count == 4, "\(refusals.stdout)")

        // The key holder restores version 2 as signed: the device runs it again.
        _ = try server.sql("DELETE FROM catalogs WHERE app = 'lockedin' AND version > 2")
        let original = try CatalogDocument(text: v2).text()
        _ = try server.sql(
            """
            UPDATE catalogs SET document = '\(original.replacingOccurrences(of: "'", with: "''"))', \
            fingerprint = '\(SHA256Hasher.hex(original.utf8))' WHERE app = 'lockedin' AND version = 2
            """
        )
        #expect(try Self.source(device).1 == 2)

        // On the device: the kept document altered in its file (fingerprint too) is refused on use.
        let edited = original.replacingOccurrences(of: "Pick your distractions", with: "Pick everything")
        let sqlite = try Shell.run(
            "/usr/bin/sqlite3",
            [
                device.database.path,
                """
                UPDATE published_catalog SET document = \
                '\(edited.replacingOccurrences(of: "'", with: "''"))', fingerprint = \
                '\(SHA256Hasher.hex(edited.utf8))'
                """,
            ])
        #expect(sqlite.status == 0, "\(sqlite.stderr)")
        let offline = try device.run("status", "--json", offline: true)
        #expect(offline.stderr.contains("published catalog version 2 refused"), "\(offline.stderr)")
        #expect(try Self.source(device).0 != nil)
        _ = signing
    }

    /// A document signed by a retired key is refused from the retirement on: by the server at
    /// publish, by a device once it hears of it, and by a binary whose key file says so.
    @Test func aRetiredKeysDocumentsAreRefusedFromItsRetirementOn() async throws {
        let server = try ServerProcess()
        let old = try server.publicationKey(app: "lockedin")
        let compiled = try PublishingTests.registerCompiled(on: server)
        let publisher = try server.credential("pat", role: "publisher", app: "lockedin")
        let v2 = try PublishingTests.reworded(compiled, title: "Pick your distractions")
        #expect(
            try await PublishingTests().publish(server, publisher, v2, rollout: 100, key: old).status == 201)
        let device = try Device("lockedin", account: "ann", server: server)
        #expect(try SignedPublicationTests.source(device).1 == 2)

        // Rotation: a new key, both signing version 3; then the old key retired.
        let new = try server.publicationKey(app: "lockedin")
        let v3 = try PublishingTests.edited(PublishingTests.reworded(compiled, title: "Pick, then focus")) {
            document, _ in
            document["version"] = 3
        }
        let signedByBoth = try server.command([
            "publish", "--app", "lockedin", "--key", old, "--key", new, try Self.file(v3),
        ])
        #expect(signedByBoth.status == 0, "\(signedByBoth.stderr)")
        let oldID = try #require(
            URL(fileURLWithPath: old).lastPathComponent.components(separatedBy: ".signing-key").first)
        let retired = try server.command(["keys", "retire", "--app", "lockedin", "--key", oldID])
        #expect(retired.status == 0, "\(retired.stderr)")
        // Version 3 still runs (the new key signed it); version 2, signed by the old key alone, is refused.
        #expect(try SignedPublicationTests.source(device).1 == 3)
        _ = try server.command(["unpublish", "--app", "lockedin", "--version", "3"])
        let after = try device.run("status", "--json")
        #expect(after.stderr.contains("published catalog version 2 refused"), "\(after.stderr)")
        #expect(after.stderr.contains("key \(oldID) was retired"), "\(after.stderr)")
        #expect(try SignedPublicationTests.source(device).0 == "compiled")
        // The server refuses what the retired key alone signs.
        let v4 = try PublishingTests.edited(v3) { document, _ in document["version"] = 4 }
        let refused = try server.command(["publish", "--app", "lockedin", "--key", old, try Self.file(v4)])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("was retired"), "\(refused.stderr)")
        // A device that heard of the retirement keeps it, even if the server then stops saying so.
        _ = try server.sql("UPDATE publication_keys SET retired_at = NULL")
        #expect(try SignedPublicationTests.source(device).0 == "compiled")
    }

    static func file(_ text: String) throws -> String {
        let file = Scratch.folder.appendingPathComponent("document-\(UUID().uuidString).json")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }
}
