import AccountSync
import Foundation
import TestThreads
import Testing
import TourFixtures

/// What an operator sees: `/metrics` in Prometheus' text format on a port of its own,
/// counters that move with real pushes, and an `X-Request-ID` on every answer that every log line
/// of the request names.
@Suite("Metrics and request ids", .ownThread)
struct MetricsTests {
    static func scrape(_ port: Int) async throws -> String {
        let answer = try await HTTP.get(try URL(checking: "http://127.0.0.1:\(port)/metrics"))
        #expect(answer.status == 200)
        return String(decoding: answer.body, as: UTF8.self)
    }

    /// The value of the first sample of `name` whose labels contain every one of `labels`.
    static func sample(_ text: String, _ name: String, _ labels: [String] = []) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ")
        {
            guard labels.allSatisfy({ line.contains($0) }), let value = line.split(separator: " ").last else {
                continue
            }
            return Double(value)
        }
        return nil
    }

    /// The exposition by Prometheus' conventions, checked line by line: every metric has its HELP
    /// and TYPE, counters end in `_total` and durations in `_seconds`, nothing of Hummingbird's
    /// own naming is left, and the counters a dashboard is built on are there at 0 before any
    /// event (the insights' failures stay at 0 through the start, when migrations run).
    static func conventions(_ text: String) -> [String] {
        var problems: [String] = []
        var helped: Set<String> = []
        var typed: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 3)
            if line.hasPrefix("# HELP "), parts.count >= 4 { helped.insert(String(parts[2])) }
            if line.hasPrefix("# TYPE "), parts.count >= 4 { typed[String(parts[2])] = String(parts[3]) }
        }
        for (name, type) in typed {
            if !helped.contains(name) { problems.append("\(name) has no HELP") }
            if type == "counter", !name.hasSuffix("_total") {
                problems.append("the counter \(name) does not end in _total")
            }
            if type == "histogram", name.contains("duration") || name.contains("time"),
                !name.hasSuffix("_seconds")
            {
                problems.append("the histogram \(name) does not say its unit")
            }
            if name.hasPrefix("hb_") || name.contains("error") {
                problems.append("\(name) is a series nobody documented")
            }
        }
        return problems
    }

    @Test func theExpositionFollowsPrometheusConventionsAndCountsFromZero() async throws {
        let metricsPort = ServerProcess.freePort()
        // A first start, on a database it migrates: the migrations run while the series are read.
        let server = try ServerProcess(
            databaseURL: TestPostgres.freshDatabase(), serveOptions: ["--metrics-port", "\(metricsPort)"])
        _ = server
        // Once the first catch-up ran (after the migrations, not during them: a loaded machine
        // may take more than a second to get there), every other series is still at 0.
        let fresh = try await Patience.untilAnswered({ try await Self.scrape(metricsPort) }) {
            Self.sample($0, "onboarding_insights_catch_up_seconds_count") ?? 0 < 1
        }
        #expect(Self.conventions(fresh).isEmpty, "\(Self.conventions(fresh))")
        for (name, labels) in [
            ("onboarding_pushes_total", [#"outcome="committed""#]),
            ("onboarding_pushes_shed_total", [#"reason="queue_full""#]),
            ("onboarding_pushes_shed_total", [#"reason="waited_for_writer""#]),
            ("onboarding_pushes_shed_total", [#"reason="deadline""#]),
            ("onboarding_sign_in_failures_total", []), ("onboarding_publications_served_total", []),
            ("onboarding_installs_enrolled_total", []), ("onboarding_insights_catch_up_failures_total", []),
            ("onboarding_push_queue_length", []), ("onboarding_push_writers_busy", []),
            ("onboarding_database_connections", [#"pool="primary""#, #"state="waiting""#]),
        ] {
            #expect(Self.sample(fresh, name, labels) == 0, "\(name) \(labels) is not at 0 from the start")
        }
        #expect(Self.sample(fresh, "onboarding_insights_catch_up_seconds_count") ?? 0 >= 1, "no catch-up ran")
    }

    /// `serve --insights-interval` paces the insights job: over eight seconds, runs every 2 s make
    /// at most five where a quarter second makes up to thirty-two; an interval out of its range is
    /// refused, saying the range.
    @Test func theInsightsIntervalPacesTheJobsRuns() async throws {
        func runs(over window: Duration, options: [String]) async throws -> Double {
            let metricsPort = ServerProcess.freePort()
            let server = try ServerProcess(serveOptions: ["--metrics-port", "\(metricsPort)"] + options)
            _ = server
            try await Task.sleep(for: .seconds(1))
            let before =
                Self.sample(try await Self.scrape(metricsPort), "onboarding_insights_catch_up_seconds_count")
                ?? 0
            try await Task.sleep(for: window)
            let after =
                Self.sample(try await Self.scrape(metricsPort), "onboarding_insights_catch_up_seconds_count")
                ?? 0
            return after - before
        }
        let slow = try await runs(over: .seconds(8), options: ["--insights-interval", "2"])
        let usual = try await runs(over: .seconds(8), options: ["--insights-interval", "0.25"])
        #expect((1...5).contains(slow), "\(slow) runs in 8 s at one every 2 s")
        // (More than one every 2 s could make, not thirty-two: a machine busy with the whole suite
        // slows each run.)
        #expect(usual > 5, "\(usual) runs in 8 s at one every quarter second")

        let refused = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("onboarding-server").path,
            ["serve", "--insights-interval", "0.01"])
        #expect(refused.status != 0)
        #expect(
            refused.stderr.contains("--insights-interval must be from 0.05 to 10 seconds"),
            "\(refused.stderr)")
    }

    @Test func theCountersMoveWithRealPushesAndEveryAnswerCarriesARequestID() async throws {
        let metricsPort = ServerProcess.freePort()
        let server = try ServerProcess(
            environment: ["LOG_LEVEL": "info"], serveOptions: ["--metrics-port", "\(metricsPort)"])
        let before = try await Self.scrape(metricsPort)
        let pushRoute = #"route="/v1/apps/{app}/accounts/{account}/push""#
        let pushed =
            Self.sample(before, "http_server_request_duration_seconds_count", [pushRoute, #"status="200""#])
            ?? 0

        let token = try server.token(account: "ann")
        for seq in 1...5 {
            #expect(
                try await LoadSheddingTests.push(server, account: "ann", token: token, seq: Int64(seq)).status
                    == 200)
        }
        let after = try await Self.scrape(metricsPort)
        #expect(
            Self.sample(after, "http_server_request_duration_seconds_count", [pushRoute, #"status="200""#])
                == pushed + 5, "\(after)")
        #expect((Self.sample(after, "onboarding_push_batch_size_count") ?? 0) >= 5)
        #expect(Self.sample(after, "onboarding_pushes_total", [#"outcome="committed""#]) == 5)
        #expect((Self.sample(after, "onboarding_push_answer_seconds_count") ?? 0) >= 5)
        #expect(Self.conventions(after).isEmpty, "\(Self.conventions(after))")
        // The API's port has no /metrics: the numbers are for the private network only.
        #expect(try await HTTP.get(server.url.appendingPathComponent("metrics")).status == 404)

        // Every answer carries a request id: the client's own when sensible, else a new one.
        let given = try await HTTP.send(
            "GET", server.url.appendingPathComponent("v1/apps/growth/accounts/ann/flows"), token: token,
            body: nil,
            headers: ["X-Request-ID": "trace-4711"])
        #expect(given.requestID == "trace-4711")
        let made = try await HTTP.get(server.url.appendingPathComponent("v1/health"))
        #expect((made.requestID ?? "").count >= 8)
        let hostile = try await HTTP.send(
            "GET", server.url.appendingPathComponent("v1/health"), token: nil, body: nil,
            headers: ["X-Request-ID": "<script>x</script>"])
        #expect(hostile.requestID != nil && hostile.requestID?.contains("<") == false)
        // A refused push: its log line names the request.
        let refused = try await HTTP.send(
            "POST", server.url.appendingPathComponent("v1/apps/growth/accounts/ann/push"), token: token,
            body: Data("{\"device\": 1}".utf8), headers: ["X-Request-ID": "trace-4712"])
        #expect(refused.status == 400 && refused.requestID == "trace-4712")
        // A path no route takes: JSON with an id, and its log line.
        let nowhere = try await HTTP.send(
            "GET", server.url.appendingPathComponent("v1/nothing"), token: nil, body: nil,
            headers: ["X-Request-ID": "trace-4713"])
        #expect(
            nowhere.status == 404 && nowhere.errorCode == "not_found" && nowhere.requestID == "trace-4713")
        for path in ["v1/health%41", "v1/apps/growth/nothing", "nothing"] {
            let answer = try await HTTP.get(URL(string: server.url.absoluteString + "/" + path)!)
            #expect(
                answer.status == 404 && answer.errorCode == "not_found" && answer.requestID != nil,
                "\(path): \(answer.status)")
        }
        try await Task.sleep(for: .milliseconds(200))
        // One line per request: its id, route pattern (never the path, which names the account),
        // status and, for a refusal, its code.
        let lines = server.logText.split(separator: "\n").filter { $0.contains("trace-4712") }
        #expect(lines.count == 1, "\(lines)")
        #expect(
            lines.first?.contains("status=400") == true
                && lines.first?.contains("code=invalid_request") == true, "\(lines)")
        #expect(lines.first?.contains("route=/v1/apps/{app}/accounts/{account}/push") == true, "\(lines)")
        #expect(
            !server.logText.contains("accounts/ann"), "a request's path, naming its account, reached the log")
        let missing = server.logText.split(separator: "\n").filter { $0.contains("trace-4713") }
        #expect(missing.count == 1 && missing.first?.contains("status=404") == true, "\(missing)")
        #expect(!server.logText.contains(token), "no token in the log")
    }
}
