import Foundation
import TestThreads
import Testing
import TourCodec
import TourFixtures

/// A team's first day with a fresh server (Docs/Publishing.md, "The first day"): each product
/// registers everything its binary compiled in with one command, and the command line's refusals
/// say what is wrong in one line, exit 1, without the usage text of a typing mistake.
@Suite("A team's first day", .ownThread)
struct FirstDayTests {
    static let products = ["finite", "lockedin", "carrierwave", "growth", "moodtracker"]

    static func run(_ executable: String, _ arguments: [String]) throws -> Shell.Result {
        try Shell.run(BuiltExecutables.folder.appendingPathComponent(executable).path, arguments)
    }

    static func file(_ text: String, _ name: String) throws -> String {
        let file = Scratch.folder.appendingPathComponent("\(name)-\(UUID().uuidString).json")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    @Test func everyProductRegistersItsWholeHistoryInOneStepOnAFreshServer() throws {
        let server = try ServerProcess()
        // Mood Tracker's binary is at version 2: its current document alone is refused, saying
        // how to register the whole history, and nothing is stored.
        let current = try Self.file(
            try Self.run("moodtracker", ["catalog", "--json"]).stdout, "moodtracker-current")
        let alone = try server.command(["register", "--app", "moodtracker", current])
        #expect(alone.status == 1)
        #expect(
            alone.stderr.contains("missing_release")
                && alone.stderr.contains("moodtracker catalog --history --json"), "\(alone.stderr)")
        #expect(!alone.stderr.contains("Usage:"), "\(alone.stderr)")
        #expect(try server.sql("SELECT count(*) FROM catalogs") == ["0"])

        for product in Self.products {
            let printed = try Self.run(product, ["catalog", "--history", "--json"])
            try #require(printed.status == 0, "\(product): \(printed.stderr)")
            let history = try #require(
                try TourValue(jsonText: printed.stdout).listValue, "\(product): not a list")
            let versions = history.compactMap { $0.objectValue?["version"]?.intValue }
            #expect(versions == Array(1...versions.count), "\(product): \(versions)")
            // Each element is the binary's recorded document of its version, byte for byte.
            for version in versions {
                let recorded = try Self.run(product, ["catalog", "\(version)", "--json"]).stdout
                #expect(try TourValue(jsonText: recorded) == history[version - 1], "\(product) \(version)")
            }
            let file = try Self.file(printed.stdout, product)
            let registered = try server.command(["register", "--app", product, file])
            #expect(registered.status == 0, "\(product): \(registered.stderr)")
            let stored = try server.sql(
                """
                SELECT string_agg(version::text, ',' ORDER BY version) FROM catalogs WHERE app = \
                '\(product)' AND source = 'compiled'
                """
            )
            #expect(stored == [versions.map(String.init).joined(separator: ",")], "\(product)")
            // Registering it again (or the same file twice) changes nothing.
            #expect(try server.command(["register", "--app", product, file, file]).status == 0)
            #expect(
                try server.sql("SELECT count(*) FROM catalogs WHERE app = '\(product)'") == [
                    "\(versions.count)"
                ])
        }
        // Another product's history is refused for what it is.
        let wrong = try server.command([
            "register", "--app", "finite",
            try Self.file(try Self.run("growth", ["catalog", "--history", "--json"]).stdout, "growth"),
        ])
        #expect(wrong.status == 1 && wrong.stderr.contains("not finite's"), "\(wrong.stderr)")
    }

    /// A team's own key in one command: the private half in a folder of the publisher's, the
    /// public half where the product's build compiles it in; never the private half inside the
    /// product, and never a folder that is not a product's.
    @Test func aTeamMakesItsOwnPublicationKeyIntoItsProductFolder() throws {
        let server = try ServerProcess()
        let folder = Scratch.folder.appendingPathComponent("team-key-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let product = folder.appendingPathComponent("Apps/Pets")
        try FileManager.default.createDirectory(
            at: product.appendingPathComponent("Onboarding"), withIntermediateDirectories: true)
        let keys = folder.appendingPathComponent("home/keys")
        let made = try server.command([
            "keys", "new", "--app", "pets", "--out", keys.path, "--product", product.path,
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let id = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let compiledIn = product.appendingPathComponent("Onboarding/publication-keys/\(id).json")
        let kept = try String(contentsOf: keys.appendingPathComponent("\(id).json"), encoding: .utf8)
        #expect(try String(contentsOf: compiledIn, encoding: .utf8) == kept)
        #expect(kept.contains("\"app\":\"pets\"") && !kept.contains("privateKey"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: compiledIn.deletingLastPathComponent().path)
                == ["\(id).json"])
        #expect(
            FileManager.default.fileExists(atPath: keys.appendingPathComponent("\(id).signing-key.json").path)
        )
        #expect(made.stderr.contains("never in git, never on the server"), "\(made.stderr)")
        #expect(made.stderr.contains("keys register --app pets \(compiledIn.path)"), "\(made.stderr)")
        // The server takes the public half from where the build reads it.
        let registered = try server.command(["keys", "register", "--app", "pets", compiledIn.path])
        #expect(
            registered.status == 0 && registered.stdout.contains("pets publication key \(id) registered"),
            "\(registered.stderr)")

        for (arguments, says) in [
            (
                [
                    "--out", product.appendingPathComponent("Onboarding/publication-keys").path, "--product",
                    product.path,
                ], "--out is inside"
            ),
            (["--out", keys.path, "--product", folder.path], "has no Onboarding folder"),
        ] {
            let refused = try server.command(["keys", "new", "--app", "pets"] + arguments)
            #expect(refused.status == 1 && refused.stderr.contains(says), "\(arguments): \(refused.stderr)")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: compiledIn.deletingLastPathComponent().path)
                == ["\(id).json"])
    }

    /// Refusals that are not typing mistakes: one line, exit 1, no usage text.
    @Test func refusalsOfTheCommandLineAreOneLineAndExitOne() throws {
        let server = try ServerProcess()
        let folder = Scratch.folder.appendingPathComponent("first-day-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // `keys new` makes its folder, its owner's only.
        let keys = folder.appendingPathComponent("keys/growth")
        let made = try server.command(["keys", "new", "--app", "growth", "--out", keys.path])
        #expect(made.status == 0, "\(made.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: keys.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        let id = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let privateKey = keys.appendingPathComponent("\(id).signing-key.json").path
        #expect(
            try FileManager.default.attributesOfItem(atPath: privateKey)[.posixPermissions] as? Int == 0o600)

        let compiled = try Self.file(try Self.run("finite", ["catalog", "--json"]).stdout, "finite")
        let huge = try Self.file(
            "{\"padding\": \"" + String(repeating: "x", count: 300 * 1024) + "\"}", "huge")
        let both = folder.appendingPathComponent("url")
        try server.databaseURL.write(to: both, atomically: true, encoding: .utf8)
        let refusals: [(arguments: [String], environment: [String: String], says: String)] = [
            (["keys", "new", "--app", "growth", "--out", privateKey], [:], "not a folder"),
            (
                ["publish", "--app", "finite", "--key", privateKey, compiled], [:],
                "signs for growth, not finite"
            ),
            (
                ["publish", "--app", "growth", "--key", privateKey, huge], [:],
                "a catalog document is at most"
            ),
            (
                ["register", "--app", "growth", folder.appendingPathComponent("none.json").path], [:],
                "cannot read"
            ),
            (["register", "--app", "finite", compiled], ["DATABASE_URL_FILE": both.path], "not both"),
        ]
        for (arguments, environment, says) in refusals {
            let answer = try server.command(arguments, extraEnvironment: environment)
            let lines = answer.stderr.split(separator: "\n").filter { !$0.contains(" info ") }
            #expect(answer.status == 1, "\(arguments): \(answer.status) \(answer.stderr)")
            #expect(lines.count == 1 && answer.stderr.contains(says), "\(arguments): \(answer.stderr)")
            #expect(!answer.stderr.contains("Usage:"), "\(arguments): \(answer.stderr)")
        }
        // A typing mistake still gets the usage text (status 64).
        let mistyped = try server.command(["publish", "--app", "finite", "--rollout", "150", compiled])
        #expect(mistyped.status == 64 && mistyped.stderr.contains("Usage:"), "\(mistyped.stderr)")
    }
}
