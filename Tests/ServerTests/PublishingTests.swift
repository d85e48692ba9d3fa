import AccountSync
import CatalogDocuments
import Foundation
import OnboardingServer
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures

/// Publishing a catalog document without an app release, over a real server and PostgreSQL: what
/// is checked at publish, the devices' conditional pull, rollout changes and withdrawal.
@Suite("Publishing catalogs", .ownThread)
struct PublishingTests {
    /// LockedIn's compiled catalog, as `lockedin catalog --json` prints it.
    static func compiledDocument() throws -> String {
        let result = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("lockedin").path, ["catalog", "--json"])
        guard result.status == 0 else { throw HarnessFailure("lockedin catalog --json: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The document with `edit` applied to its top-level object and to its first flow.
    static func edited(
        _ text: String, _ edit: (inout [String: TourValue], inout [String: TourValue]) -> Void
    ) throws -> String {
        var document = try #require(try TourValue(jsonText: text).objectValue)
        var flows = try #require(document["flows"]?.listValue)
        var flow = try #require(flows[0].objectValue)
        edit(&document, &flow)
        flows[0] = .object(flow)
        document["flows"] = .list(flows)
        return try TourValue.object(document).jsonText()
    }

    /// `version` (2 by default): the first step's title reworded.
    static func reworded(_ text: String, title: String = "Pick what distracts you", version: Int = 2) throws
        -> String
    {
        try edited(text) { document, flow in
            document["version"] = .int(version)
            var steps = flow["steps"]?.listValue ?? []
            var first = steps[0].objectValue ?? [:]
            var content = first["content"]?.objectValue ?? [:]
            content["title"] = .string(title)
            first["content"] = .object(content)
            steps[0] = .object(first)
            flow["steps"] = .list(steps)
        }
    }

    /// Registers LockedIn's compiled catalog with the real command; its text.
    static func registerCompiled(on server: ServerProcess) throws -> String {
        let compiled = try compiledDocument()
        let file = Scratch.folder.appendingPathComponent("lockedin-\(UUID().uuidString).json")
        try compiled.write(to: file, atomically: true, encoding: .utf8)
        let registered = try server.command(["register", "--app", "lockedin", file.path])
        guard registered.status == 0 else { throw HarnessFailure("register: \(registered.stderr)") }
        return compiled
    }

    /// `POST /v1/apps/lockedin/catalogs` with the document signed by the key file `key` (when given),
    /// as `onboarding-server keys sign` signs: over the canonical text.
    func publish(
        _ server: ServerProcess, _ credential: String, _ text: String, rollout: Int, key: String? = nil,
        app: String = "lockedin"
    ) async throws -> HTTP.Answer {
        var body: [String: TourValue] = ["document": try TourValue(jsonText: text), "rollout": .int(rollout)]
        if let key {
            let signing = try PublicationSigningKey(fileText: String(contentsOfFile: key, encoding: .utf8))
            let canonical = (try? CatalogDocument(text: text).text()) ?? text
            body["signatures"] = [try signing.sign(document: canonical)].tourValue
        }
        return try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/\(app)/catalogs"), token: credential,
            body: Data(try TourValue.object(body).jsonUTF8()))
    }

    func serverCommand(_ server: ServerProcess, _ arguments: [String]) throws -> Shell.Result {
        try server.command(arguments)
    }

    @Test func aCheckedDocumentIsPublishedRolledOutAndWithdrawnAndARefusedOneChangesNothing() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_SECRET": ServerProcess.secret])
        let admin = try server.credential("pat", role: "publisher", app: "lockedin")
        let device = try server.token(account: "ann", app: "lockedin")
        let catalogs = server.url.appendingPathComponent("v1/apps/lockedin/catalogs")
        let compiled = try Self.compiledDocument()
        let v2 = try Self.reworded(compiled)
        let key = try server.publicationKey(app: "lockedin")

        // Nothing to check against until a binary's catalog is registered.
        let early = try await publish(server, admin, v2, rollout: 20, key: key)
        #expect(early.status == 422, "\(String(decoding: early.body, as: UTF8.self))")
        #expect(
            String(decoding: early.body, as: UTF8.self).contains("onboarding-server register --app lockedin"))

        let file = Scratch.folder.appendingPathComponent("lockedin-\(UUID().uuidString).json")
        try compiled.write(to: file, atomically: true, encoding: .utf8)
        let registered = try serverCommand(server, ["register", "--app", "lockedin", file.path])
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(registered.stdout.contains("lockedin catalog version 1 registered as compiled"))

        // Nothing is published yet: an empty list, and its tag answers 304.
        let empty = try await HTTP.get(catalogs, token: device)
        #expect(empty.status == 200)
        #expect((empty.json["publications"] as? [Any])?.isEmpty == true)

