import AccountSync
import Foundation
import Testing
import TourCodec

/// Readiness tells the truth (Docs/API.md, `GET /v1/ready`): `/v1/ready` answers 503 while a commit
/// cannot complete, here because `synchronous_standby_names` names a standby that is not there (as
/// after a promotion, when the new primary inherited the setting), which no timeout of
/// PostgreSQL's ends. Pushes meanwhile are answered 503 by their deadline, and once the setting
/// is cleared the server is ready again and takes pushes, its writers recovered.
@Suite("Readiness", .ownThread)
struct ReadinessTests {
    @Test func readinessIs503WhileCommitsWaitForAMissingStandbyAndPushesAreAnsweredByTheirDeadline() async throws {
        let cluster = try PrivateCluster()
        defer { cluster.destroy() }
        let server = try ServerProcess(databaseURL: try cluster.freshDatabase())
        let ready = server.url.appendingPathComponent("v1/ready")
        #expect(try await HTTP.get(ready).status == 200)
        // Tokens first: minting one writes its audit row, which would wait for the standby too.
        var tokens: [String: String] = [:]
        for account in ["before", "after"] + (0..<4).map({ "during\($0)" }) { tokens[account] = try server.token(account: account) }
        let minted = tokens
        let base = server.url
        @Sendable func push(_ account: String, seq: Int64) async throws -> (status: Int, seconds: Double) {
            let token = try #require(minted[account])
            let item = PushBatchingTests.item(seq, flow: "tour", standing: .completed, device: "phone")
            let started = Date()
            let answer = try await HTTP.post(
                base.appendingPathComponent("v1/apps/growth/accounts/\(account)/push"), token: token,
                body: Data(try PushBatch(device: "phone", items: [item]).tourValue.jsonUTF8()))
            return (answer.status, Date().timeIntervalSince(started))
        }
        #expect(try await push("before", seq: 1).status == 200)

        func setStandby(_ value: String?) throws {
            let set = value.map { "ALTER SYSTEM SET synchronous_standby_names = '\($0)'" } ?? "ALTER SYSTEM RESET synchronous_standby_names"
            for statement in [set, "SELECT pg_reload_conf()"] {
                let result = try Shell.run(TestPostgres.psql, [cluster.url, "-qtAc", statement])
                guard result.status == 0 else { throw HarnessFailure("psql: \(result.stderr)") }
            }
        }
        try setStandby("ghost")
        try await Task.sleep(for: .milliseconds(500))
        // Readiness: 503, answered within its bound, asked again and again (one probe waits; no
        // backend piles up behind it).
        for _ in 0..<5 {
            let started = Date()
            let answer = try await HTTP.get(ready)
            #expect(answer.status == 503 && answer.retryAfter == "1", "\(answer.status)")
            #expect(Date().timeIntervalSince(started) < 3.5)
        }
        let waiting = try Shell.run(
            TestPostgres.psql, [cluster.url, "-qtAc", "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'onboarding-server readiness'"])
        #expect(Int(waiting.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 99 <= 1, "\(waiting.stdout)")
        // Four pushes at once: each answered 503 by its deadline (4 s, and a margin), none 200.
        let answers = try await withThrowingTaskGroup(of: (status: Int, seconds: Double).self) { group in
            for index in 0..<4 { group.addTask { try await push("during\(index)", seq: 1) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for answer in answers {
            #expect(answer.status == 503, "\(answer)")
            #expect(answer.seconds < 6, "\(answer)")
        }

        // The standby setting cleared: ready again, and pushes are acknowledged.
        try setStandby(nil)
        var readyAgain = false
        for _ in 0..<20 where !readyAgain {
            readyAgain = try await HTTP.get(ready).status == 200
            if !readyAgain { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(readyAgain)
        var acknowledged = false
        for attempt in 0..<20 where !acknowledged {
            acknowledged = try await push("after", seq: Int64(attempt + 1)).status == 200
            if !acknowledged { try await Task.sleep(for: .milliseconds(500)) }
        }
        #expect(acknowledged, "the writers did not recover")
    }
}
