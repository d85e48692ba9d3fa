import AccountSync
import CatalogDocuments
import Foundation
import OnboardingServer
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures

/// A partial rollout over real devices: exactly the installs whose bucket is under the rollout,
/// computed here from each device's install id; raising it keeps them and adds the others.
@Suite("A partial rollout on devices", .ownThread)
struct PartialRolloutTests {
    @Test func halfTheInstallsGetItTheOnesTheHashSaysAndRaisingItKeepsThem() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_SECRET": ServerProcess.secret])
        let admin = try server.credential()
        let key = try server.publicationKey(app: "lockedin")
        let compiled = try PublishingTests.registerCompiled(on: server)
        let v2 = try PublishingTests.reworded(compiled)
        #expect(try await PublishingTests().publish(server, admin, v2, rollout: 50, key: key).status == 201)

        let devices = try (0..<16).map { try Device("lockedin", account: "user\($0)", server: server) }
        var included: Set<Int> = []
        for (index, device) in devices.enumerated() {
            let status = try device.status()
            let id = try #require(
                try Shell.run("/usr/bin/sqlite3", [device.database.path, "SELECT id FROM sync_device"]).stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines).nonEmpty)
            let expected = Rollout.includes(subject: "install:" + id, salt: "lockedin/catalog/2", percent: 50)
            let source = (status["catalog"] as? [String: Any])?["source"] as? String
            #expect(source == (expected ? "published" : "compiled"), "device \(index)")
            if source == "published" { included.insert(index) }
            // The same answer on the next run.
            #expect(((try device.status())["catalog"] as? [String: Any])?["source"] as? String == source)
        }
        // Install ids are random: with 16 of them, all on one side of 50% has odds of 1 in 32,768.
        #expect(!included.isEmpty && included.count < devices.count, "\(included)")
        #expect(try await PublishingTests().publish(server, admin, v2, rollout: 100).status == 201)
        for (index, device) in devices.enumerated() {
            let source = ((try device.status())["catalog"] as? [String: Any])?["source"] as? String
            #expect(
                source == "published",
                "device \(index), \(included.contains(index) ? "included before" : "added")")
        }
    }
}
