import AccountSync
import Foundation
import TestThreads
import Testing
import TourCodec

/// Readiness tells the truth (Docs/API.md, `GET /v1/ready`): `/v1/ready` answers 503 while a commit
/// cannot complete, here because `synchronous_standby_names` names a standby that is not there (as
/// after a promotion, when the new primary inherited the setting), which no timeout of
/// PostgreSQL's ends. Pushes meanwhile are answered 503 by their deadline, and once the setting
/// is cleared the server is ready again and takes pushes, its writers recovered.
@Suite("Readiness", .ownThread)
struct ReadinessTests {
    @Test func readinessIs503WhileCommitsWaitForAMissingStandbyAndPushesAreAnsweredByTheirDeadline()
        async throws
    {
        let cluster = try PrivateCluster()
        defer { cluster.destroy() }
        // At info, each answer's time by the server's own clock is in its log (the bounds below
        // are the server's; what a loaded machine adds to the client's side is not).
        let server = try ServerProcess(
            databaseURL: try cluster.freshDatabase(), environment: ["LOG_LEVEL": "info"])
        let ready = server.url.appendingPathComponent("v1/ready")
        #expect(try await HTTP.get(ready).status == 200)
        // Tokens first: minting one writes its audit row, which would wait for the standby too.
        var tokens: [String: String] = [:]
        for account in ["before", "after"] + (0..<4).map({ "during\($0)" }) {
            tokens[account] = try server.token(account: account)
        }
        let minted = tokens
        let base = server.url
        @Sendable func push(_ account: String, seq: Int64) async throws -> (
            status: Int, seconds: Double, id: String
        ) {
            let token = try #require(minted[account])
            let item = PushBatchingTests.item(seq, flow: "tour", standing: .completed, device: "phone")
            let id = "push-\(account)-\(seq)-\(UUID().uuidString)"
            let started = Date()
            let answer = try await HTTP.send(
                "POST", base.appendingPathComponent("v1/apps/growth/accounts/\(account)/push"), token: token,
                body: Data(try PushBatch(device: "phone", items: [item]).tourValue.jsonUTF8()),
                headers: ["X-Request-ID": id])
            return (answer.status, Date().timeIntervalSince(started), id)
        }
        #expect(try await push("before", seq: 1).status == 200)

        func setStandby(_ value: String?) throws {
            let set =
                value.map { "ALTER SYSTEM SET synchronous_standby_names = '\($0)'" }
                ?? "ALTER SYSTEM RESET synchronous_standby_names"
            for statement in [set, "SELECT pg_reload_conf()"] {
                let result = try Shell.run(TestPostgres.psql, [cluster.url, "-qtAc", statement])
                guard result.status == 0 else { throw HarnessFailure("psql: \(result.stderr)") }
            }
        }
        try setStandby("ghost")
        // The setting reaches the backends some time after pg_reload_conf() returns.
        _ = try await Patience.untilAnswered({ try await HTTP.get(ready) }) { $0.status != 503 }
        // Readiness: 503, answered within its bound (2 s, and a margin), asked again and again (one
        // probe waits; no backend piles up behind it).
        for probe in 0..<5 {
            let id = "ready-\(probe)-\(UUID().uuidString)"
            let answer = try await HTTP.send(
                "GET", ready, token: nil, body: nil, headers: ["X-Request-ID": id])
            #expect(answer.status == 503 && answer.retryAfter == "1", "\(answer.status)")
            #expect(try await server.loggedMilliseconds(requestID: id) < 3_500)
        }
        let waiting = try Shell.run(
            TestPostgres.psql,
            [
                cluster.url, "-qtAc",
                """
                SELECT count(*) FROM pg_stat_activity WHERE application_name = 'onboarding-server \
                readiness'
                """,
            ])
        #expect(
            Int(waiting.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 99 <= 1,
            "\(waiting.stdout)")
        // Four pushes at once: each answered 503 by its deadline (4 s, and a margin), none 200.
        let answers = try await withThrowingTaskGroup(of: (status: Int, seconds: Double, id: String).self) {
            group in
            for index in 0..<4 { group.addTask { try await push("during\(index)", seq: 1) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for answer in answers {
            #expect(answer.status == 503, "\(answer)")
            #expect(try await server.loggedMilliseconds(requestID: answer.id) < 6_000, "\(answer)")
            #expect(answer.seconds < 30, "\(answer)")
        }

        // The standby setting cleared: ready again, and pushes are acknowledged.
        try setStandby(nil)
        let readyAgain = try await Patience.untilAnswered({ try await HTTP.get(ready) }) { $0.status != 200 }
        #expect(readyAgain.status == 200)
        var attempt: Int64 = 0
        let acknowledged = try await Patience.untilAnswered({
            attempt += 1
            return try await push("after", seq: attempt)
        }) { $0.status != 200 }
        #expect(acknowledged.status == 200, "the writers did not recover")
    }
}
