import Foundation
import TestThreads
import Testing
import TourFixtures

/// Operating.md's runbook "adding a server", followed command by command while devices (the real
/// CLI) push through nginx: the new server is started with the same `DATABASE_URL`, secret and
/// options (`--trusted-proxy` naming the balancer); once its `/v1/ready` answers, its line goes
/// into nginx's upstream and nginx reloads, and it takes pushes. Removing it: its line out, a
/// reload, then SIGTERM: it ends by itself, and no device's sync fails at any step.
@Suite("The runbooks", .serialized, .ownThread)
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
        // A failed expectation that throws still ends the loops (they would push until the run ends).
        defer { pushing.withLock { $0 = false } }
        let failures = Locked<[String]>([])
        let loops = devices.map { device in
            Task.blocking {
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
        let ready = try await Patience.untilAnswered({
            try await HTTP.get(added.url.appendingPathComponent("v1/ready"))
        }) {
            $0.status != 200
        }
        #expect(ready.status == 200, "the added server's /v1/ready: \(added.logText.suffix(2_000))")
        // 3. add its line to nginx's upstream and reload: it takes pushes.
        try balancer.reload(upstreams: [first.port, second.port, added.port])
        // A few pushes, waited for generously: under the full suite's load the loops crawl (one
        // full run saw a single push reach it in 30 s); one is what proves it takes them.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, Self.pushes(added) < 3 { try await Task.sleep(for: .milliseconds(200)) }
        #expect(Self.pushes(added) >= 1, "the added server took no push in 60 s")
        // Removing it: its line out, reload, then SIGTERM (it finishes the requests it has).
        try balancer.reload(upstreams: [first.port, second.port])
        // nginx's old workers finish what they have after a reload, and a push then in flight ends
        // later: what the server took is read once it has taken nothing for three seconds.
        var taken = Self.pushes(added)
        var unchangedSince = ContinuousClock.now
        let settled = ContinuousClock.now + Patience.limit
        while ContinuousClock.now - unchangedSince < .seconds(3), ContinuousClock.now < settled {
            try await Task.sleep(for: .milliseconds(250))
            let now = Self.pushes(added)
            if now != taken { (taken, unchangedSince) = (now, ContinuousClock.now) }
        }
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

    /// Operating.md's runbook "the primary died, without a manager", step by step, while devices push
    /// through nginx to two servers on both hosts: 1. the primary is down (killed as a machine dies,
    /// and it answers nothing); 2. the standby is promoted; 3. both servers find it by themselves,
    /// nothing restarted; 4. the old primary's machine is rebuilt from the new primary as its
    /// synchronous standby, and commits go on (they wait for it); 5. every device's waiting count
    /// falls to 0, each row stored once, the rebuilt standby holding them too. A server added then
    /// with the same URL takes the new primary, never the rebuilt standby.
    @Test func thePrimaryDiedWithoutAManagerAndTheRunbookBringsEverythingBack() async throws {
        let cluster = try ReplicaTests.Cluster(synchronous: true)
        let options = ["--trusted-proxy", "127.0.0.1"]
        let servers = try (0..<2).map { _ in
            try ServerProcess(databaseURL: cluster.bothHosts, serveOptions: options)
        }
        let balancer = try Balancer(upstreams: servers.map(\.port))
        let devices = try (0..<3).map { index in
            var device = JourneyDashboardTests.virtual(
                try Device("moodtracker", account: "m\(index)", server: servers[0]), kind: "phone")
            device.environment["ONBOARDING_SERVER"] = balancer.url.absoluteString
            return device
        }
        for device in devices { #expect(try device.run("launch").status == 0) }
        let pushing = Locked(true)
        // A failed expectation that throws still ends the loops (they would push until the run ends).
        defer { pushing.withLock { $0 = false } }
        let failures = Locked<[String]>([])
        let accepted = Locked<[Date]>([])
        let loops = devices.map { device in
            Task.blocking {
                while pushing.withLock({ $0 }) {
                    // The event is the device's own, whatever the server does; a sync may be
                    // refused while the primary is gone (the device keeps the rows).
                    let event = try device.run("do", "swipeLeft")
                    if event.status != 0 {
                        failures.withLock { $0.append("\(device.account): \(event.stderr)") }
                    }
                    if try device.run("sync").status == 0 { accepted.withLock { $0.append(Date()) } }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        func acceptedSince(_ instant: Date) -> Int { accepted.withLock { $0.filter { $0 > instant }.count } }
        // By time, as Patience waits: a machine busy with the whole suite once took 30 s for one.
        func waitForPushes(since instant: Date, what: String) async throws {
            let accepted = try await Patience.untilAnswered({ () async -> Int in acceptedSince(instant) }) {
                $0 < 3
            }
            #expect(accepted >= 3, "\(what): fewer than three pushes accepted within \(Patience.limit)")
        }
        try await waitForPushes(since: .distantPast, what: "before the failover")
        // 1. Make sure it is down.
        try cluster.killPrimary()
        #expect(
            try Shell.run(TestPostgres.psql, [cluster.primary, "-qtAc", "SELECT 1"]).status != 0,
            "the old primary answers")
        // 2. Promote the standby.
        _ = try cluster.script("promote")
        let promoted = Date()
        // 3. The servers find it by themselves; nothing to restart.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline,
            !servers.allSatisfy({ $0.logText.contains("the database moved: starting again on it") })
        {
            try await Task.sleep(for: .milliseconds(100))
        }
        for server in servers {
            #expect(
                server.logText.contains("the database moved: starting again on it"),
                "\(server.logText.suffix(2_000))")
        }
        try await waitForPushes(since: promoted, what: "after the promotion")
        // 4. A new standby from the new primary, synchronous: commits wait for it, and go on.
        let rebuilt = try cluster.script("rebuild", "--synchronous").components(separatedBy: "\n").last ?? ""
        #expect(
            try cluster.sqlOnStandby(
                "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'rebuilt'") == ["sync"])
        let synchronous = Date()
        try await waitForPushes(since: synchronous, what: "with the rebuilt standby synchronous")
        // A server added now, on the same URL, takes the new primary and is ready.
        let added = try ServerProcess(databaseURL: cluster.bothHosts, serveOptions: options)
        let addedReady = try await Patience.untilAnswered({
            try await HTTP.get(added.url.appendingPathComponent("v1/ready"))
        }) {
            $0.status != 200
        }
        #expect(addedReady.status == 200)
        pushing.withLock { $0 = false }
        for loop in loops { try await loop.value }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        // 5. The devices' waiting counts fall to 0; each row is stored once, on both machines.
        for device in devices {
            let (rows, id) = try await device.expectEveryRowStoredOnce(
                cluster.sqlOnStandby, "on the new primary")
            let count = Device.storedOnce(id)
            // Synchronous: what the primary acknowledged is on the rebuilt standby (replayed soon after).
            var replayed: [String] = []
            for _ in 0..<40 {
                let result = try Shell.run(TestPostgres.psql, [rebuilt, "-qtAc", count])
                replayed = result.stdout.split(separator: "\n").map(String.init)
                if replayed == ["\(rows) \(rows)"] { break }
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(replayed == ["\(rows) \(rows)"], "\(device.account) on the rebuilt standby")
        }
        #expect(
            try Shell.run(TestPostgres.psql, [rebuilt, "-qtAc", "SELECT pg_is_in_recovery()"]).stdout
                .hasPrefix("t"))
        for server in servers + [added] {
            #expect(server.exitStatus == nil, "\(server.logText.suffix(2_000))")
        }
    }

    /// How many pushes `server` answered (its request lines at info).
    static func pushes(_ server: ServerProcess) -> Int {
        server.logText.split(separator: "\n").filter { $0.contains("request") && $0.contains("/push") }.count
    }
}
