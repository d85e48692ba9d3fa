import Foundation
import Testing
import TourCodec
import TourFixtures
import TourRuntime

/// Which catalog a new syncing device runs from its first command.
extension PublishingTests {
    /// Registers `executable`'s compiled catalog (`APP catalog --json`) with the real command; its text.
    static func registerCompiled(of executable: String, on server: ServerProcess) throws -> String {
        let compiled = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent(executable).path, ["catalog", "--json"]
        )
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let file = Scratch.folder.appendingPathComponent("\(executable)-\(UUID().uuidString).json")
        try compiled.write(to: file, atomically: true, encoding: .utf8)
        let registered = try server.command(["register", "--app", executable, file.path])
        guard registered.status == 0 else { throw HarnessFailure("register: \(registered.stderr)") }
        return compiled
    }

    static func registerGrowthCompiled(on server: ServerProcess) throws -> String {
        try registerCompiled(of: "growth", on: server)
    }

    /// Growth's tour is the account's: a device that syncs an account draws a rollout by the
    /// account from its very first command (the command that enrols it), not by the install and
    /// then by the account. Twenty new devices at 50%: each runs the version its account's hash
    /// names on its first command and on every one after, with or without the server.
    @Test func aSyncingDeviceDrawsByItsAccountFromItsFirstCommand() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_SECRET": ServerProcess.secret])
        let admin = try server.operatorCredential()
        let compiled = try PublishingTests.registerGrowthCompiled(on: server)
        let version = try #require(try TourValue(jsonText: compiled).objectValue?["version"]?.intValue) + 1
        let reworded = try PublishingTests.reworded(compiled, title: "Welcome aboard", version: version)
        let answer = try await PublishingTests().publish(
            server, admin, reworded, rollout: 50, key: try server.publicationKey(app: "growth"), app: "growth"
        )
        try #require(answer.status == 201, "\(String(decoding: answer.body, as: UTF8.self))")

        var sides: [Bool] = []
        for index in 0..<20 {
            let device = try Device("growth", account: "user\(index)", server: server)
            let included = Rollout.includes(
                subject: "account:user\(index)", salt: "growth/catalog/\(version)", percent: 50)
            let expected = included ? "published" : "compiled"
            func source(_ status: [String: Any]) -> String? {
                (status["catalog"] as? [String: Any])?["source"] as? String
            }
            #expect(source(try device.status()) == expected, "device \(index): its first command")
            #expect(source(try device.status()) == expected, "device \(index): its second command")
            #expect(source(try device.status(offline: true)) == expected, "device \(index): offline")
            sides.append(included)
        }
        // Account names fixed, so the split is fixed too; both sides must be present to test anything.
        #expect(sides.contains(true) && sides.contains(false), "\(sides)")
    }
}
