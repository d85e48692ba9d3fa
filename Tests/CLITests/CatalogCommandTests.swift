import CatalogDocuments
import Foundation
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures
import TourRuntime

/// `catalog`, `catalog diff`, `catalog history` and `check` against the release history, run as
/// the built executables, for every product.
@Suite("Catalog documents and their history, through the CLIs", .ownThread)
struct CatalogCommandTests {
    /// The recorded release of the product's current version, as committed under Apps/.
    static func recorded(_ executable: String, version: Int) throws -> Data {
        let folder = try #require(registeredProductFolders[executable])
        let path = GrammarTests.packageRoot + "/Apps/\(folder)/Onboarding/releases/\(version).json"
        return try #require(FileManager.default.contents(atPath: path), "no \(path)")
    }

    static func product(_ executable: String) throws -> Product {
        let registration = try #require(registeredProducts.first { $0.executable == executable })
        return registration.make(RunEnvironment(databasePath: ":memory:", offline: true))
    }

    /// A document file in the CLI's folder.
    static func write(_ value: TourValue, in cli: CLI, name: String) throws -> String {
        let path = cli.folder.appendingPathComponent(name).path
        try Data(try value.jsonText().utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: CommandLineTests.products)
    func theDocumentIsTheSameOnEveryRunAndBuildAndReadsBack(executable: String) throws {
        let cli = try CLI(executable)
        let runs = try (0..<3).map { _ in try cli.run("catalog", "--json") }
        #expect(runs.allSatisfy { $0.status == 0 && $0.stderr.isEmpty }, "\(runs.map(\.stderr))")
        #expect(Set(runs.map(\.stdout)).count == 1)
        // The document's bytes exactly, without a newline: piped to a file, it is the release file.
        let text = runs[0].stdout
        // The same bytes an earlier build recorded when this version shipped (a new product records
        // its first version when it ships).
        let product = try Self.product(executable)
        let registration = try #require(registeredProducts.first { $0.executable == executable })
        if registration.releases.contains(where: { $0.file == "\(product.catalog.version).json" }) {
            #expect(Data(text.utf8) == (try Self.recorded(executable, version: product.catalog.version)))
        }
        // It reads back into this build's catalog.
        let read = try CatalogDocument(text: text)
        #expect(read.catalog == product.catalog)
        // The fingerprint `check` prints, on every run, is its SHA-256.
        let fingerprints = try (0..<3).map { _ in try cli.json("check")["fingerprint"] as? String }
        #expect(Set(fingerprints).count == 1)
        #expect(fingerprints[0] == SHA256Hasher.hex(Array(text.utf8)))
        let check = try cli.run("check")
        #expect(
            check.stdout.contains("fingerprint \(CatalogDocument.short(fingerprints[0] ?? ""))"),
            "\(check.stdout)")
        #expect(check.stdout.contains("catalog version \(product.catalog.version)"), "\(check.stdout)")
        // Reading the catalog creates no database.
        #expect(!FileManager.default.fileExists(atPath: cli.database))
    }

