import Foundation
import TestThreads
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Faults against the real server and PostgreSQL: kills, restarts, long offline spells, races.
@Suite("Account server faults", .ownThread)
struct FaultTests {
    /// A device offline for a long time: `count` journal rows (free actions) waiting in its outbox.
    static func longOffline(_ device: Device, rows count: Int) throws {
        let script = device.database.deletingLastPathComponent().appendingPathComponent("offline.txt")
        try String(repeating: "do completeOnboarding\n", count: count).write(
            to: script, atomically: true, encoding: .utf8)
        let played = try device.run("play", script.path, offline: true)
        #expect(played.status == 0, "\(played.stderr)")
    }

    /// Runs `sync` until it succeeds (a client retrying while the server is down), at most `tries`.
    static func syncUntilDone(_ device: Device, tries: Int = 60) throws -> Int {
        for attempt in 1...tries {
            if try device.run("sync").status == 0 { return attempt }
            usleep(250_000)
        }
        return -1
    }

    /// Syncs until one succeeds or `seconds` have passed; the attempts it took, or -1.
    static func syncUntilDone(_ device: Device, seconds: Double) throws -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        var attempt = 0
        while Date() < deadline {
            attempt += 1
            if try device.run("sync").status == 0 { return attempt }
            usleep(250_000)
        }
        return -1
    }

    /// Pushes of a 1,500-row outbox (three batches) while the server is killed with SIGKILL and
    /// started again: the client retries, and the server ends with every row once.
    @Test func theServerKilledMidPushLosesNothingAndAppliesNothingTwice() async throws {
        let server = try ServerProcess()
        let devices = try (0..<2).map { try Device("growth", account: "ann\($0)", server: server) }
        for device in devices { try Self.longOffline(device, rows: 1_500) }
        #expect(try devices.map { try $0.waiting() } == [1_500, 1_500])

        // Each stored row takes a millisecond more (a trigger of the test's), so a 500-row batch
        // takes half a second or more: the kill lands between batches however loaded the machine.
        _ = try server.sql(
            """
            CREATE FUNCTION test_slow_push() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM \
            pg_sleep(0.001); RETURN NULL; END $$;
            CREATE TRIGGER test_slow_push AFTER INSERT ON pushes FOR EACH ROW EXECUTE FUNCTION \
            test_slow_push();
            """)
        // Both devices push at once; the server dies in the middle.
        let pushing = devices.map { device in
            Task.blocking { try device.run("sync") }
        }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline,
            (try server.sql("SELECT count(*) FROM pushes").first.flatMap { Int($0) } ?? 0) == 0
        {
            usleep(5_000)
        }
        server.stop(signal: SIGKILL)
        for task in pushing { _ = try await task.value }
        let stored = Int(try server.sql("SELECT count(*) FROM pushes").first ?? "") ?? -1
        #expect(stored < 3_000, "the kill came after every push: the test did not test a kill mid-push")
        _ = try server.sql("DROP TRIGGER test_slow_push ON pushes")

        try server.start()
        for device in devices {
            #expect(try Self.syncUntilDone(device) > 0)
            #expect(try device.waiting() == 0)
        }
        #expect(try server.sql("SELECT count(*) FROM pushes") == ["3000"])
        #expect(try server.sql("SELECT count(DISTINCT (account, device, seq)) FROM pushes") == ["3000"])
        // Each row's facts once: free actions have none, so only the flows' facts count.
        #expect(try server.sql("SELECT count(*) FROM facts WHERE kind = 'flowStarted'") == ["0"])
        #expect(try server.sql("SELECT count(*) > 0 FROM pushes WHERE event = 'completeOnboarding'") == ["t"])
    }

    /// PostgreSQL restarted under a running server: requests fail with 503 while it is down, and
    /// the server recovers by itself (its pool reconnects) without a restart of its own. The pool
    /// retries a failed connection with a backoff that grows with the outage and is capped at 60 s
    /// (PostgresNIO's), so a loaded machine, where stopping and starting the cluster takes long,
    /// may wait up to that cap after PostgreSQL is back: the test allows 90 s.
    @Test func theServerRecoversWhenPostgresRestarts() async throws {
        let cluster = try PrivateCluster()
        defer { cluster.destroy() }
        let server = try ServerProcess(databaseURL: try cluster.freshDatabase())
        let device = try Device("growth", account: "ann", server: server)
        try device.run("do", "completeOnboarding")
        #expect(try device.waiting() == 0)

        try cluster.stop()
        try device.run("visit", "dashboard")
        #expect(try device.waiting() >= 1, "a row pushed while PostgreSQL was down")
        let ready = try await HTTP.get(server.url.appendingPathComponent("v1/ready"))
        #expect(ready.status == 503)
        #expect(ready.errorCode == "unavailable")

        try cluster.start()
        #expect(try Self.syncUntilDone(device, seconds: 90) > 0)
        #expect(try device.waiting() == 0)
        #expect(server.exitStatus == nil, "the server exited: \(server.logText)")
        #expect(try await HTTP.get(server.url.appendingPathComponent("v1/ready")).status == 200)
        #expect(try server.sql("SELECT standing FROM account_flows WHERE account = 'ann'") == ["shown"])
    }

    /// Two devices of one account finish the same tour at the same moment, one completing and one
    /// skipping, and push at the same moment: both end with the account's record, and that record
    /// is the completion. (Each finishes before hearing of the other, as two devices without a
    /// network between them do; finishing online, one could hear of the other's finish first and
    /// have nothing left to finish.)
    @Test func twoDevicesRacingToFinishTheSameTourAgree() async throws {
        let server = try ServerProcess()
        let phone = try Device("growth", account: "ann", server: server)
        let tablet = try Device("growth", account: "ann", server: server)
        for device in [phone, tablet] {
            try device.run("do", "completeOnboarding", offline: true)
            try device.run("visit", "dashboard", offline: true)
            for _ in 0..<4 { try device.run("do", "next", offline: true) }
        }
        async let completing = Task.blocking { try phone.run("do", "next", offline: true) }.value
        async let skipping = Task.blocking { try tablet.run("do", "skip", offline: true) }.value
        let (completed, skipped) = try await (completing, skipping)
        #expect(completed.status == 0, "\(completed.stderr)")
        #expect(skipped.status == 0, "\(skipped.stderr)")
        async let phonePush = Task.blocking { try phone.run("sync") }.value
        async let tabletPush = Task.blocking { try tablet.run("sync") }.value
        _ = try await (phonePush, tabletPush)
        for device in [phone, tablet] { #expect(try Self.syncUntilDone(device) > 0) }
        #expect(try phone.flowStatus("app_tour") == "completed")
        #expect(try tablet.flowStatus("app_tour") == "completed")
        #expect(try server.sql("SELECT standing FROM account_flows WHERE account = 'ann'") == ["completed"])
    }
}

/// A PostgreSQL cluster of one test's own (the restart test must not stop the one other tests use).
struct PrivateCluster {
    let folder: URL
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/dev-postgres").path
    let url: String

    init() throws {
        folder = URL(fileURLWithPath: "/tmp/onboarding-test-pg-\(UUID().uuidString.prefix(8))")
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARDING_PG_DIR"] = folder.path
        // initdb and a first start: on a machine busy with the whole suite (other clusters
        // fsyncing, Chromium, servers) this has taken close to two minutes.
        let result = try Shell.run(script, ["start"], environment: environment, seconds: 300)
        guard result.status == 0, let line = result.stdout.split(separator: "\n").last else {
            throw HarnessFailure("a private PostgreSQL did not start: \(result.stderr)")
        }
        url = String(line)
    }

    private func run(_ command: String) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARDING_PG_DIR"] = folder.path
        let result = try Shell.run(script, [command], environment: environment, seconds: 300)
        guard result.status == 0 else { throw HarnessFailure("dev-postgres \(command): \(result.stderr)") }
    }

    func stop() throws { try run("stop") }
    func start() throws { try run("start") }
    func destroy() { try? run("destroy") }
    func freshDatabase() throws -> String { try TestPostgres.freshDatabase(on: url) }
}
