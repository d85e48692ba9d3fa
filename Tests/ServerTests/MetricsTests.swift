import AccountSync
import Foundation
import Testing

/// What an operator sees (issue 41): `/metrics` in Prometheus' text format on a port of its own,
/// counters that move with real pushes, and an `X-Request-ID` on every answer that every log line
/// of the request names.
@Suite("Metrics and request ids", .ownThread)
struct MetricsTests {
    static func scrape(_ port: Int) async throws -> String {
        let answer = try await HTTP.get(URL(string: "http://127.0.0.1:\(port)/metrics")!)
        #expect(answer.status == 200)
        return String(decoding: answer.body, as: UTF8.self)
    }

    /// The value of the first sample of `name` whose labels contain every one of `labels`.
    static func sample(_ text: String, _ name: String, _ labels: [String] = []) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            guard labels.allSatisfy({ line.contains($0) }), let value = line.split(separator: " ").last else { continue }
            return Double(value)
        }
        return nil
    }

    @Test func theCountersMoveWithRealPushesAndEveryAnswerCarriesARequestID() async throws {
        let metricsPort = ServerProcess.freePort()
        let server = try ServerProcess(environment: ["LOG_LEVEL": "info"], serveOptions: ["--metrics-port", "\(metricsPort)"])
        let before = try await Self.scrape(metricsPort)
        let pushRoute = #"http_route="/v1/apps/{app}/accounts/{account}/push""#
        let pushed = Self.sample(before, "hb_requests", [pushRoute, #"status_code="200""#]) ?? 0

        let token = try server.token(account: "ann")
        for seq in 1...5 {
            #expect(try await LoadSheddingTests.push(server, account: "ann", token: token, seq: Int64(seq)).status == 200)
        }
        let after = try await Self.scrape(metricsPort)
        #expect(Self.sample(after, "hb_requests", [pushRoute, #"status_code="200""#]) == pushed + 5, "\(after)")
        #expect((Self.sample(after, "onboarding_push_batch_size_count") ?? 0) >= 5)
        #expect((Self.sample(after, "http_server_request_duration_count", [pushRoute]) ?? 0) >= 5)
        #expect(Self.sample(after, "onboarding_push_queue_wait_seconds_count") != nil)
        // The catch-up's first run can fail while the server's migrations still run (counted, not
        // timed); one that succeeds is timed within its interval, so wait for one.
        var timed = after.contains("# TYPE onboarding_insights_catch_up_seconds histogram")
        let deadline = ContinuousClock.now + .seconds(10)
        while !timed, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            timed = try await Self.scrape(metricsPort).contains("# TYPE onboarding_insights_catch_up_seconds histogram")
        }
        #expect(timed, "no insights catch-up was timed within 10 s")
        // The API's port has no /metrics: the numbers are for the private network only.
        #expect(try await HTTP.get(server.url.appendingPathComponent("metrics")).status == 404)

        // Every answer carries a request id: the client's own when sensible, else a new one.
        let given = try await HTTP.send(
            "GET", server.url.appendingPathComponent("v1/apps/growth/accounts/ann/flows"), token: token, body: nil,
            headers: ["X-Request-ID": "trace-4711"])
        #expect(given.requestID == "trace-4711")
        let made = try await HTTP.get(server.url.appendingPathComponent("v1/health"))
        #expect((made.requestID ?? "").count >= 8)
        let hostile = try await HTTP.send(
            "GET", server.url.appendingPathComponent("v1/health"), token: nil, body: nil, headers: ["X-Request-ID": "<script>x</script>"])
        #expect(hostile.requestID != nil && hostile.requestID?.contains("<") == false)
        // A refused push: its log line names the request.
        let refused = try await HTTP.send(
            "POST", server.url.appendingPathComponent("v1/apps/growth/accounts/ann/push"), token: token,
            body: Data("{\"device\": 1}".utf8), headers: ["X-Request-ID": "trace-4712"])
        #expect(refused.status == 400 && refused.requestID == "trace-4712")
        try await Task.sleep(for: .milliseconds(200))
        let lines = server.logText.split(separator: "\n").filter { $0.contains("trace-4712") }
        #expect(lines.contains { $0.contains("400") }, "\(server.logText.suffix(2_000))")
        #expect(!server.logText.contains(token), "no token in the log")
    }
}
