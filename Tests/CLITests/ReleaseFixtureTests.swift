import Foundation
import TestThreads
import Testing
import TourFixtures

/// Databases frozen from earlier releases (`Releases/<version>/`, made once by
/// `scripts/make-release-fixture.py` and never regenerated): every build must open them, migrate
/// them, show every stored user as that release stored them, resume each as that release did, and
/// report over their whole history. A release that changes a catalog adds its own fixture beside
/// the old ones, and states here how the old users move.
@Suite("Databases from earlier releases", .ownThread)
struct ReleaseFixtureTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Releases")

    struct Fixture: CustomStringConvertible, Sendable {
        var release: String
        var file: String
        /// This file's part of the manifest, as JSON.
        var manifest: Data
        var description: String { "\(release)/\(file)" }
        var expected: [String: Any] {
            (try? JSONSerialization.jsonObject(with: manifest)) as? [String: Any] ?? [:]
        }
    }

    static let fixtures: [Fixture] = {
        let releases = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return releases.sorted().flatMap { release -> [Fixture] in
            let manifest = folder.appendingPathComponent(release).appendingPathComponent("manifest.json")
            guard let data = try? Data(contentsOf: manifest),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let files = object["files"] as? [String: [String: Any]]
            else { return [] }
            return files.keys.sorted().map {
                Fixture(
                    release: release, file: $0,
                    manifest: (try? JSONSerialization.data(withJSONObject: files[$0] ?? [:])) ?? Data())
            }
        }
    }()

    @Test func thereIsAFixtureForEveryShapeOfUser() {
        let releases = Dictionary(grouping: Self.fixtures, by: \.release)
        #expect(releases.keys.sorted().starts(with: ["0.5.0", "0.6.0", "0.8.0"]))
        for (release, fixtures) in releases {
            #expect(
                Set(fixtures.map(\.file)).isSuperset(of: [
                    "finished.sqlite", "midflow.sqlite", "skipped.sqlite",
                ]), "\(release)")
        }
    }

    /// `APP check --against FILE` forecasts every stored run and leaves the file as it was. Every
    /// run keeps its step: today's catalogs are the fixture's version, or (Mood Tracker's version
    /// 2 added a translation) a later one that moved no step, so a run is moved to it on its step.
    @Test(arguments: fixtures)
    func checkAgainstForecastsEveryStoredRun(_ fixture: Fixture) throws {
        let source = Self.folder.appendingPathComponent(fixture.release).appendingPathComponent(fixture.file)
        for product in fixture.expected.keys.sorted() {
            let cli = try CLI(product)
            try FileManager.default.copyItem(atPath: source.path, toPath: cli.database)
            let before = try Data(contentsOf: URL(fileURLWithPath: cli.database))
            let stored =
                Int(
                    try CLI.sqlite(cli.database, "SELECT count(*) FROM flow_state WHERE app = '\(product)'")
                        .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            let json = try cli.json("check", "--against", cli.database)
            let forecast = try #require((json["against"] as? [String: Any])?["forecast"] as? [String: Any])
            let groups = forecast["groups"] as? [[String: Any]] ?? []
            let records = forecast["records"] as? [[String: Any]] ?? []
            let inRecords = records.compactMap { $0["subjects"] as? Int }.reduce(0, +)
            let inGroups = groups.compactMap { $0["subjects"] as? Int }.reduce(0, +)
            #expect(inGroups + inRecords == stored, "\(fixture) \(product): \(forecast)")
            #expect(
                groups.allSatisfy { group in
                    group["outcome"] as? String == "stays"
                        || (group["outcome"] as? String == "moved"
                            && group["toStep"] as? String == group["fromStep"] as? String
                            && group["undeclared"] as? Bool == false)
                }, "\(fixture) \(product): \(groups)")
            let text = try cli.run("check", "--against", cli.database)
            #expect(text.status == 0)
            #expect(text.stdout.contains("Against \(cli.database)"), "\(text.stdout)")
            if inGroups > 0 { #expect(text.stdout.contains(": stays"), "\(text.stdout)") }
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: cli.database)) == before,
                "check wrote to \(fixture)")
        }
        let missing = try CLI("finite").run("check", "--against", "/nonexistent/old.sqlite")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("--against names no database file"), "\(missing.stderr)")
    }

    @Test(arguments: fixtures)
    func everyStoredUserReadsResumesAndReports(_ fixture: Fixture) throws {
        for (product, value) in fixture.expected {
            guard let users = value as? [String: Any] else { continue }
            let source = Self.folder.appendingPathComponent(fixture.release).appendingPathComponent(
                fixture.file)
            // The whole history reports, row for row.
            let reporting = try CLI(product)
            try FileManager.default.copyItem(atPath: source.path, toPath: reporting.database)
            let report = try reporting.json("report")
            #expect(report["journalRows"] as? Int == users["journalRows"] as? Int, "\(fixture) \(product)")
            for (user, entry) in users {
                guard let entry = entry as? [String: Any],
                    let stored = entry["stored"] as? [String: [String: Any]]
                else { continue }
                // Each user on a copy of the file as the release left it (users of one install share flows).
                let cli = try CLI(product)
                try FileManager.default.copyItem(atPath: source.path, toPath: cli.database)
                let status = try cli.json("status", "--user", user)
                for (flow, record) in stored {
                    let now = status.flow(flow)
                    #expect(
                        now?["status"] as? String == record["status"] as? String,
                        "\(fixture) \(product) \(user) \(flow)")
                    #expect(
                        (now?["step"] as? String) == (record["step"] as? String),
                        "\(fixture) \(product) \(user) \(flow)")
                }
                let launched = try cli.json("launch", "--user", user)
                let card = launched["card"] as? [String: Any]
                let expected = entry["afterLaunch"] as? [String: Any]
                #expect(
                    card?["flow"] as? String == expected?["flow"] as? String, "\(fixture) \(product) \(user)")
                #expect(
                    card?["step"] as? String == expected?["step"] as? String, "\(fixture) \(product) \(user)")
                // A debug reset writes domain state (Growth's tour status, LockedIn's flag, Mood
                // Tracker's tutorial flag) over keys an old release wrote, retired ones included.
                let reset = try cli.run("reset", "--user", user)
                #expect(reset.status == 0, "\(fixture) \(product) \(user): \(reset.stderr)")
                if product == "lockedin" {
                    // The old journal and today's launch still rebuild to what is stored.
                    let rebuilt = try JournalCheck.rebuildMatchesStoredState(database: cli.database)
                    #expect(rebuilt.matches, "\(fixture) \(product): \(rebuilt.detail)")
                }
            }
        }
    }
}
