import AccountSync
import Foundation
import OnboardingServer
import PostgresNIO
import ServerDatabase
import ServerKit
import ServerSyncAPI
import TestThreads
import Testing
import TourCore

#if canImport(Glibc)
    import Glibc
#endif

/// A server that sheds load instead of lying: a deadline returns at the deadline, a push
/// answered with an error was never committed, and past its queue the server answers 503 with
/// `Retry-After` at once, keeps answering health checks and recovers by itself. PostgreSQL is held
/// still with a real lock on `pushes` from another session.
@Suite("Deadlines and load shedding", .ownThread)
struct LoadSheddingTests {
    /// A read past its deadline is answered at the deadline while PostgreSQL still runs it (the
    /// read is cancelled and left to end: it cannot have written anything). Asserted by order, not
    /// by a stopwatch, so a loaded machine cannot fail it; a task group answered only after the
    /// read ended. And a read cannot write: PostgreSQL refuses it on a read's connection (25006),
    /// so the deadline that abandons work is never put on a write.
    @Test func aReadIsAnsweredAtItsDeadlineAndCannotWrite() async throws {
        try await TestPostgres.withMigratedClient { client, logger in
            let reads = ReadOnlyDatabase(sharing: client, logger: logger)
            // A connection ready first, so the read below starts at once even on a loaded machine.
            _ = try await reads.read(within: .seconds(120)) { _, _ in 0 }
            // Five seconds: on a machine busy with the whole suite, a read's statement has taken
            // more than one to reach PostgreSQL (it was not running yet when the answer came).
            await #expect(throws: DatabaseUnavailable.self) {
                try await reads.read(within: .seconds(5)) { connection, logger in
                    try await connection.query("SELECT pg_sleep(30)", logger: logger)
                }
            }
            // The answer came before the read ended: its 30 s statement is still to be seen running
            // after it (on a machine busy with the whole suite it may reach PostgreSQL only after
            // the answer, so it is looked for over a while; an answer that waited for the read
            // would find it ended and never see it).
            var sleeping = 0
            let lookedUntil = ContinuousClock.now + .seconds(20)
            while sleeping == 0, ContinuousClock.now < lookedUntil {
                for try await count in try await client.query(
                    """
                    SELECT count(*)::bigint FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' \
                    AND state = 'active'
                    """,
                    logger: logger
                ).decode(Int64.self) { sleeping = Int(count) }
                if sleeping == 0 { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(sleeping == 1, "the answer waited for the read to end")
            // A read that ends before its deadline answers (a long one: the suite's load can keep a
            // task from starting for seconds).
            #expect(try await reads.read(within: .seconds(120)) { _, _ in 7 } == 7)
            do {
                _ = try await reads.read(within: .seconds(120)) { connection, logger in
                    try await connection.query("CREATE TABLE written_by_a_read (x int)", logger: logger)
                }
                Issue.record("a read wrote")
            } catch let error as PSQLError {
                #expect(error.serverInfo?[.sqlState] == "25006", "\(String(reflecting: error))")
            }
            _ = try? await client.query(
                "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'",
                logger: logger)
        }
    }

    static func push(_ server: ServerProcess, account: String, token: String, seq: Int64 = 1) async throws
        -> HTTP.Answer
    {
        let device = "dev-\(account)"
        let body = try PushBatch(
            device: device,
            items: [PushBatchingTests.item(seq, flow: "tour", standing: .completed, device: device)]
        ).tourValue.jsonUTF8()
        return try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/\(account)/push"), token: token,
            body: Data(body))
    }

    /// Pushes as a device does: again after `Retry-After` while the answer is 503. A server on a
    /// machine the whole suite loads may shed a push again for a while (the writers' 1.5 s wait is
    /// a bound of its own), so this tries for two minutes; it returns the last answer.
    static func pushUntilAccepted(_ server: ServerProcess, account: String, token: String, seq: Int64 = 1)
        async throws
        -> HTTP.Answer
    {
        var answer = try await push(server, account: account, token: token, seq: seq)
        let giveUp = ContinuousClock.now + .seconds(120)
        while answer.status == 503, ContinuousClock.now < giveUp {
            try await Task.sleep(for: .seconds(1))
            answer = try await push(server, account: account, token: token, seq: seq)
        }
        return answer
    }