        // Unsigned, or signed by a key the server does not know: refused, naming how to sign.
        let unsigned = try await publish(server, admin, v2, rollout: 20)
        #expect(unsigned.status == 422)
        #expect(String(decoding: unsigned.body, as: UTF8.self).contains("it carries no signature"))
        let stranger = try server.publicationKey(app: "lockedin", trustedByDevices: false, registered: false)
        let foreign = try await publish(server, admin, v2, rollout: 20, key: stranger)
        #expect(foreign.status == 422)
        #expect(String(decoding: foreign.body, as: UTF8.self).contains("is not one this binary trusts"))

        let published = try await publish(server, admin, v2, rollout: 20, key: key)
        #expect(published.status == 201, "\(String(decoding: published.body, as: UTF8.self))")
        let publication = published.json["publication"] as? [String: Any]
        #expect(publication?["version"] as? Int == 2)
        #expect(publication?["rollout"] as? Int == 20)
        #expect(publication?["salt"] as? String == "lockedin/catalog/2")

        let pulled = try await HTTP.get(catalogs, token: device)
        #expect(pulled.status == 200)
        let live = try #require((pulled.json["publications"] as? [[String: Any]])?.first)
        let canonical = try CatalogDocument(text: v2).text()
        #expect(live["document"] as? String == canonical)
        #expect(live["fingerprint"] as? String == SHA256Hasher.hex(canonical.utf8))
        let tag = try #require(pulled.entityTag)
        let unchanged = try await HTTP.send(
            "GET", catalogs, token: device, body: nil, headers: ["If-None-Match": tag])
        #expect(unchanged.status == 304)
        #expect(unchanged.body.isEmpty)

        // Refused documents, each naming its problem; none changes what devices get.
        let unknownEffect = try Self.edited(Self.reworded(compiled)) { document, flow in
            document["version"] = 3
            flow["onComplete"] = [["product": ["name": "launchRockets"]]]
        }
        let removedStep = try Self.edited(Self.reworded(compiled)) { document, flow in
            document["version"] = 3
            var steps = flow["steps"]?.listValue ?? []
            steps.remove(at: 1)
            flow["steps"] = .list(steps)
        }
        let newerFormat = try Self.edited(Self.reworded(compiled)) { document, _ in
            document["version"] = 3
            document["format"] = 99
        }
        let otherUnderV2 = try Self.reworded(compiled, title: "Another title")
        for (text, expected) in [
            (unknownEffect, "launchRockets"), (removedStep, "nor placed by a declared migration"),
            (newerFormat, "document format 99 is newer"),
            (otherUnderV2, "version 2 of lockedin is already published as another document"),
        ] {
            let refused = try await publish(server, admin, text, rollout: 100, key: key)
            let message = String(decoding: refused.body, as: UTF8.self)
            #expect(refused.status == 422, "\(expected): \(message)")
            #expect(refused.errorCode == "catalog_refused")
            #expect(message.contains(expected), "\(message)")
        }
        let forbidden = try await publish(server, device, v2, rollout: 100, key: key)
        #expect(forbidden.status == 403)
        // A viewer reads but cannot publish; an editor cannot raise a rollout.
        let viewer = try server.credential("vic", role: "viewer", app: "lockedin")
        let editor = try server.credential("eve", role: "editor", app: "lockedin")
        #expect(try await HTTP.get(catalogs, token: viewer).status == 200)
        for (who, credential) in [("viewer", viewer), ("editor", editor)] {
            let refused = try await publish(server, credential, v2, rollout: 100, key: key)
            #expect(refused.status == 403, "\(who)")
            #expect(
                String(decoding: refused.body, as: UTF8.self).contains("needs the publisher role"), "\(who)")
            #expect(
                try await HTTP.send(
                    "DELETE", catalogs.appendingPathComponent("2"), token: credential, body: nil
                ).status == 403)
        }
        #expect(
            try await HTTP.send("GET", catalogs, token: device, body: nil, headers: ["If-None-Match": tag])
                .status == 304)

        // Raising the rollout is publishing the same document again.
        let raised = try await publish(server, admin, v2, rollout: 50)
        #expect(raised.status == 201)
        let after = try await HTTP.send(
            "GET", catalogs, token: device, body: nil, headers: ["If-None-Match": tag])
        #expect(after.status == 200)
        #expect((after.json["publications"] as? [[String: Any]])?.first?["rollout"] as? Int == 50)

        // The command line publishes too, and lists every problem of a refused document.
        let refusedFile = Scratch.folder.appendingPathComponent("bad-\(UUID().uuidString).json")
        try unknownEffect.write(to: refusedFile, atomically: true, encoding: .utf8)
        let refusedByCommand = try serverCommand(
            server, ["publish", "--app", "lockedin", "--rollout", "10", "--key", key, refusedFile.path])
        #expect(refusedByCommand.status == 1)
        #expect(refusedByCommand.stderr.contains("the document is refused, nothing changed"))
        #expect(refusedByCommand.stderr.contains("launchRockets"))
        // The command line has the API's size limit: a 5 MiB document is refused before it is read.
        let huge = Scratch.folder.appendingPathComponent("huge-\(UUID().uuidString).json")
        try (String(v2.dropLast()) + ", \"padding\": \"" + String(repeating: "x", count: 5 << 20) + "\"}")
            .write(
                to: huge, atomically: true, encoding: .utf8)
        let tooLarge = try serverCommand(server, ["publish", "--app", "lockedin", "--key", key, huge.path])
        #expect(tooLarge.status != 0)
        #expect(tooLarge.stderr.contains("a catalog document is at most 262144 bytes"), "\(tooLarge.stderr)")
        // And the password-bearing flag of earlier releases is refused, naming what replaces it.
        let flag = try serverCommand(
            server, ["publish", "--app", "lockedin", "--database-url", server.databaseURL, refusedFile.path])
        #expect(flag.status != 0)
        #expect(flag.stderr.contains("DATABASE_URL_FILE"), "\(flag.stderr)")

        // Withdrawn: devices get nothing again.
        let withdrawn = try await HTTP.send(
            "DELETE", catalogs.appendingPathComponent("2"), token: admin, body: nil)
        #expect(withdrawn.status == 200)
        // Every act is one audit row naming who did it.
        let acts = try server.sql(
            """
            SELECT actor || ' ' || action || ' ' || coalesce(target, '') FROM audit_log WHERE app = \
            'lockedin' ORDER BY id
            """
        )
        #expect(
            acts.contains { $0.hasPrefix("command line (") && $0.hasSuffix("catalog.registered version 1") },
            "\(acts)")
        #expect(acts.contains("pat catalog.published version 2"), "\(acts)")
        #expect(acts.contains("pat catalog.rollout-changed version 2"), "\(acts)")
        #expect(acts.contains("pat catalog.withdrawn version 2"), "\(acts)")
        let gone = try await HTTP.get(catalogs, token: device)
        #expect((gone.json["publications"] as? [Any])?.isEmpty == true)
        let twice = try await HTTP.send(
            "DELETE", catalogs.appendingPathComponent("2"), token: admin, body: nil)
        #expect(twice.status == 404)
        let unpublished = try serverCommand(server, ["unpublish", "--app", "lockedin", "--version", "2"])
        #expect(unpublished.status == 1)
    }
}

