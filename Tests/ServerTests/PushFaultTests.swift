import Foundation
import TestThreads
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The faults a real PostgreSQL meets, while devices push through a real server: a migration's
/// lock on `pushes`, statements cancelled, writers' connections terminated, PostgreSQL restarted.
/// In every one each push is answered by its deadline (1.5 s for a writer + 2.5 s for its
/// statement, and a little for two processes sharing two cores), nothing acknowledged is lost or
/// stored twice, the server takes pushes again within a second of a lock's or a cancel's end (after
/// the pool's reconnect backoff when connections were lost, ``reconnectBound``), and SIGTERM
/// ends it within 5 s whatever it was doing.
@Suite("Pushes through PostgreSQL's faults", .ownThreadAlone)
struct PushFaultTests {
    /// The client's bound: every push answered (none hangs). The documented 4 s is held where it
    /// is promised, at the server, by its own answer time histogram (``answeredInTime(_:)``); the
    /// client's clock also counts this test process, which the whole suite beside it (CI runs the
    /// long randomised tests at full size) kept from reading answers for seconds.
    static let answerBound = 30.0

    /// How soon pushes are accepted again after a fault that closed the writers' connections (a
    /// terminated backend, a restarted PostgreSQL): the pool opens new ones on PostgresNIO's
    /// reconnect backoff, which grows by a quarter with each failed attempt and is not
    /// configurable; with connections terminated every 300 ms for five seconds, on a machine loaded
    /// by the whole suite, it took up to 11 s. Faults that keep the connections (a lock, a
    /// cancelled statement) are held to the issue's second.
    static let reconnectBound = 20.0

    /// Lets the devices push for two seconds more, and on until one push is accepted after `from`
    /// (at most ``reconnectBound`` and a second).
    static func untilAccepted(_ load: PushLoad, after from: ContinuousClock.Instant) async throws {
        try await Task.sleep(for: .seconds(2))
        while load.firstAccepted(after: from) == nil,
            ContinuousClock.now - from < .seconds(reconnectBound + 1)
        {
            try await Task.sleep(for: .milliseconds(250))
        }
        try await Task.sleep(for: .milliseconds(500))
    }

    /// How many push requests the server answered within 4.25 s (their deadline is 4 s; the
    /// histogram's nearest bucket), and how many it answered, by its own
    /// `http_server_request_duration_seconds`, over every status.
    static func answeredInTime(_ metricsPort: Int) async throws -> (inTime: Double, all: Double) {
        let text = try await MetricsTests.scrape(metricsPort)
        let route = #"route="/v1/apps/{app}/accounts/{account}/push""#
        var (inTime, all) = (0.0, 0.0)
        for line in text.split(separator: "\n") where line.contains(route) {
            let value = Double(line.split(separator: " ").last ?? "") ?? 0
            if line.hasPrefix("http_server_request_duration_seconds_bucket"), line.contains(#"le="4.25""#) {
                inTime += value
            }
            if line.hasPrefix("http_server_request_duration_seconds_count") { all += value }
        }
        return (inTime, all)
    }

