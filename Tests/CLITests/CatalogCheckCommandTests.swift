import Foundation
import TestThreads
import Testing
import TourFixtures

/// `check` and `--context`: the catalog checked against what the product's code declares, and
/// device facts taken only as declared.
@Suite("Catalog check and device facts", .ownThread)
struct CatalogCheckCommandTests {
    @Test(arguments: CommandLineTests.products)
    func everyProductsCatalogChecksClean(executable: String) throws {
        let cli = try CLI(executable)
        let text = try cli.run("check")
        #expect(text.status == 0, "\(text.stdout)\(text.stderr)")
        #expect(text.stdout.contains("catalog: no problems"), "\(text.stdout)")
        let json = try cli.json("check", "--json")
        #expect((json["problems"] as? [Any])?.isEmpty == true)
        #expect((json["steps"] as? Int ?? 0) > 0)
        // Checking reads no database: none is created.
        #expect(!FileManager.default.fileExists(atPath: cli.database))
    }

    @Test func deviceFactsAreTakenOnlyAsDeclared() throws {
        let cli = try CLI("carrierwave")
        for (given, words) in [
            ("onlin=false", "did you mean 'online'"),
            ("hasConnectedService=true", "computed from the product's state"),
            ("online=maybe", "takes true or false"), ("online", "KEY=VALUE"),
        ] {
            let refused = try cli.run("--context", given, "status")
            #expect(refused.status == 2, "\(given)")
            #expect(refused.stderr.contains(words), "\(given): \(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.database))
        let finite = try CLI("finite")
        // Finite declares no device facts of its own; every product reads the accessibility settings.
        let notFinites = try finite.run("--context", "online=true", "status")
        #expect(notFinites.status == 2)
        #expect(
            notFinites.stderr.contains("device facts: voiceOver (true or false), reducedMotion"),
            "\(notFinites.stderr)")
        #expect(try cli.run("--help").stdout.contains("online (true or false, default true"))

        // `--context online=false` is the device offline: the QRZ connection fails as offline.
        try cli.run("launch")
        try cli.run("do", "next")
        try cli.run("do", "next")
        let offline = try cli.run(
            ["--context", "online=false", "do", "connect", "username=W1AW", "password=-"], stdin: "pw\n")
        let online = try CLI("carrierwave")
        try online.run("launch")
        try online.run("do", "next")
        try online.run("do", "next")
        let connected = try online.run(
            ["--context", "online=true", "do", "connect", "username=W1AW", "password=-"], stdin: "pw\n")
        #expect(offline.stdout != connected.stdout)
        #expect(
            offline.stdout.lowercased().contains("offline") || offline.stdout.contains("network"),
            "\(offline.stdout)")
    }
}