    /// PostgreSQL held still past every bound while a push is written: the push is answered 503, and
    /// it was not committed (the lock released later lets nothing through); sent again, it is
    /// stored once.
    @Test func aPushAnsweredWithAnErrorWasNotCommitted() async throws {
        let server = try ServerProcess()
        let token = try server.token(account: "ann")
        #expect(try await Self.push(server, account: "ann", token: token, seq: 1).status == 200)
        // Held far longer than the writers' statement_timeout (2.5 s), so the push's statement
        // is cancelled by PostgreSQL whatever the machine's load.
        let holder = try DashboardTests.holdLock(on: server.databaseURL, table: "pushes", seconds: 12)
        defer { DashboardTests.endHeldTransactions(on: server.databaseURL, holder) }
        let answer = try await Self.push(server, account: "ann", token: token, seq: 2)
        #expect(answer.status == 503)
        #expect(answer.retryAfter != nil)
        // The lock goes; nothing of the refused push was stored.
        if !Shell.waitForExit(holder, seconds: 30) { holder.terminate() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try server.sql("SELECT count(*) FROM pushes WHERE account = 'ann' AND seq = 2") == ["0"])
        // Sent again as a device does (after Retry-After, while the answer is 503): stored once.
        let again = try await Self.pushUntilAccepted(server, account: "ann", token: token, seq: 2)
        let stored = try server.sql("SELECT count(*) FROM pushes WHERE account = 'ann'")
        #expect(again.status == 200, "answered \(again.status) \(again.errorCode ?? "")")
        #expect(stored == ["2"])
    }

    /// PostgreSQL holds `catalogs` still, where the app's tracking plan is read before a push is
    /// queued: the push is answered 503 with Retry-After at its bound while the lock is still held
    /// (the lookup once had no bound: the push waited for as long as the database did, and a
    /// server moving to a promoted standby waited for it forever). Once the lock goes, it is stored.
    @Test func aPushWhosePlanCannotBeReadIsAnsweredAtItsBound() async throws {
        let server = try ServerProcess()
        let token = try server.token(account: "bea")
        let holder = try DashboardTests.holdLock(on: server.databaseURL, table: "catalogs", seconds: 30)
        defer { DashboardTests.endHeldTransactions(on: server.databaseURL, holder) }
        let answer = try await Self.push(server, account: "bea", token: token)
        #expect(holder.isRunning, "the push was answered only once the lock went")
        #expect(answer.status == 503, "answered \(answer.status) \(answer.errorCode ?? "")")
        #expect(answer.retryAfter != nil)
        DashboardTests.endHeldTransactions(on: server.databaseURL, holder)
        let again = try await Self.pushUntilAccepted(server, account: "bea", token: token)
        #expect(again.status == 200, "answered \(again.status) \(again.errorCode ?? "")")
        #expect(try server.sql("SELECT count(*) FROM pushes WHERE account = 'bea'") == ["1"])
    }