    /// One writer, a queue of eight, `pushes` locked (a long migration) for six seconds while
    /// eight devices push and a Growth device syncs its journal: no push waits past its bound, the
    /// server takes pushes again at once when the lock goes, every acknowledged row is stored
    /// once, the Growth device lands every row, and SIGTERM ends the server within 5 s while the
    /// lock is held again.
    @Test func aLockOnPushes() async throws {
        let metrics = ServerProcess.freePort()
        let server = try ServerProcess(serveOptions: [
            "--push-writers", "1", "--push-queue", "8", "--metrics-port", "\(metrics)",
        ])
        let phone = try Device("growth", account: "growth-phone", server: server)
        try FaultTests.longOffline(phone, rows: 24)
        let load = try PushLoad(server, loops: 8)
        load.start()
        try await Task.sleep(for: .seconds(1))
        let holder = try DashboardTests.holdLock(on: server.databaseURL, table: "pushes", seconds: 6)
        defer { DashboardTests.endHeldTransactions(on: server.databaseURL, holder) }
        let syncing = Task.blocking { try phone.run("sync") }
        _ = Shell.waitForExit(holder, seconds: 30)
        let released = ContinuousClock.now
        _ = try await syncing.value
        try await Task.sleep(for: .seconds(3))
        await load.stop()

        let shed = load.answers.filter { $0.status == 503 }
        #expect(!shed.isEmpty, "no push met the lock: the test did not test it")
        let (inTime, all) = try await Self.answeredInTime(metrics)
        #expect(
            inTime == all && all >= Double(load.answers.count),
            "the server answered \(all - inTime) of \(all) pushes past 4.25 s")
        #expect(
            load.late(Self.answerBound).isEmpty,
            "answered late or never: \(load.late(Self.answerBound).prefix(5))")
        let accepted = try #require(
            load.firstAccepted(after: released), "no push accepted after the lock went")
        #expect(
            (accepted - released).seconds < 1,
            """
            accepted again \((accepted - released).seconds) s after the lock \
            went: \(load.trail(from: released))
            """
        )
        let problems = try load.verify()
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        // Every 503 said why (one code per cause).
        #expect(
            Set(shed.compactMap(\.code)).isSubset(of: ["unavailable", "overloaded"]),
            "\(Set(shed.compactMap(\.code)))")

        // The Growth device lands its whole journal.
        #expect(try FaultTests.syncUntilDone(phone, seconds: 30) > 0)
        #expect(try phone.waiting() == 0)
        #expect(try server.sql("SELECT count(*) FROM pushes WHERE account = 'growth-phone'") == ["24"])

        // SIGTERM while the lock holds a push in its statement: the server ends within 5 s.
        let again = try DashboardTests.holdLock(on: server.databaseURL, table: "pushes", seconds: 30)
        defer { DashboardTests.endHeldTransactions(on: server.databaseURL, again) }
        let stuck = Task.detached {
            try await LoadSheddingTests.push(server, account: "loop0", token: load.tokens[0], seq: 10_000)
        }
        try await Task.sleep(for: .milliseconds(500))
        let stopping = ContinuousClock.now
        server.stop(signal: SIGTERM)
        let took = (ContinuousClock.now - stopping).seconds
        #expect(took < 5.5, "SIGTERM took \(took) s")
        #expect(server.exitStatus == 0, "\(server.logText.suffix(2_000))")
        let answer = try await stuck.value
        #expect(answer.status == 503, "the push in flight was answered \(answer.status)")
    }

    /// PostgreSQL cancels the writers' statements (an operator's `pg_cancel_backend`, every 150 ms
    /// for five seconds) while each stored row takes a few milliseconds more: every push is
    /// answered by its bound, and nothing acknowledged is lost or doubled.
    @Test func cancelledStatements() async throws {
        let metrics = ServerProcess.freePort()
        let server = try ServerProcess(serveOptions: ["--push-writers", "2", "--metrics-port", "\(metrics)"])
        _ = try server.sql(
            """
            CREATE FUNCTION test_slow_push() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM \
            pg_sleep(0.02); RETURN NULL; END $$;
            CREATE TRIGGER test_slow_push AFTER INSERT ON pushes FOR EACH ROW EXECUTE FUNCTION \
            test_slow_push();
            """)
        let load = try PushLoad(server, loops: 12)
        load.start()
        try await Task.sleep(for: .seconds(1))
        var cancelled = 0
        let until = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < until {
            cancelled += try server.sql(Self.writers("pg_cancel_backend")).filter { $0 == "t" }.count
            try await Task.sleep(for: .milliseconds(150))
        }
        // The fault ends: no more cancels, and rows are stored at PostgreSQL's own pace again.
        // (The function replaced, not the trigger dropped: that would lock `pushes` under the pushes.)
        _ = try server.sql(
            """
            CREATE OR REPLACE FUNCTION test_slow_push() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
            RETURN NULL; END $$
            """
        )
        let ended = ContinuousClock.now
        try await Task.sleep(for: .seconds(2))
        await load.stop()
        #expect(cancelled > 0, "no statement was cancelled")
        #expect(load.answers.contains { $0.status == 503 }, "no push met a cancel")
        let (inTime, all) = try await Self.answeredInTime(metrics)
        #expect(
            inTime == all && all >= Double(load.answers.count),
            "the server answered \(all - inTime) of \(all) pushes past 4.25 s")
        #expect(load.late(Self.answerBound).isEmpty, "\(load.late(Self.answerBound).prefix(5))")
        let accepted = try #require(load.firstAccepted(after: ended))
        #expect(
            (accepted - ended).seconds < 1,
            "accepted again \((accepted - ended).seconds) s after: \(load.trail(from: ended))")
        let problems = try load.verify()
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    /// The writers' connections terminated (`pg_terminate_backend`, every 300 ms for five seconds,
    /// as a failover or an operator does): every push is answered by its bound, nothing acknowledged
    /// is lost or doubled, and the server takes pushes again once its pool has reconnected.
    @Test func terminatedWriters() async throws {
        let metrics = ServerProcess.freePort()
        let server = try ServerProcess(serveOptions: ["--push-writers", "2", "--metrics-port", "\(metrics)"])
        let load = try PushLoad(server, loops: 12)
        load.start()
        try await Task.sleep(for: .seconds(1))
        var terminated = 0
        let until = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < until {
            terminated += try server.sql(Self.writers("pg_terminate_backend", active: false)).filter {
                $0 == "t"
            }.count
            try await Task.sleep(for: .milliseconds(300))
        }
        let ended = ContinuousClock.now
        try await Self.untilAccepted(load, after: ended)
        await load.stop()
        #expect(terminated > 0, "no writer was terminated")
        let (inTime, all) = try await Self.answeredInTime(metrics)
        #expect(
            inTime == all && all >= Double(load.answers.count),
            "the server answered \(all - inTime) of \(all) pushes past 4.25 s")
        #expect(load.late(Self.answerBound).isEmpty, "\(load.late(Self.answerBound).prefix(5))")
        let accepted = try #require(load.firstAccepted(after: ended))
        #expect(
            (accepted - ended).seconds < Self.reconnectBound,
            "accepted again \((accepted - ended).seconds) s after: \(load.trail(from: ended))")
        let problems = try load.verify()
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    /// PostgreSQL stopped for three seconds and started again while devices push, then stopped
    /// again and the server sent SIGTERM: pushes are answered by their bound while it is down, the
    /// server takes pushes again once its pool has reconnected to PostgreSQL, nothing
    /// acknowledged is lost, and the server ends within 5 s with PostgreSQL gone.
    @Test func postgresRestarted() async throws {
        let cluster = try PrivateCluster()
        defer { cluster.destroy() }
        let metrics = ServerProcess.freePort()
        let server = try ServerProcess(
            databaseURL: try cluster.freshDatabase(), serveOptions: ["--metrics-port", "\(metrics)"])
        let load = try PushLoad(server, loops: 8)
        load.start()
        try await Task.sleep(for: .seconds(1))
        try cluster.stop()
        try await Task.sleep(for: .seconds(3))
        try cluster.start()
        let back = ContinuousClock.now
        try await Self.untilAccepted(load, after: back)
        await load.stop()
        #expect(load.answers.contains { $0.status == 503 }, "no push met the outage")
        let (inTime, all) = try await Self.answeredInTime(metrics)
        #expect(
            inTime == all && all >= Double(load.answers.count),
            "the server answered \(all - inTime) of \(all) pushes past 4.25 s")
        #expect(load.late(Self.answerBound).isEmpty, "\(load.late(Self.answerBound).prefix(5))")
        let accepted = try #require(
            load.firstAccepted(after: back), "no push accepted after PostgreSQL came back")
        #expect(
            (accepted - back).seconds < Self.reconnectBound,
            """
            accepted again \((accepted - back).seconds) s after PostgreSQL came \
            back: \(load.trail(from: back))
            """
        )
        let problems = try load.verify()
        #expect(problems.isEmpty, "\(problems.prefix(5))")

        try cluster.stop()
        let stopping = ContinuousClock.now
        server.stop(signal: SIGTERM)
        #expect((ContinuousClock.now - stopping).seconds < 5.5, "SIGTERM with PostgreSQL gone took too long")
        #expect(server.exitStatus == 0, "\(server.logText.suffix(2_000))")
    }

    /// The server's connections of `role`, each passed to `function` (`pg_cancel_backend` or
    /// `pg_terminate_backend`): those running a statement unless `active` is false.
    static func writers(_ function: String, active: Bool = true) -> String {
        """
        SELECT \(function)(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'onboarding-server push writer'
        \(active ? "AND state = 'active'" : "")
        """
    }
}
