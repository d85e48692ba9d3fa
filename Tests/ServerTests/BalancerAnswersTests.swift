import Foundation
import TestThreads
import Testing
import TourCodec

/// What clients get through the balancer (scripts/nginx.conf.template, as scripts/cluster runs
/// it): each client's own address reaches the rate limits, and when no server answers, nginx's own
/// error is the API's JSON 503 with Retry-After, never an HTML page.
@Suite("Answers through the balancer", .ownThread)
struct BalancerAnswersTests {
    @Test func rateLimitsSeeEachClientAndNoServerAnsweringIsTheAPIs503() async throws {
        let options = ["--trusted-proxy", "127.0.0.1", "--enrollments-per-minute", "2"]
        let first = try ServerProcess(serveOptions: options)
        let second = try ServerProcess(databaseURL: first.databaseURL, serveOptions: options)
        let balancer = try Balancer(upstreams: [first.port, second.port])
        let key = try first.acceptEnrollments(of: "moodtracker")
        let enrollment = Data(try TourValue.members(["enrollmentKey": .string(key)]).jsonUTF8())
        // Two clients behind one more proxy (the addresses it heard from, in X-Forwarded-For):
        // each has its own limit, though both reach the servers through the same nginx.
        func enroll(_ client: String) async throws -> Int {
            try await HTTP.send(
                "POST", balancer.url.appendingPathComponent("v1/apps/moodtracker/installs"), token: nil,
                body: enrollment,
                headers: ["X-Forwarded-For": client]
            ).status
        }
        // Each server keeps its own limiter: the balancer sends both clients' requests to either,
        // so the limit is reached within two per server.
        var statuses: [Int] = []
        for _ in 0..<5 { statuses.append(try await enroll("203.0.113.5")) }
        #expect(statuses.contains(429), "\(statuses)")
        #expect(try await enroll("203.0.113.6") == 201, "another client is not limited by the first")
        for server in [first, second] {
            let log = try String(contentsOf: server.log, encoding: .utf8)
            #expect(!log.contains("not a trusted proxy"), "\(log)")
        }

        // No server answers: the API's 503, as JSON, with Retry-After.
        first.stop()
        second.stop()
        for path in ["v1/apps/moodtracker/catalogs", "dashboard"] {
            let answer = try await HTTP.get(balancer.url.appendingPathComponent(path))
            #expect(
                answer.status == 503 && answer.errorCode == "unavailable",
                "\(path): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
            #expect(answer.retryAfter == "1")
        }
    }
}
