import Foundation
import Testing
import TourFixtures

/// Server.md's runbook "adding a server", followed command by command while devices (the real
/// CLI) push through nginx: the new server is started with the same `DATABASE_URL`, secret and
/// options (`--trusted-proxy` naming the balancer); once its `/v1/ready` answers, its line goes
/// into nginx's upstream and nginx reloads, and it takes pushes. Removing it: its line out, a
/// reload, then SIGTERM: it ends by itself, and no device's sync fails at any step.
@Suite("The runbooks", .serialized)
struct RunbookTests {
    @Test func aServerAddedAndRemovedAsTheRunbookSaysFailsNoPush() async throws {
        let options = ["--trusted-proxy", "127.0.0.1"]
        // Info: each request's line, which says which server took it.
        let first = try ServerProcess(environment: ["LOG_LEVEL": "info"], serveOptions: options)
        let second = try ServerProcess(
            databaseURL: first.databaseURL, environment: ["LOG_LEVEL": "info"], serveOptions: options)
        let balancer = try Balancer(upstreams: [first.port, second.port])
        let devices = try (0..<3).map { index in
            var device = JourneyDashboardTests.virtual(
                try Device("moodtracker", account: "r\(index)", server: first), kind: "phone")
            device.environment["ONBOARDING_SERVER"] = balancer.url.absoluteString
            return device
        }
        for device in devices { #expect(try device.run("launch").status == 0) }
        let pushing = Locked(true)
        let failures = Locked<[String]>([])
        let loops = devices.map { device in
            Task.detached {
                while pushing.withLock({ $0 }) {
                    for line in [["do", "swipeLeft"], ["sync"]] {
                        let result = try device.run(line)
                        if result.status != 0 {
                            failures.withLock { $0.append("\(device.account) \(line): \(result.stderr)") }
                        }
                    }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        // 1. Start it with the same DATABASE_URL, ONBOARDING_SERVER_SECRET and options.
        let added = try ServerProcess(
            databaseURL: first.databaseURL, environment: ["LOG_LEVEL": "info"], serveOptions: options)
        // 2. When its /v1/ready answers,
        var ready = false
        for _ in 0..<100 where !ready {
            ready = try await HTTP.get(added.url.appendingPathComponent("v1/ready")).status == 200
            if !ready { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(ready, "the added server's /v1/ready: \(added.logText.suffix(2_000))")
        // 3. add its line to nginx's upstream and reload: it takes pushes.
        try balancer.reload(upstreams: [first.port, second.port, added.port])
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, Self.pushes(added) < 3 { try await Task.sleep(for: .milliseconds(200)) }
        #expect(Self.pushes(added) >= 3, "the added server took \(Self.pushes(added)) pushes in 30 s")
        // Removing it: its line out, reload, then SIGTERM (it finishes the requests it has).
        try balancer.reload(upstreams: [first.port, second.port])
        try await Task.sleep(for: .seconds(1))
        let taken = Self.pushes(added)
        let stopping = Date()
        added.stop()
        #expect(added.exitStatus == 0, "\(added.logText.suffix(2_000))")
        #expect(
            Date().timeIntervalSince(stopping) < 6, "its stop took \(Date().timeIntervalSince(stopping)) s")
        // The others go on taking every push.
        try await Task.sleep(for: .seconds(2))
        pushing.withLock { $0 = false }
        for loop in loops { try await loop.value }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(Self.pushes(added) == taken, "pushes reached the server after its line was taken out")
        for device in devices { #expect(try device.waiting() == 0, "\(device.account)") }
    }

    /// How many pushes `server` answered (its request lines at info).
    static func pushes(_ server: ServerProcess) -> Int {
        server.logText.split(separator: "\n").filter { $0.contains("request") && $0.contains("/push") }.count
    }
}
