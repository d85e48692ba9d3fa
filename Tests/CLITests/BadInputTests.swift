import Foundation
import TestThreads
import Testing
import TourFixtures

/// The bad-input corpus (`BadInput/corpus.tsv`): each case is a bash command line run against a
/// product whose database holds a flow in progress. Each must get a clear message on standard error
/// (the corpus says what it must contain), a non-zero exit that is not a trap, and leave every row
/// of the database as it was.
@Suite("Bad input corpus", .ownThread)
struct BadInputTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var executable: String
        var command: String
        var expected: String
        var description: String { "\(executable): \(name)" }
    }

    static let corpus: [Case] = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "BadInput/corpus.tsv")
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return fields.count == 4
                ? Case(name: fields[0], executable: fields[1], command: fields[2], expected: fields[3]) : nil
        }
    }()

    /// Each product's database with a flow in progress (Finite with only a birth date, so its free
    /// actions and their parameters are checked).
    static let setUp: [String: String] = [
        "lockedin": "launch\nnext\n", "finite": "do setBirthDate date=1990-05-01\n",
        "carrierwave": "launch\nnext\nnext\n",
        "growth": "visit dashboard\ndo completeOnboarding\nvisit dashboard\n",
        "moodtracker": "launch\nwait 0.5\n",
        // A case's executable may name another set-up: `moodtracker:allSet`.
        "moodtracker:allSet": "launch\nwait 0.5\ndo next\ndo next\n",
    ]

    @Test func theCorpusHasAtLeastSixtyCases() {
        #expect(Self.corpus.count >= 60)
    }

    @Test(arguments: corpus)
    func isRefusedClearlyAndChangesNothing(_ badCase: Case) throws {
        let executable = String(badCase.executable.prefix { $0 != ":" })
        let cli = try CLI(executable)
        let prepared = try cli.run("play", stdin: Self.setUp[badCase.executable] ?? "")
        try #require(prepared.status == 0, "\(prepared.stderr)")
        let before = try CLI.sqlite(cli.database, ".dump")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", badCase.command]
        var environment = cli.environment
        environment["APP"] = CLI.binaries.appendingPathComponent(executable).path
        environment["WORK"] = cli.folder.path
        process.environment = environment
        let errors = try ChildProcess.spawning {
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return errors
        }
        let message = String(decoding: errors.fileHandleForReading.readUntilEnd(), as: UTF8.self)
        process.waitUntilExit()
        let status = process.terminationStatus
        #expect(status != 0 && status < 128, "\(badCase): exit \(status)")
        #expect(
            message.localizedCaseInsensitiveContains(badCase.expected),
            "\(badCase): expected '\(badCase.expected)' in: \(message.prefix(300))")
        #expect(message.count < 2_000, "\(badCase): a message of \(message.count) characters")
        #expect(
            !message.contains("Fatal error") && !message.contains("Trace/breakpoint"),
            "\(badCase): \(message.prefix(300))")
        #expect(try CLI.sqlite(cli.database, ".dump") == before, "\(badCase) changed the database")
    }
}