    /// PostgreSQL closes the connection a push is being written on (an operator's
    /// `pg_terminate_backend`; a restart or a failover does the same): the push is answered 503 with
    /// Retry-After, as one the database did not answer. It was answered 500 without Retry-After,
    /// as the server's own failure (logged as an error); the suite met it at random, where a test's
    /// held lock is ended by closing every connection of its database. Sent again, the push is
    /// stored once.
    @Test func aPushWhoseConnectionPostgreSQLClosesIsAnsweredAsUnavailable() async throws {
        let server = try ServerProcess(serveOptions: ["--push-writers", "1"])
        let token = try server.token(account: "cid")
        #expect(try await Self.push(server, account: "cid", token: token, seq: 1).status == 200)
        let holder = try DashboardTests.holdLock(on: server.databaseURL, table: "pushes", seconds: 20)
        defer { DashboardTests.endHeldTransactions(on: server.databaseURL, holder) }
        // The writer's statement waits on the lock (within its 2.5 s statement_timeout): its
        // connection is closed from PostgreSQL's side. A loaded machine's psql can miss that
        // window; the push, then answered at its timeout and not stored, is sent again.
        var closed = false
        var lastAnswer: HTTP.Answer?
        let giveUp = ContinuousClock.now + Patience.limit
        while !closed, ContinuousClock.now < giveUp {
            let pushing = Task { try await Self.push(server, account: "cid", token: token, seq: 2) }
            for _ in 0..<100 where !closed {
                closed = try server.sql(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> \
                    pg_backend_pid()
                    """
                ).contains("t")
                if !closed { try await Task.sleep(for: .milliseconds(20)) }
            }
            lastAnswer = try await pushing.value
        }
        #expect(closed, "no push statement was seen waiting on the lock")
        let refused = try #require(lastAnswer)
        #expect(refused.status == 503, "answered \(refused.status) \(refused.errorCode ?? "")")
        #expect(refused.retryAfter != nil)
        DashboardTests.endHeldTransactions(on: server.databaseURL, holder)
        let again = try await Self.pushUntilAccepted(server, account: "cid", token: token, seq: 2)
        #expect(again.status == 200, "answered \(again.status) \(again.errorCode ?? "")")
        #expect(try server.sql("SELECT count(*) FROM pushes WHERE account = 'cid'") == ["2"])
    }

    /// A writer's first push, sent while PostgreSQL holds `pushes` still, is cancelled while its
    /// statement is being prepared. PostgresNIO keeps that failure for the statement on that
    /// connection and answers every later push on it with the same error, without sending it: the
    /// server answered 503 for as long as the connection lived (minutes in the whole suite's run,
    /// where the writer that took the push during the lock was one that had not prepared yet).
    /// The connection is closed on such an error, so once the lock goes the next push is stored.
    @Test func aPushCancelledWhilePreparedDoesNotJamTheWriter() async throws {
        let server = try ServerProcess(serveOptions: ["--push-writers", "1"])
        let token = try server.token(account: "ann")
        // No push before the lock: the writer's connection prepares its statement during it. Held
        // until the push is answered, however late a loaded machine sends it (a lock of 5 s could
        // end before the push reached its statement, and the push was stored).
        let holder = try DashboardTests.holdLock(on: server.databaseURL, table: "pushes", seconds: 60)
        defer { DashboardTests.endHeldTransactions(on: server.databaseURL, holder) }
        #expect(try await Self.push(server, account: "ann", token: token, seq: 1).status == 503)
        DashboardTests.releaseHold(on: server.databaseURL, holder)
        // The lock is gone: a retry is taken (however loaded the machine, not after a restart).
        let answer = try await Self.pushUntilAccepted(server, account: "ann", token: token, seq: 1)
        #expect(answer.status == 200, "answered \(answer.status) \(answer.errorCode ?? "")")
        #expect(try server.sql("SELECT count(*) FROM pushes WHERE account = 'ann'") == ["1"])
        // And the writer goes on taking pushes.
        #expect(try await Self.push(server, account: "ann", token: token, seq: 2).status == 200)
    }

    /// One writer, a queue of two, and the writer stuck behind a lock: of many pushes at once, the
    /// ones past the queue are shed at once with 503 and Retry-After; health and readiness answer
    /// meanwhile; when the lock goes, the server takes pushes again by itself, and every push that
    /// was answered 200 is stored exactly once, and no other.
    @Test func anOverloadedServerShedsAndRecovers() async throws {
        let server = try ServerProcess(serveOptions: ["--push-writers", "1", "--push-queue", "2"])
        let signer = try TokenSignerForTests()
        let accounts = (0..<24).map { "acct\($0)" }
        // Signed before the lock is taken, so the pushes go out together while it is held.
        var tokens: [String: String] = [:]
        for account in accounts { tokens[account] = await signer.token(account: account, app: "growth") }
        let signed = tokens
        // Each token checked once before (the server remembers a checked signature), so the pushes
        // reach the writers' queue together however slowly a loaded machine checks a new token.
        for account in accounts {
            let flows = server.url.appendingPathComponent("v1/apps/growth/accounts/\(account)/flows")
            #expect(try await HTTP.get(flows, token: signed[account] ?? "").status == 200)
        }
        // Held long enough for all 24 pushes to arrive while it is held on a machine the whole
        // suite loads (with 2 s, a third of them arrived after it in one full run); past the
        // writers' statement_timeout, so the writer's own push is cancelled and its connection
        // replaced meanwhile (``aPushCancelledWhilePreparedDoesNotJamTheWriter``).
        let holder = try DashboardTests.holdLock(on: server.databaseURL, table: "pushes", seconds: 6)
        defer { DashboardTests.endHeldTransactions(on: server.databaseURL, holder) }
        let started = ContinuousClock.now
        let answers = try await withThrowingTaskGroup(of: (String, HTTP.Answer, Duration).self) { group in
            for account in accounts {
                group.addTask {
                    let sent = ContinuousClock.now
                    let answer = try await Self.push(server, account: account, token: signed[account] ?? "")
                    return (account, answer, ContinuousClock.now - sent)
                }
            }
            // Meanwhile the server answers its checks, never 503 (an answer slower than the
            // check's 2 s on a loaded machine reads as nil).
            #expect(HTTP.status(server.url.appendingPathComponent("v1/health")) != 503)
            var all: [(String, HTTP.Answer, Duration)] = []
            for try await answer in group { all.append(answer) }
            return all
        }
        _ = started
        let shed = answers.filter { $0.1.status == 503 && $0.1.errorCode == "overloaded" }
        #expect(shed.count >= 10, "\(answers.map { ($0.0, $0.1.status, $0.1.errorCode ?? "") })")
        #expect(shed.allSatisfy { $0.1.retryAfter == "1" })
        // `overloaded` is answered only by the full queue's path, before any wait.
        #expect(answers.allSatisfy { [200, 503].contains($0.1.status) })
        // Every acknowledged push is stored once; nothing else is.
        if !Shell.waitForExit(holder, seconds: 30) { holder.terminate() }
        let acknowledged = Set(answers.filter { $0.1.status == 200 }.map(\.0))
        try await Task.sleep(for: .milliseconds(500))
        let stored = try server.sql("SELECT account FROM pushes ORDER BY account")
        #expect(Set(stored) == acknowledged)
        #expect(stored.count == acknowledged.count)
        // Recovered by itself: every account's push goes now (sent as a device sends it).
        for account in accounts where !acknowledged.contains(account) {
            let answer = try await Self.pushUntilAccepted(
                server, account: account, token: await signer.token(account: account, app: "growth"))
            #expect(answer.status == 200)
        }
        #expect(try server.sql("SELECT count(*) FROM pushes") == ["\(accounts.count)"])
    }

    /// A server answering its limit of requests at once (one, here, held by pushes behind a lock)
    /// answers the next request 503 `overloaded` with `Retry-After` at once, before routing it: a
    /// push so refused is never stored, and health checks are answered meanwhile. Once the lock
    /// goes, requests are taken again.
    @Test func pastItsLimitOfRequestsTheServerRefusesAtOnceAndStoresNothing() async throws {
        let server = try ServerProcess(serveOptions: ["--push-writers", "1", "--max-requests-in-flight", "1"])
        let signer = try TokenSignerForTests()
        let holderToken = await signer.token(account: "holder", app: "growth")
        let refusedToken = await signer.token(account: "refused", app: "growth")
        // Held long enough for a machine the whole suite loads (the holder's pushes and the
        // refused account's race for the one place); released as soon as a refusal is seen.
        let holder = try DashboardTests.holdLock(on: server.databaseURL, table: "pushes", seconds: 30)
        defer { DashboardTests.endHeldTransactions(on: server.databaseURL, holder) }
        // One push after another behind the lock, each in the server for a second and a half or
        // more: the one place is taken nearly all the time.
        let holding = Task {
            let until = ContinuousClock.now + .seconds(25)
            while !Task.isCancelled, ContinuousClock.now < until {
                _ = try? await Self.push(server, account: "holder", token: holderToken)
            }
        }
        var refusal: HTTP.Answer?
        var health: [Int?] = []
        var acknowledged = 0
        let giveUp = ContinuousClock.now + .seconds(25)
        while refusal == nil, ContinuousClock.now < giveUp {
            let answer = try await Self.push(server, account: "refused", token: refusedToken)
            if answer.status == 503, answer.errorCode == "overloaded" { refusal = answer }
            if answer.status == 200 { acknowledged += 1 }
            health.append(HTTP.status(server.url.appendingPathComponent("v1/health")))
            try await Task.sleep(for: .milliseconds(50))
        }
        holding.cancel()
        DashboardTests.releaseHold(on: server.databaseURL, holder)
        await holding.value
        let answer = try #require(refusal, "no request was refused while the only place was taken")
        #expect(answer.retryAfter == "1")
        #expect(answer.requestID?.isEmpty == false)
        // Never refused (an answer slower than the check's 2 s on a loaded machine reads as nil).
        #expect(health.allSatisfy { $0 != 503 } && health.contains(200), "\(health)")
        try await Task.sleep(for: .milliseconds(500))
        // Of the refused account's pushes, only the acknowledged are stored (one may have found a
        // gap between the holder's pushes); sent again now, it is taken.
        #expect(
            try server.sql("SELECT count(*) FROM pushes WHERE account = 'refused'") == ["\(acknowledged)"])
        let after = try await Self.pushUntilAccepted(server, account: "refused", token: refusedToken)
        #expect(after.status == 200)
    }

    /// A client connection with no request for `--client-idle-timeout` is closed by the server
    /// (before 0.39.0 an idle connection was kept for ever); one still sending requests is not.
    @Test func anIdleClientConnectionIsClosedAfterItsTimeout() async throws {
        let server = try ServerProcess(serveOptions: ["--client-idle-timeout", "1"])
        let port = try #require(server.url.port)
        let socket = try #require(HTTP.connectedSocket(port: port))
        defer { close(socket) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // One request answered, then nothing: the server closes the connection (a read of 0 bytes)
        // about a second after the answer, well within the 30 s this read waits.
        let request = Array("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var answer = ""
        let started = ContinuousClock.now
        while true {
            let read = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if read <= 0 {
                #expect(read == 0, "the read ended with an error (errno \(errno)), not the server's close")
                break
            }
            answer += String(decoding: buffer[0..<read], as: UTF8.self)
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
        #expect(ContinuousClock.now - started < .seconds(25))
    }
}