    @Test(arguments: CommandLineTests.products)
    func theOutlineHistoryAndDiffOfAnUnchangedCatalog(executable: String) throws {
        let cli = try CLI(executable)
        let product = try Self.product(executable)
        let outline = try cli.run("catalog")
        #expect(outline.status == 0)
        for flow in product.catalog.flows {
            #expect(outline.stdout.contains("\(flow.id) \"\(flow.name)\""), "\(flow.id)")
            for step in flow.steps {
                #expect(outline.stdout.contains(". \(step.id) \""), "\(flow.id)/\(step.id)")
            }
        }
        let history = try cli.run("catalog", "history")
        #expect(
            history.status == 0 && history.stdout.contains("this build: version \(product.catalog.version)"),
            "\(history.stdout)")
        let registration = try #require(registeredProducts.first { $0.executable == executable })
        if let first = registration.releases.first, let version = Int(first.file.dropLast(5)) {
            // The oldest recorded version: `catalog V --json` prints its file, and the diff from it
            // to this build places everyone.
            #expect(try cli.run("catalog", "\(version)", "--json").stdout == first.text)
            #expect(history.stdout.contains("version \(version)  "), "\(history.stdout)")
            let diff = try cli.run("catalog", "diff", "\(version)")
            #expect(diff.status == 0, "\(diff.stdout)\(diff.stderr)")
            if version == product.catalog.version { #expect(diff.stdout.contains("no changes")) }
        }
        // A version never recorded, or a file that is not there: a usage error naming what exists.
        let unknown = try cli.run("catalog", "999")
        #expect(
            unknown.status == 2 && unknown.stderr.contains("no recorded catalog version 999; recorded:"),
            "\(unknown.stderr)")
        let missing = try cli.run("catalog", "diff", "nowhere.json")
        #expect(missing.status == 2 && missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
        #expect(missing.stderr.contains("there is no file 'nowhere.json'"), "\(missing.stderr)")
    }

    /// The outline writes a step's and a trigger's condition in words, as `graph` does, never as
    /// the document's JSON.
    @Test(arguments: CommandLineTests.products)
    func theOutlineWritesConditionsInWords(executable: String) throws {
        let product = try Self.product(executable)
        let outline = try CLI(executable).run("catalog").stdout
        let conditions = outline.split(separator: "\n").filter {
            $0.contains("only when ") || $0.contains("trigger: ")
        }
        for line in conditions {
            #expect(!line.contains("{") && !line.contains("\""), "\(executable): \(line)")
        }
        for flow in product.catalog.flows {
            for step in flow.steps where step.includedWhen != .always {
                #expect(outline.contains("only when \(step.includedWhen.summary)"), "\(flow.id)/\(step.id)")
            }
        }
    }

    /// Another product's document is refused by name; a wording change names its step in text as
    /// in JSON; `check --catalog` and `catalog diff` print the file's own fingerprint; a forecast
    /// against a file that is not a database names that file.
    @Test func documentsAreTakenOnlyAsTheirOwnProductsAndNamedAsGiven() throws {
        let lockedin = try CLI("lockedin")
        let finite = try CLI("finite")
        let finiteDocument = try Self.write(
            try TourValue(jsonText: try finite.run("catalog", "--json").stdout), in: lockedin,
            name: "finite.json")
        for arguments in [["catalog", "diff", finiteDocument], ["catalog", finiteDocument]] {
            let refused = try lockedin.run(arguments)
            #expect(refused.status == 2, "\(arguments)")
            #expect(refused.stderr.contains("is finite's catalog, not lockedin's"), "\(refused.stderr)")
        }

        let document = try CatalogDocument(
            text: String(decoding: try Self.recorded("finite", version: 1), as: UTF8.self))
        var reworded = document.catalog
        let step = reworded.flows[0].steps[1].id
        reworded.flows[0].steps[1].content.body = "Reworded."
        let path = try Self.write(
            CatalogDocument(reworded, declarations: document.vocabulary).value, in: finite,
            name: "reworded.json")
        let diff = try finite.run("catalog", "diff", "1", path)
        #expect(diff.stdout.contains("wording changed (step \(step)): body"), "\(diff.stdout)")
        let fileFingerprint = SHA256Hasher.hex(
            Array(try #require(FileManager.default.contents(atPath: path))))
        let diffJSON = try finite.json("catalog", "diff", "1", path)
        #expect((diffJSON["to"] as? [String: Any])?["fingerprint"] as? String == fileFingerprint)
        // (Exit 1: the same version with other wording is a problem of its own.)
        let check = try finite.run("check", "--catalog", path, "--json")
        let checked = try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any]
        #expect(checked?["fingerprint"] as? String == fileFingerprint)

        let notADatabase = try finite.run("check", "--against", path)
        #expect(notADatabase.status == 2)
        #expect(notADatabase.stderr.contains("\(path) is not a SQLite database"), "\(notADatabase.stderr)")
        #expect(!notADatabase.stderr.contains("forecast.sqlite"))
    }

    /// A document edited as a careless release would be: the check run over it names the product,
    /// the flow and the step, and the diff says nobody on it is placed.
    @Test func anEditedDocumentIsCheckedAgainstTheHistoryAndTheBinary() throws {
        let cli = try CLI("lockedin")
        let document = try CatalogDocument(
            text: String(decoding: try Self.recorded("lockedin", version: 1), as: UTF8.self))
        var careless = document.catalog
        careless.flows[0].steps.removeAll { $0.id == "difficulty" }
        careless.flows[0].steps[2].id = "access"
        let edited = try Self.write(
            CatalogDocument(careless, declarations: document.vocabulary).value, in: cli, name: "edited.json")
        let check = try cli.run("check", "--catalog", edited)
        #expect(check.status == 1)
        #expect(
            check.stdout.contains(
                "changed_without_version (onboarding step difficulty): LockedIn's catalog differs"),
            "\(check.stdout)")
        #expect(check.stdout.contains("(onboarding step permissions)"))
        #expect(check.stdout.contains("reads like the added step access"))
        let diff = try cli.run("catalog", "diff", "1", edited)
        #expect(diff.status == 1)
        #expect(diff.stdout.contains("step difficulty removed — users on it: NOT placed"), "\(diff.stdout)")
        let diffJSON = try cli.run("catalog", "diff", "1", edited, "--json")
        let body = try JSONSerialization.jsonObject(with: Data(diffJSON.stdout.utf8)) as? [String: Any]
        #expect(body?["unplaced"] as? Int == 2)

        // Raised to 2 without declarations: the users on both steps are not placed.
        careless.version = 2
        let raised = try Self.write(
            CatalogDocument(careless, declarations: document.vocabulary).value, in: cli, name: "raised.json")
        let unplaced = try cli.run("check", "--catalog", raised)
        #expect(unplaced.status == 1)
        #expect(unplaced.stdout.contains("unplaced_step (onboarding step difficulty)"), "\(unplaced.stdout)")
        #expect(unplaced.stdout.contains("declare CatalogMigration(from: 1"))
        // Declared, it checks clean.
        careless.migrations = [
            CatalogMigration(
                from: 1,
                [
                    "onboarding": FlowChanges(
                        renamedSteps: ["permissions": "access"], removedSteps: ["difficulty": .restart])
                ])
        ]
        let declared = try Self.write(
            CatalogDocument(careless, declarations: document.vocabulary).value, in: cli, name: "declared.json"
        )
        let clean = try cli.run("check", "--catalog", declared)
        #expect(clean.status == 0, "\(clean.stdout)")
        #expect(
            try cli.run("catalog", "diff", "1", declared).stdout.contains(
                "step permissions renamed access — users on it: stays on the renamed step"))
    }

    /// A misspelt effect kind or payload key in a document is refused, naming it and where it is.
    @Test func aMisspeltEffectOrPayloadKeyFailsTheCheck() throws {
        let cli = try CLI("lockedin")
        let text = String(decoding: try Self.recorded("lockedin", version: 1), as: UTF8.self)
        for (from, to, words) in [
            (
                #""name":"activate""#, #""name":"activte""#,
                """
                sends product effect 'activte', which the handler does not declare (did you mean \
                'activate'?)
                """
            ),
            (
                #""startingBankMinutes":{"literal"#, #""startingBankMinute":{"literal"#,
                "takes no payload key 'startingBankMinute' (did you mean 'startingBankMinutes'?)"
            ),
        ] {
            #expect(text.contains(from))
            let value = try TourValue(jsonText: text.replacingOccurrences(of: from, with: to))
            let path = try Self.write(value, in: cli, name: "misspelt.json")
            let check = try cli.run("check", "--catalog", path)
            #expect(check.status == 1)
            #expect(check.stdout.contains(words), "\(check.stdout)")
            #expect(check.stdout.contains("[at flows[onboarding].onComplete[0].product"), "\(check.stdout)")
        }
        // A document that is not one: refused with the path of the problem.
        let broken = try Self.write(["format": 1], in: cli, name: "broken.json")
        let refused = try cli.run("check", "--catalog", broken)
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(
            refused.stderr.contains("broken.json is not a catalog document: missing 'app'"),
            "\(refused.stderr)")
    }

    /// `check --against` forecasts an undeclared change honestly: the runs on a step that is gone
    /// restart, and it says they are not declared.
    @Test func theForecastOfAnUndeclaredChangeSaysSo() throws {
        let cli = try CLI("lockedin")
        try cli.run("launch")
        try cli.run("do", "next")
        try cli.run("do", "chooseApps", "apps=Instagram")
        try cli.run("do", "next")
        let document = try CatalogDocument(
            text: String(decoding: try Self.recorded("lockedin", version: 1), as: UTF8.self))
        var careless = document.catalog
        careless.flows[0].steps.removeAll { $0.id == "difficulty" }
        let edited = try Self.write(
            CatalogDocument(careless, declarations: document.vocabulary).value, in: cli, name: "edited.json")
        let forecast = try cli.run("check", "--catalog", edited, "--against", cli.database)
        #expect(
            forecast.stdout.contains(
                """
                1 run on difficulty (v1): restarts at welcome: step difficulty not in this catalog, not \
                declared
                """
            ), "\(forecast.stdout)")
        // The build's own catalog: the run stays.
        #expect(
            try cli.run("check", "--against", cli.database).stdout.contains("1 run on difficulty (v1): stays")
        )
    }
}