/// Published catalogs on real devices: pulled with the sync, verified, chosen, rolled back.
@Suite("Published catalogs on devices", .ownThread)
struct PublishedCatalogDeviceTests {
    /// Version 2: the welcome step reworded, and `appSelection` renamed `chooseApps` (declared).
    static func renaming(_ compiled: String) throws -> String {
        try PublishingTests.edited(PublishingTests.reworded(compiled, title: "Welcome to LockedIn 2")) {
            document, flow in
            var steps = flow["steps"]?.listValue ?? []
            var second = steps[1].objectValue ?? [:]
            second["id"] = "chooseApps"
            steps[1] = .object(second)
            flow["steps"] = .list(steps)
            document["migrations"] = [
                ["from": 1, "flows": ["onboarding": ["renamedSteps": ["appSelection": "chooseApps"]]]]
            ]
        }
    }

    static func step(_ status: [String: Any]) -> String? {
        (status["flows"] as? [[String: Any]])?.first { $0["id"] as? String == "onboarding" }?["step"]
            as? String
    }

    static func catalog(_ status: [String: Any]) -> [String: Any]? { status["catalog"] as? [String: Any] }

    @Test func aPublicationReachesDevicesCarriesRunsAcrossRenamesAndRollsBack() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_SECRET": ServerProcess.secret])
        let admin = try server.credential()
        let key = try server.publicationKey(app: "lockedin")
        let compiled = try PublishingTests.registerCompiled(on: server)

        // Mid-flow on the compiled catalog's appSelection.
        let ann = try Device("lockedin", account: "ann", server: server)
        #expect(try ann.run("launch").status == 0)
        #expect(try ann.run("do", "next").status == 0)
        let before = try ann.status()
        #expect(Self.step(before) == "appSelection")
        #expect(Self.catalog(before)?["source"] as? String == "compiled")

        let v2 = try Self.renaming(compiled)
        let published = try await PublishingTests().publish(server, admin, v2, rollout: 100, key: key)
        #expect(published.status == 201, "\(String(decoding: published.body, as: UTF8.self))")

