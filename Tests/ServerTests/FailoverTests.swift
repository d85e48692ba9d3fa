import Foundation
import TestThreads
import Testing
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

/// Failover: a primary and a synchronous streaming standby; two servers behind nginx follow a
/// multi-host URL with `target_session_attrs=read-write`. Devices (the real CLI) push through nginx
/// at a steady pace; the primary dies with SIGKILL; the standby is promoted (`pg_ctl promote`);
/// the servers find it by themselves. Every push a device holds acknowledged is on the new primary exactly
/// once, every device
/// converges, and the insights count them all.
@Suite("A standby that takes over", .serialized, .ownThread)
struct FailoverTests {
    @Test func thePrimaryDiesTheStandbyIsPromotedAndNoAcknowledgedPushIsLost() async throws {
        let cluster = try ReplicaTests.Cluster(synchronous: true)
        // Two servers on the multi-host URL, behind nginx; the devices go through nginx.
        let server = try ServerProcess(databaseURL: cluster.bothHosts)
        let other = try ServerProcess(databaseURL: cluster.bothHosts)
        let balancer = try Balancer(upstreams: [server.port, other.port])
        let devices = try (0..<4).map { index in
            var device = JourneyDashboardTests.virtual(
                try Device("moodtracker", account: "f\(index)", server: server), kind: "phone")
            device.environment["ONBOARDING_SERVER"] = balancer.url.absoluteString
            return device
        }
        for device in devices {
            for line in [["launch"], ["wait", "0.5"], ["sync"]] { #expect(try device.run(line).status == 0) }
        }
        let rounds = 10
        let done = SharedCount()
        let killedAt = Locked<Date?>(nil)
        let firstAcceptedAfter = Locked<Date?>(nil)
        try await withThrowingTaskGroup(of: [String].self) { group in
            for device in devices {
                group.addTask {
                    var failures: [String] = []
                    for _ in 0..<rounds {
                        // The event is the device's own: it is kept whatever the server does.
                        let event = try device.run("do", "swipeLeft")
                        if event.status != 0 { failures.append("\(device.account): \(event.stderr)") }
                        let sync = try device.run("sync")
                        if sync.status == 0, killedAt.withLock({ $0 }) != nil {
                            firstAcceptedAfter.withLock { if $0 == nil { $0 = Date() } }
                        }
                        done.add()
                        try await Task.sleep(for: .milliseconds(100))
                    }
                    return failures
                }
            }
            group.addTask {
                while done.value < devices.count * rounds / 3 { try await Task.sleep(for: .milliseconds(20)) }
                try cluster.killPrimary()
                killedAt.withLock { $0 = Date() }
                _ = try cluster.script("promote")
                // New connections all through the servers' move: one NIO accepted but nobody served
                // when the move cancelled the server once killed the whole process
                // (apple/swift-nio#2637); the move is a graceful shutdown now.
                let until = Date().addingTimeInterval(20)
                let knocking = Locked(true)
                for _ in 0..<6 {
                    Thread.detachNewThread {
                        while knocking.withLock({ $0 }) {
                            for port in [server.port, other.port] { Self.knock(port) }
                        }
                    }
                }
                while Date() < until,
                    ![server, other].allSatisfy({ $0.logText.contains("the database moved") })
                {
                    try await Task.sleep(for: .milliseconds(50))
                }
                try await Task.sleep(for: .seconds(1))
                knocking.withLock { $0 = false }
                return []
            }
            var failures: [String] = []
            for try await batch in group { failures += batch }
            #expect(failures.isEmpty, "\(failures)")
        }
        let killed = try #require(killedAt.withLock { $0 })
        // Every device converges on the new primary.
        for device in devices { try await device.expectEveryRowStoredOnce(server.sql) }
        #expect(try server.sql("SELECT pg_is_in_recovery()") == ["f"])
        // Neither server died on the way.
        for process in [server, other] {
            #expect(process.exitStatus == nil, "\(process.logText.suffix(3_000))")
        }
        // Both servers found the promoted standby by themselves, and said so.
        for process in [server, other] {
            #expect(
                process.logText.contains("the database moved: starting again on it"),
                "\(process.logText.suffix(2_000))")
        }
        let recovered = try #require(firstAcceptedAfter.withLock { $0 })
        print(
            """
            failover: first accepted push \(String(format: "%.2f", recovered.timeIntervalSince(killed))) \
            s after the primary died
            """
        )
        // The insights catch up on the new primary, and the dashboard (through nginx) shows a recount
        // of the stored facts: every device's start, and every mood it recorded.
        try await DashboardTests.waitUntilCounted(server)
        let recount = try server.sql(
            "SELECT count(DISTINCT account)::int FROM facts WHERE kind = 'flowStarted'")
        #expect(recount == ["\(devices.count)"])
        let cookie = try DashboardTests().signIn(server)
        let json = try DashboardTests.curl(
            URL(string: balancer.url.absoluteString + "/dashboard?format=json")!, cookie: cookie)
        let trend =
            (try JSONSerialization.jsonObject(with: Data(json.body.utf8)) as? [String: Any])?["trend"]
            as? [[String: Any]] ?? []
        #expect(
            ["\(trend.map { $0["started"] as? Int ?? 0 }.reduce(0, +))"] == recount,
            "\(json.body.prefix(500))")
    }

    /// Opens a connection to `port` on this machine, sends a request and closes it at once.
    static func knock(_ port: Int) {
        guard let socket = HTTP.connectedSocket(port: port) else { return }
        defer { close(socket) }
        let request = Array("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
