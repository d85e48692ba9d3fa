import Foundation
import TestThreads
import Testing
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

/// Golden transcripts: each product's scenario scripts (`Apps/<Folder>/Transcripts/<name>.play`,
/// in the product's own folder) played by the built executable, their output compared with the
/// recorded `<name>.txt` (text) and `<name>.jsonl` (one JSON object per line). A changed transcript
/// fails with a unified diff that names the product and the scenario.
///
/// `scripts/regen-product [PRODUCT]` writes the scenarios and records them
/// (`RECORD_TRANSCRIPTS=1`, or a comma-separated list of executables, re-records); nothing is ever
/// recorded otherwise, so CI only compares.
///
/// A scenario is a `play` script; lines starting `#!` (comments to `play` itself) direct the run:
/// - `#! args: --answer health=denied` — the options of the processes that follow;
/// - `#! kill` — the process is killed with SIGKILL here, after the lines above have finished;
///   the lines below run in a new process on the same database (the user relaunched the app);
/// - `#! restart` — the process ends normally here, and the lines below run in a new one.
@Suite("Golden transcripts", .ownThread)
struct TranscriptTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A product's transcripts: `Apps/<Folder>/Transcripts`.
    static func folder(of executable: String) -> URL {
        packageRoot.appendingPathComponent(
            "Apps/\(registeredProductFolders[executable] ?? executable)/Transcripts")
    }

    /// Whether this run records `executable`'s transcripts instead of comparing them.
    static func records(_ executable: String) -> Bool {
        let setting = ProcessInfo.processInfo.environment["RECORD_TRANSCRIPTS"] ?? ""
        return setting == "1" || setting.split(separator: ",").contains { $0 == executable }
    }

    static var scenarios: [Scenario] {
        let executables = Subject.all.map(\.executable).reduce(into: [String]()) {
            if !$0.contains($1) { $0.append($1) }
        }
        return executables.flatMap { executable -> [Scenario] in
            let directory = folder(of: executable)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.filter { $0.hasSuffix(".play") }.sorted().map {
                Scenario(executable: executable, name: String($0.dropLast(".play".count)))
            }
        }
    }

    @Test func everyProductHasScenarios() {
        for subject in Subject.all {
            let count = Self.scenarios.filter { $0.executable == subject.executable }.count
            let folder = registeredProductFolders[subject.executable] ?? subject.executable
            #expect(
                count >= 8,
                """
                \(subject.name) has \(count) golden transcripts in Apps/\(folder)/Transcripts, at least \
                8 are asked for: describe its flow in Apps/\(folder)/Transcripts/scenarios.json \
                (scripts/new-product writes one) and run scripts/regen-product \(folder)
                """
            )
        }
    }

    @Test(arguments: scenarios)
    func transcript(_ scenario: Scenario) async throws {
        for json in [false, true] {
            let actual = try await Self.offThePool { try scenario.play(json: json) }
            let recorded = scenario.recording(json: json)
            if Self.records(scenario.executable) {
                try actual.write(to: recorded, atomically: true, encoding: .utf8)
                continue
            }
            guard let expected = try? String(contentsOf: recorded, encoding: .utf8) else {
                Issue.record(
                    """
                    \(scenario): no recorded transcript \(recorded.lastPathComponent); record it with \
                    scripts/regen-produc\
                    t \(registeredProductFolders[scenario.executable] ?? scenario.executable)
                    """
                )
                continue
            }
            if actual != expected {
                Issue.record(
                    """
                    \(scenario) (\(json ? "JSON" : "text")): the transcript \
                    changed\n\(try diff(expected, actual, name: recorded.lastPathComponent))
                    """
                )
            }
        }
    }

    /// At most this many scenarios play at once: each is a process of its own.
    private static let lanes = DispatchSemaphore(value: 4)

    /// Playing a scenario mostly waits on a process. The waiting happens on a thread of its own, not
    /// on one of the few threads Swift concurrency shares with the explorations, which would then
    /// stand idle behind it.
    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                lanes.wait()
                defer { lanes.signal() }
                continuation.resume(with: Result { try work() })
            }.start()
        }
    }

    private func diff(_ expected: String, _ actual: String, name: String) throws -> String {
        let directory = Scratch.folder.appendingPathComponent(
            "diff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (old, new) = (
            directory.appendingPathComponent("recorded"), directory.appendingPathComponent("now")
        )
        try expected.write(to: old, atomically: true, encoding: .utf8)
        try actual.write(to: new, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/diff")
        process.arguments = [
            "-u", "--label", "recorded \(name)", "--label", "played now", old.path, new.path,
        ]
        let pipe = try ChildProcess.spawning {
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            return pipe
        }
        let output = pipe.fileHandleForReading.readUntilEnd()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self)
    }
}

