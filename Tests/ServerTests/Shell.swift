import Foundation
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

enum Shell {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs a program to its end, at most `seconds`: past that it is killed and the test fails
    /// with what it printed, instead of hanging the whole run. Output goes to files, not pipes, so
    /// a daemon the program starts cannot keep a read waiting.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: String? = nil,
        seconds: Double = 120
    ) throws -> Result {
        let folder = Scratch.folder.appendingPathComponent("shell-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputFile = folder.appendingPathComponent("stdout")
        let errorFile = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputFile)
        let errors = try FileHandle(forWritingTo: errorFile)
        defer {
            try? output.close()
            try? errors.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        let (arguments, environment) = passwordsMovedToEnvironment(
            arguments, environment ?? ProcessInfo.processInfo.environment)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = output
        process.standardError = errors
        if let stdin {
            let inputFile = folder.appendingPathComponent("stdin")
            try Data(stdin.utf8).write(to: inputFile)
            process.standardInput = try FileHandle(forReadingFrom: inputFile)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try ChildProcess.spawning { try process.run() }
        let finished = waitForExit(process, seconds: seconds)
        let stdout = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        guard finished else {
            kill(process.processIdentifier, SIGKILL)
            throw HarnessFailure(
                """
                \(executable) \(arguments.joined(separator: " ")) did not finish within \(Int(seconds)) \
                s; it printed: \(stdout) \(stderr)
                """
            )
        }
        return Result(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// Waits for `process` to exit, at most `seconds`; whether it did.
    static func waitForExit(_ process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            if Date() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }
}
