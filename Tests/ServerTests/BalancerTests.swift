import Foundation
import TestThreads
import Testing
import TourFixtures

/// Load balancing: several `onboarding-server` processes on one PostgreSQL behind nginx. Devices (the
/// products' real CLIs) push through the balancer at a steady pace while one server is killed
/// with SIGKILL: every push a device holds acknowledged is stored exactly once, the devices'
/// next pushes land on the other server, and each device's journal is on the server whole.
@Suite("Several servers behind a balancer", .serialized, .ownThread)
struct BalancerTests {
    @Test func aServerKilledMidLoadLosesNoAcknowledgedPushAndTheOtherTakesTheDevices() async throws {
        guard Balancer.nginx != nil else {
            Issue.record("nginx is not installed: apt-get install nginx (.ci/run installs it)")
            return
        }
        let first = try ServerProcess()
        let second = try ServerProcess(databaseURL: first.databaseURL)
        let balancer = try Balancer(upstreams: [first.port, second.port])
        let devices = try (0..<6).map { index in
            var device = try Device("moodtracker", account: "b\(index)", server: first)
            device.environment = ["ONBOARDING_SERVER": balancer.url.absoluteString]
            return device
        }
        // Each device: launch, then a mood recorded and pushed each step (an event and a sync).
        let rounds = 12
        let done = SharedCount()
        let killed = SharedCount()
        try await withThrowingTaskGroup(of: [String].self) { group in
            for device in devices {
                group.addTask {
                    var failures: [String] = []
                    for line in [["launch"], ["wait", "0.5"]]
                        + Array(repeating: ["do", "swipeLeft"], count: rounds)
                    {
                        let result = try device.run(line)
                        // An event is kept on the device whatever the network does; only a sync may fail.
                        if result.status != 0 {
                            failures.append(
                                "\(device.account) \(line.joined(separator: " ")): \(result.stderr)")
                        }
                        _ = try device.run("sync")
                        done.add()
                    }
                    return failures
                }
            }
            // A third of the way in, the first server dies with everything it was doing.
            group.addTask {
                while done.value < devices.count * rounds / 3 { try await Task.sleep(for: .milliseconds(20)) }
                first.stop(signal: SIGKILL)
                killed.add()
                return []
            }
            var failures: [String] = []
            for try await batch in group { failures += batch }
            #expect(failures.isEmpty, "\(failures)")
        }
        #expect(killed.value == 1)
        #expect(first.exitStatus != nil, "the first server was not killed")
        // Anything still waiting goes on the next sync, through the server that is left.
        for device in devices {
            let giveUp = ContinuousClock.now + Patience.limit
            while try device.waiting() != 0, ContinuousClock.now < giveUp { _ = try device.run("sync") }
            #expect(try device.waiting() == 0, "\(device.account)")
            let journal = try device.run("journal", "--json", offline: true).stdout
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(journal.utf8)) as? [Any])
                .count
            let id = try #require(
                (try device.status(offline: true)["sync"] as? [String: Any])?["device"] as? String)
            // Every row once: as many pushes as journal rows, each seq once.
            #expect(
                try second.sql(
                    "SELECT count(*) || ' ' || count(DISTINCT seq) FROM pushes WHERE device = '\(id)'") == [
                        "\(rows) \(rows)"
                    ],
                "\(device.account)")
        }
        // The balancer still answers, through the server that is left.
        #expect(try await HTTP.get(balancer.url.appendingPathComponent("v1/health")).status == 200)
    }
}

/// A count shared by the tasks of a test.
final class SharedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}