struct Scenario: Sendable, CustomStringConvertible {
    var executable: String
    var name: String

    var description: String {
        let product = Subject.all.first { $0.executable == executable }?.name ?? executable
        return "\(product) scenario '\(name)'"
    }

    var script: URL { TranscriptTests.folder(of: executable).appendingPathComponent("\(name).play") }

    func recording(json: Bool) -> URL {
        TranscriptTests.folder(of: executable).appendingPathComponent("\(name).\(json ? "jsonl" : "txt")")
    }

    /// One process's lines, its options, and how it ends.
    struct Segment {
        var arguments: [String] = []
        var lines: [String] = []
        var killed = false
    }

    func segments() throws -> [Segment] {
        var segments = [Segment()]
        for line in try String(contentsOf: script, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("#! args:") {
                segments[segments.count - 1].arguments = text.dropFirst("#! args:".count).split(
                    separator: " "
                ).map(String.init)
            } else if text == "#! kill" || text == "#! restart" {
                segments[segments.count - 1].killed = text == "#! kill"
                segments.append(Segment(arguments: segments[segments.count - 1].arguments))
            } else {
                segments[segments.count - 1].lines.append(String(line))
            }
        }
        return segments
    }

    /// Plays the scenario on a fresh database with the virtual clock; returns everything printed.
    func play(json: Bool) throws -> String {
        let folder = Scratch.folder.appendingPathComponent(
            "transcript-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var environment = BuiltExecutables.environment
        environment["ONBOARDING_DB"] = folder.appendingPathComponent("onboarding.sqlite").path
        environment["ONBOARDING_CLOCK"] = "virtual"
        var transcript = ""
        for segment in try segments() {
            let arguments = ["play", "--echo"] + (json ? ["--json"] : []) + segment.arguments
            transcript += "── \(executable) \(arguments.joined(separator: " ")) ──\n"
            transcript += try run(segment, arguments: arguments, environment: environment, json: json)
        }
        // The database's folder is new each run: "created the database at <tmp>/onboarding.sqlite".
        return transcript.replacingOccurrences(of: folder.path, with: "<tmp>")
    }

    private static let sync = "# transcript: lines above done"

    private func run(_ segment: Segment, arguments: [String], environment: [String: String], json: Bool)
        throws -> String
    {
        let process = Process()
        process.executableURL = BuiltExecutables.folder.appendingPathComponent(executable)
        process.arguments = arguments
        process.environment = environment
        let (input, output) = try ChildProcess.spawning {
            let (input, output) = (Pipe(), Pipe())
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output  // one stream keeps refusals in order with the cards
            try process.run()
            return (input, output)
        }
        let script = segment.lines.joined(separator: "\n") + "\n"
        input.fileHandleForWriting.send(script)
        guard segment.killed else {
            try? input.fileHandleForWriting.close()
            let data = output.fileHandleForReading.readUntilEnd()
            process.waitUntilExit()
            let status = process.terminationStatus
            return String(decoding: data, as: UTF8.self)
                + (status == 0
                    ? ""
                    : "── exit \(status) ──\n")
        }
        // Wait until the process has read the sync line, which it does only after every line above
        // has finished (and committed), then kill it where it stands.
        input.fileHandleForWriting.send(Self.sync + "\n")
        let marker = json ? #"{"line":"\#(Self.sync)"}"# + "\n" : "> \(Self.sync)\n"
        var data = Data()
        while !String(decoding: data, as: UTF8.self).contains(marker) {
            let chunk = output.fileHandleForReading.readChunk() ?? Data()
            if chunk.isEmpty { break }  // it ended by itself (a refused line)
            data += chunk
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard text.contains(marker) else { return text + "── exit \(process.terminationStatus) ──\n" }
        return text.replacingOccurrences(of: marker, with: "") + "── killed (SIGKILL) ──\n"
    }
}
