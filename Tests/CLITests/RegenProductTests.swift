import Foundation
import TestThreads
import Testing
import TourFixtures

/// `scripts/regen-product` keeps the build's and the tests' progress off the screen, never their
/// errors: a product team whose flow does not compile sees the compiler's message.
@Suite("regen-product's output", .ownThread)
struct RegenProductTests {
    /// Runs `regen-product`'s `quietly` on a shell command; its exit status and all it printed.
    static func quietly(_ command: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            """
            import importlib.machinery, importlib.util, sys
            loader = importlib.machinery.SourceFileLoader("regen", sys.argv[1])
            regen = importlib.util.module_from_spec(importlib.util.spec_from_loader("regen", loader))
            loader.exec_module(regen)
            regen.quietly(["sh", "-c", sys.argv[2]])
            """,
            GrammarTests.packageRoot + "/scripts/regen-product", command,
        ]
        let pipe = try ChildProcess.spawning {
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            return pipe
        }
        let output = String(decoding: pipe.fileHandleForReading.readUntilEnd(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    @Test func aFailedBuildShowsWhatTheCompilerSaid() throws {
        let result = try Self.quietly(
            "echo 'Apps/Sixth/Onboarding/Flows.swift:3:1: error: expected expression'; exit 1")
        #expect(result.status != 0)
        #expect(result.output.contains("Flows.swift:3:1: error: expected expression"), "\(result.output)")
        #expect(result.output.contains("failed (its output is above)"), "\(result.output)")
    }

    @Test func aBuildThatSucceedsPrintsNothing() throws {
        let result = try Self.quietly("echo 'Compiling 200 files'")
        #expect(result.status == 0)
        #expect(result.output.isEmpty, "\(result.output)")
    }
}
