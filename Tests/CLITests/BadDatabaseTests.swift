import Foundation
import TestThreads
import Testing
import TourFixtures

/// Files the CLI must refuse to use: one clear line on standard error, a non-zero exit, no trap,
/// and not a byte of the file (or its folder) changed.
@Suite("Bad databases", .ownThread)
struct BadDatabaseTests {
    enum Case: String, CaseIterable, CustomStringConvertible {
        case notSQLite, truncated, newerSchema, readOnlyFile, readOnlyFolder, missingFolder
        var description: String { rawValue }
    }

    /// A database with a few committed events, checkpointed into its main file.
    static func goodDatabase(in folder: URL) throws -> String {
        var cli = try CLI("lockedin")
        cli.environment["ONBOARDING_DB"] = folder.appendingPathComponent("good.sqlite").path
        try cli.run("play", stdin: "launch\nnext\nchooseApps apps=A\n")
        _ = try CLI.sqlite(cli.database, "PRAGMA wal_checkpoint(TRUNCATE);")
        return cli.database
    }

    @Test(arguments: Case.allCases)
    func isRefusedWithOneLineAndLeftUnchanged(_ badCase: Case) throws {
        let cli = try CLI("lockedin")
        let folder = cli.folder
        let path: String
        var expected: String
        switch badCase {
        case .notSQLite:
            path = folder.appendingPathComponent("notes.sqlite").path
            try Data("These are my notes, not a database.\n".utf8).write(to: URL(fileURLWithPath: path))
            expected = "file is not a database"
        case .truncated:
            let good = try Self.goodDatabase(in: folder)
            path = folder.appendingPathComponent("truncated.sqlite").path
            let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
            expected = "malformed"
        case .newerSchema:
            path = try Self.goodDatabase(in: folder)
            _ = try CLI.sqlite(path, "INSERT INTO grdb_migrations VALUES ('v99-from-the-future');")
            expected = "newer version"
        case .readOnlyFile:
            path = try Self.goodDatabase(in: folder)
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
            expected = "the file is read-only"
        case .readOnlyFolder:
            let inner = folder.appendingPathComponent("locked")
            try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
            let good = try Self.goodDatabase(in: folder)
            path = inner.appendingPathComponent("onboarding.sqlite").path
            try FileManager.default.copyItem(atPath: good, toPath: path)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: inner.path)
            expected = "is read-only"
        case .missingFolder:
            path = folder.appendingPathComponent("no/such/folder/onboarding.sqlite").path
            expected = "does not exist"
        }
        defer {
            try? FileManager.default.setAttributes(
                [.posixPermissions: 0o755],
                ofItemAtPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        }
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let before = Self.fingerprint(path)
        let listing = try? FileManager.default.contentsOfDirectory(atPath: parent).sorted()
        for arguments in [["launch"], ["do", "next"], ["status"], ["play"]] {
            let result = try cli.run(arguments + ["--db", path], stdin: "launch\n")
            let lines = result.stderr.split(separator: "\n")
            #expect(result.status == 3, "\(badCase) \(arguments): exit \(result.status)")
            #expect(lines.count == 1, "\(badCase) \(arguments): \(result.stderr)")
            #expect(
                result.stderr.hasPrefix("lockedin: error: ") && result.stderr.contains(expected),
                "\(result.stderr)")
            #expect(!result.stderr.contains("Fatal error"))
            #expect(result.stdout.isEmpty)
            #expect(Self.fingerprint(path) == before, "\(badCase) \(arguments) changed the file")
            #expect(
                (try? FileManager.default.contentsOfDirectory(atPath: parent).sorted()) == listing,
                "\(badCase) \(arguments) left files beside it")
        }
    }

    /// The file's bytes and those of any journal beside it.
    static func fingerprint(_ path: String) -> [Data?] {
        ["", "-wal", "-shm", "-journal"].map { FileManager.default.contents(atPath: path + $0) }
    }
}

/// Product domain state a newer release wrote, in a format this one does not read.
@Suite("Domain state of a newer format", .ownThread)
struct NewerDomainStateTests {
    @Test func everyCommandThatReadsItRefusesByNameWithTheDatabaseStatusAndChangesNothing() throws {
        let cli = try CLI("growth")
        #expect(try cli.run("do", "completeOnboarding").status == 0)
        _ = try CLI.sqlite(cli.database, "UPDATE domain_format SET format = 99;")
        let before = try CLI.sqlite(
            cli.database, "SELECT format FROM domain_format; SELECT count(*) FROM journal;")
        for arguments in [["status"], ["show"], ["launch"], ["explain"], ["do", "next"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 3, "\(arguments): \(result.stderr)")
            #expect(
                result.stderr
                    == """
                    growth: error: the domain state of growth was written in format 99 by a newer \
                    release; this release reads format 1 and older. It was left unchanged: upgrade, or \
                    use another database.\n
                    """,
                "\(arguments)")
        }
        #expect(
            try CLI.sqlite(cli.database, "SELECT format FROM domain_format; SELECT count(*) FROM journal;")
                == before)
    }
}
