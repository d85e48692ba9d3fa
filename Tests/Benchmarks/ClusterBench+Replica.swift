import AccountSync
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import OnboardingServer
import ServerControlPlane
import ServerTokens
import TourFixtures

extension ClusterBench {
    /// The dashboard on the replica at `accounts` seeded accounts while devices push at a user's
    /// pace on the primary: each page's p50 and p95, and how often `/report` said it was stale.
    func replicaPages(accounts: Int, devices: Int) async throws {
        let pair = try ClusterProcesses.Pair(synchronous: true)
        defer { pair.destroy() }
        let primary = try DatabaseURL(pair.primary)
        let server = try ClusterProcesses.Server(
            database: pair.primary, secret: secret, readDatabase: pair.standby)
        defer { server.stop() }
        let insights = InsightsLoad(server: server.url, database: primary, signer: signer, accounts: accounts)
        let seeded = try await insights.seed()
        report.add(
            "cluster", "replica: \(accounts) accounts seeded on the primary (synchronous standby)",
            Double(seeded.facts) / seeded.seconds, "facts/s")
        let pushes = ServerLoad(
            server: server.url, database: primary, signer: signer, duration: max(duration * 6, 5))
        try await pushes.settle()
        var staleness: [Int] = []
        let pushing = Task {
            try await pushes.throughServer(
                devices, run: "rp\(UUID().uuidString.prefix(4).lowercased())", pace: 1)
        }
        let (timings, perView) = try await insights.pages(runs: 20)
        report.add(
            "cluster", "replica: the primary per page view: transaction ids used (writes)", perView.xids,
            "ids",
            note: "beyond the pushes' and the catch-up job's own, measured beside them")
        report.add(
            "cluster", "replica: the primary per page view: transactions ended (reads too)",
            perView.transactions, "transactions",
            note: "the session and the person's roles, read where a sign-out takes effect at once")
        report.goal(
            "write transactions on the primary per page view on the replica", perView.xids, atMost: 0.1, "ids"
        )
        // /report while the pushes go on: the staleness it says (0 when read once the replica had replayed).
        let viewer = try await Self.viewerToken(primary: primary, signer: signer)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { Task { try? await client.shutdown() } }
        var times: [Double] = []
        for _ in 0..<40 {
            var request = HTTPClientRequest(
                url: server.url.absoluteString + "/v1/apps/\(insights.app)/report")
            request.headers.add(name: "Authorization", value: "Bearer \(viewer)")
            let started = ContinuousClock.now
            let response = try await client.execute(request, timeout: .seconds(30))
            _ = try await response.body.collect(upTo: 1 << 24)
            times.append(seconds(ContinuousClock.now - started) * 1000)
            staleness.append(response.headers.first(name: "Onboarding-Stale-Seconds").flatMap(Int.init) ?? 0)
        }
        let load = try await pushing.value
        for timing in timings {
            report.add("cluster", "replica, \(timing.name): p95", timing.p95, "ms")
        }
        times.sort()
        if let slowest = timings.max(by: { $0.p95 < $1.p95 }) {
            report.add(
                "cluster", "replica: slowest page p95 at \(accounts) accounts (\(slowest.name))", slowest.p95,
                "ms")
        }
        report.add(
            "cluster", "replica: /report p95 while \(devices) devices push", percentile(times, 0.95), "ms")
        let stale = staleness
        report.add(
            "cluster", "replica: /report answers that said they were stale",
            Double(stale.filter { $0 > 0 }.count), "answers",
            note: "of \(stale.count); the most it said: \(stale.max() ?? 0) s")
        report.add(
            "cluster", "replica: pushes meanwhile on the primary, push p99", load.p99, "ms",
            note: "\(load.accepted) of \(load.offered) accepted")
    }

    /// A viewer of every app, made in the primary as `people add` does: its token.
    static func viewerToken(primary: DatabaseURL, signer: TokenSigner) async throws -> String {
        let credential = try await ServerLoad(
            server: try URL(checking: "http://unused"), database: primary, signer: signer, duration: 0
        )
        .withClient(connections: 1) { client in
            var logger = Logger(label: "cluster-bench")
            logger.logLevel = .error
            let granted = try await PeopleStore(client: client, logger: logger).grant(
                .viewer, in: .everyApp, to: "cluster-viewer-\(UUID().uuidString.prefix(6).lowercased())",
                identity: nil, days: 1,
                by: .commandLine(), now: Date().timeIntervalSince1970
            )
            guard let credential = granted.newCredential else {
                throw BenchFailure("the new viewer was given no credential")
            }
            return credential
        }
        return await signer.sign(credential.claims)
    }
}
