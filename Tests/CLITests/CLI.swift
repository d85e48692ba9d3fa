import Foundation
import Testing
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a product's built executable as a real process on its own database file.
struct CLI {
    let executable: String
    let folder: URL
    var environment: [String: String]

    init(_ executable: String, clock: String = "virtual") throws {
        self.executable = executable
        folder = Scratch.folder.appendingPathComponent(
            "cli-\(executable)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var environment = BuiltExecutables.environment
        environment["ONBOARDING_DB"] = folder.appendingPathComponent("onboarding.sqlite").path
        environment["ONBOARDING_CLOCK"] = clock
        self.environment = environment
    }

    var database: String { environment["ONBOARDING_DB"] ?? "" }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static var binaries: URL { BuiltExecutables.folder }

    func process(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = Self.binaries.appendingPathComponent(executable)
        process.arguments = arguments
        process.environment = environment
        return process
    }

    @discardableResult
    func run(_ arguments: String..., stdin: String? = nil) throws -> Result {
        try run(arguments, stdin: stdin)
    }

    @discardableResult
    func run(_ arguments: [String], stdin: String? = nil) throws -> Result {
        let process = process(arguments)
        let (output, errors, input) = try ChildProcess.spawning {
            let (output, errors, input) = (Pipe(), Pipe(), Pipe())
            process.standardOutput = output
            process.standardError = errors
            process.standardInput = input
            try process.run()
            return (output, errors, input)
        }
        if let stdin { input.fileHandleForWriting.send(stdin) }
        try? input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readUntilEnd()
        let err = errors.fileHandleForReading.readUntilEnd()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self))
    }

    /// Runs a command with `--json` and parses its one JSON object.
    func json(_ arguments: String...) throws -> [String: Any] {
        try json(arguments)
    }

    func json(_ arguments: [String]) throws -> [String: Any] {
        let result = try run(arguments + ["--json"])
        guard result.status == 0 else {
            throw CLIFailure(
                "\(executable) \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        else {
            throw CLIFailure("not a JSON object: \(result.stdout)")
        }
        return object
    }

    /// Every byte of the database files.
    func databaseBytes() -> Data {
        ["", "-wal"].reduce(into: Data()) { bytes, suffix in
            bytes += FileManager.default.contents(atPath: database + suffix) ?? Data()
        }
    }
}

struct CLIFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Dictionary where Key == String, Value == Any {
    var card: [String: Any]? { self["card"] as? [String: Any] }
    var state: [String: Any] { self["state"] as? [String: Any] ?? [:] }
    func flow(_ id: String) -> [String: Any]? {
        (self["flows"] as? [[String: Any]])?.first { $0["id"] as? String == id }
    }
}

/// A `play --echo` process whose output is read as it comes, so a test can kill it at an observed
/// point: when the echo of line k+1 is read, line k has finished (and committed), and line k+1
/// has begun.
final class EchoingProcess {
    let process: Process
    private let output: Pipe
    private var pending = Data()
    /// Script lines echoed so far.
    private(set) var echoed = 0

    init(_ cli: CLI, arguments: [String], script: String) throws {
        let process = cli.process(["play", "--echo"] + arguments)
        self.process = process
        let (input, output) = try ChildProcess.runWithPipes(process)
        self.output = output
        input.fileHandleForWriting.send(script)
        try? input.fileHandleForWriting.close()
    }

    /// Reads until `count` lines have been echoed; false when the process ended first.
    func waitForEcho(_ count: Int) -> Bool {
        while echoed < count {
            let chunk = output.fileHandleForReading.readChunk() ?? Data()
            if chunk.isEmpty { return false }
            pending += chunk
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                if pending[pending.startIndex..<newline].starts(with: Data("> ".utf8)) { echoed += 1 }
                pending = Data(pending[pending.index(after: newline)...])
            }
        }
        return true
    }

    /// SIGKILL, and wait for the process to be gone.
    /// Plays `script` and kills the process with SIGKILL while line `line` (0-based) runs: once
    /// its echo is read (the lines before it have committed), at once or up to `maxPause`
    /// nanoseconds later. False when the process ended before reaching the line.
    static func kill(
        _ cli: CLI, arguments: [String], script: String, whileLine line: Int, pausingUpTo maxPause: UInt64,
        using generator: inout some RandomNumberGenerator
    ) async throws -> Bool {
        let running = try EchoingProcess(cli, arguments: arguments, script: script)
        guard running.waitForEcho(line + 1) else { return false }
        let pause = UInt64.random(in: 0...maxPause, using: &generator)
        if pause > 0 { try await Task.sleep(nanoseconds: pause) }
        running.kill()
        return true
    }

    func kill() {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