        // Her next command runs the publication: her run moved to the renamed step.
        let after = try ann.status()
        #expect(Self.catalog(after)?["source"] as? String == "published")
        #expect(Self.catalog(after)?["version"] as? Int == 2)
        #expect(Self.step(after) == "chooseApps")
        // An event under it stores her run as version 2's.
        #expect(try ann.run("do", "chooseApps", "apps=Instagram").status == 0)
        #expect(Self.step(try ann.status()) == "chooseApps")
        let inUse = try ann.run("catalog", "in-use")
        #expect(
            inUse.stdout.contains("published version 2, in use: published version 2 at 100%"),
            "\(inUse.stdout) \(inUse.stderr)")
        // Her journal says which rows ran under the publication.
        let rows =
            try JSONSerialization.jsonObject(with: Data(try ann.run("journal", "--json").stdout.utf8))
            as? [[String: Any]] ?? []
        #expect(rows.first?["catalogSource"] as? String == "compiled")
        #expect(rows.last?["catalogSource"] as? String == "published")
        #expect(rows.last?["catalogVersion"] as? Int == 2)
        #expect(
            rows.last?["catalogFingerprint"] as? String
                == SHA256Hasher.hex(try CatalogDocument(text: v2).text().utf8))
        // A new install sees the new wording on its first launch.
        let ben = try Device("lockedin", account: "ben", server: server)
        let launched = try ben.run("launch", "--json")
        let benStatus = try ben.run("status").stdout
        #expect(
            launched.stdout.contains("Welcome to LockedIn 2"),
            "\(launched.stdout) \(launched.stderr) \(benStatus)")

        // Offline, the device keeps the last good publication.
        let offline = try ann.status(offline: true)
        #expect(Self.catalog(offline)?["version"] as? Int == 2)

        // A document the server should never have served (an effect this binary does not have,
        // signed by the key but put in the database by hand) is named once and not used; the last
        // good one runs, and status says which version was refused, why, and what runs instead.
        let bad = try PublishingTests.edited(v2) { document, flow in
            document["version"] = 3
            document["migrations"] = document["migrations"]
            flow["onComplete"] = [["product": ["name": "launchRockets"]]]
        }
        let badText = try CatalogDocument(text: bad).text()
        let fingerprint = SHA256Hasher.hex(badText.utf8)
        let signature = try PublicationSigningKey(fileText: String(contentsOfFile: key, encoding: .utf8))
            .sign(document: badText)
        _ = try server.sql(
            """
            INSERT INTO catalogs (app, version, source, fingerprint, document, rollout, recorded_at, \
            recorded_by, signatures) VALUES ('lockedin', 3, 'published', '\(fingerprint)', \
            '\(badText.replacingOccurrences(of: "'", with: "''"))', 100, 0, 'hand', \
            '\(try [signature].tourValue.jsonText())')
            """
        )
        let handed = try ann.run("status", "--json")
        #expect(handed.status == 0)
        #expect(handed.stderr.contains("published catalog version 3 refused"), "\(handed.stderr)")
        #expect(handed.stderr.contains("launchRockets"), "\(handed.stderr)")
        #expect(handed.stderr.contains("runs published version 2 instead"), "\(handed.stderr)")
        let stillTwo =
            try JSONSerialization.jsonObject(with: Data(handed.stdout.utf8)) as? [String: Any] ?? [:]
        #expect(Self.catalog(stillTwo)?["version"] as? Int == 2)
        let refusedInStatus = Self.catalog(stillTwo)?["refused"] as? [[String: Any]] ?? []
        #expect(refusedInStatus.first?["version"] as? Int == 3, "\(stillTwo)")
        // Named once: the next command says nothing more on standard error, though status still tells.
        let again = try ann.run("status")
        #expect(!again.stderr.contains("refused"), "\(again.stderr)")
        #expect(again.stdout.contains("published version 3 refused"), "\(again.stdout)")
        _ = try server.sql("DELETE FROM catalogs WHERE app = 'lockedin' AND version = 3")

        // Rolled back: the compiled catalog again; her step is not in it, so her run goes by the
        // flow's declared policy (LockedIn restarts), journalled.
        let withdrawn = try PublishingTests().serverCommand(
            server, ["unpublish", "--app", "lockedin", "--version", "2"])
        #expect(withdrawn.status == 0, "\(withdrawn.stderr)")
        let back = try ann.status()
        #expect(Self.catalog(back)?["source"] as? String == "compiled")
        #expect(Self.step(back) == "welcome")
        #expect(
            try ann.run("catalog", "in-use").stdout.contains(
                "compiled version 1, in use: no live publication of lockedin"))
        let journal = try ann.run("journal", "--json")
        #expect(journal.stdout.contains("runMigrated"))
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
