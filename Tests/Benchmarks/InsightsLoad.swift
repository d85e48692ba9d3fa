import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import OnboardingServer
import PostgresNIO
import ServerControlPlane
import ServerSyncAPI
import ServerTokens

/// Section 7: the reports and dashboard pages at scale. Seeds an app with `accounts` accounts and
/// about ten facts each straight into PostgreSQL (in chunks, through the same triggers a push
/// fires, so the aggregates are what pushes would have made), then times every dashboard page and
/// `/v1/.../report` through the running server, beside the full scan of the facts the report used
/// to make.
struct InsightsLoad {
    let server: URL
    let database: DatabaseURL
    let signer: TokenSigner
    let accounts: Int
    let app = "bench"

    struct Timing {
        var name: String
        var p50: Double
        var p95: Double
    }

    /// Seeds the app (into a fresh database: `scripts/bench` starts a throwaway one; a second seed of
    /// the same database would collide with the first's keys). Returns the seconds it took and the
    /// facts stored.
    func seed() async throws -> (seconds: Double, facts: Int) {
        try await withClient { client, logger in
            let started = ContinuousClock.now
            let chunk = 50_000
            var low = 0
            while low < accounts {
                let high = min(accounts, low + chunk)
                // Four pushes per account (one device each), over 90 days, two catalog versions and
                // four app versions; their facts in the same transaction, as a push stores them (the
                // job finds facts through their push's transaction).
                try await client.withTransaction(logger: logger) { connection in
                    try await connection.query(
                        """
                        INSERT INTO pushes (app, account, device, seq, time, event, catalog_version, \
                        app_version)
                        SELECT \(app), 'a' || a, 'd' || a, s, 1764000000 + (a % 90) * 86400 + s, 'next', 1 + \
                        (a % 3 = 0)::int,
                            '1.' || (a % 4)
                        FROM generate_series(\(low), \(high - 1)) a, generate_series(1, 4) s
                        """, logger: logger)
                    // Up to twelve facts per account, 10.5 on average (10,500,000 at the default million
                    // accounts): a start, seven steps of `welcome` reached as far as the account got, its
                    // ending, and a three-fact `tips` flow.
                    try await connection.query(
                        """
                        INSERT INTO facts (app, account, device, seq, idx, kind, flow, step, step_index, \
                        ending, body)
                        SELECT \(app), 'a' || a, 'd' || a, (k + 2) / 3, k, kind, flow, step, step_index, \
                        ending,
                            jsonb_build_object('fact', kind, 'flow', flow) || CASE WHEN step IS NULL THEN \
                        '{}'::jsonb
                                ELSE jsonb_build_object('step', step, 'index', step_index) END
                                || CASE WHEN ending IS NULL THEN '{}'::jsonb ELSE \
                        jsonb_build_object('ending', ending, 'recorded', ending) END
                        FROM (
                            SELECT a, k, reach,
                                CASE WHEN k IN (1, 10) THEN 'flowStarted' WHEN k = 9 THEN 'flowEnded' ELSE \
                        'stepEntered' END AS kind,
                                CASE WHEN k >= 10 THEN 'tips' ELSE 'welcome' END AS flow,
                                CASE WHEN k BETWEEN 2 AND 8 THEN 'step' || (k - 1) WHEN k > 10 THEN 'tip' || \
                        (k - 10) END AS step,
                                CASE WHEN k BETWEEN 2 AND 8 THEN k - 1 WHEN k > 10 THEN k - 10 ELSE 0 END AS \
                        step_index,
                                CASE WHEN k = 9 THEN CASE WHEN reach >= 9 THEN 'completed' ELSE 'skipped' \
                        END END AS ending
                            FROM (SELECT a, 3 + (hashtext('r' || a) & 2147483647) % 10 AS reach FROM \
                        generate_series(\(low), \(high - 1)) a) r,
                                generate_series(1, 12) k
                            WHERE k <= reach OR k >= 9
                        ) f
                        """, logger: logger)
                }
                // Counted as the server's job counts pushes (it runs too; they queue on the watermark).
                try await client.query("SELECT insight_catch_up()", logger: logger)
                low = high
            }
            // What a transaction older than a chunk held back is counted on a later run.
            try await AccountStore(client: client, logger: logger).catchUpInsights(waitingUpTo: .seconds(60))
            let rows = try await client.query("SELECT count(*) FROM facts WHERE app = \(app)", logger: logger)
            var facts = 0
            for try await count in rows.decode(Int64.self) { facts = Int(count) }
            try await client.query("VACUUM ANALYZE", logger: logger)
            return (seconds(ContinuousClock.now - started), facts)
        }
    }

    /// The full scan `/report` made before the aggregates, timed `runs` times.
    func scan(runs: Int) async throws -> Timing {
        try await withClient { client, logger in
            let store = AccountStore(client: client, logger: logger)
            var times: [Double] = []
            for _ in 0..<runs {
                let started = ContinuousClock.now
                _ = try await store.reportByScan(app: app)
                times.append(seconds(ContinuousClock.now - started) * 1000)
            }
            times.sort()
            return Timing(
                name: "full scan of the facts (the report before 0.13)", p50: percentile(times, 0.5),
                p95: percentile(times, 0.95))
        }
    }

    /// Every dashboard page (signed in) and the report API, `runs` times each.
    /// Every page and the report `runs` times each; and page views' cost on the primary, per view:
    /// transaction ids used (writes) and transactions ended (reads too).
    func pages(runs: Int) async throws -> (
        timings: [Timing], primaryPerView: (xids: Double, transactions: Double)
    ) {
        // Sign-in answers a redirect carrying the cookie: read it, do not follow it.
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        defer { Task { try? await client.shutdown() } }
        // A person who may read every app: an operator made in the database, as `people add` does.
        let signer = signer
        let credential = try await withClient { client, logger in
            let people = PeopleStore(client: client, logger: logger)
            let now = Date().timeIntervalSince1970
            if let existing = try await people.person("bench"), !existing.credentials.isEmpty {
                guard let credential = try await people.rotate("bench", days: 1, by: .commandLine(), now: now)
                else { throw BenchFailure("the bench operator's credential could not be rotated") }
                return credential
            }
            let granted = try await people.grant(
                .editor, in: .everyApp, to: "bench", identity: nil, days: 1, by: .commandLine(), now: now)
            guard let credential = granted.newCredential else {
                throw BenchFailure("the bench operator was given no credential")
            }
            return credential
        }
        let admin = await signer.sign(credential.claims)
        // The sign-in form first (its secret cookie and anti-forgery token), then the form.
        let form = try await client.execute(
            HTTPClientRequest(url: server.absoluteString + "/dashboard/sign-in"), timeout: .seconds(30))
        let formPage = String(buffer: try await form.body.collect(upTo: 1 << 20))
        guard
            let secret = form.headers["Set-Cookie"].first(where: { $0.hasPrefix("onboarding_sign_in=") })?
                .split(separator: ";").first,
            let range = formPage.range(of: "name=\"form_token\" value=\"")
        else { throw BenchFailure("the sign-in page has no form (\(form.status))") }
        let token = formPage[range.upperBound...].prefix { $0 != "\"" }
        var signIn = HTTPClientRequest(url: server.absoluteString + "/dashboard/sign-in")
        signIn.method = .POST
        signIn.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        signIn.headers.add(name: "Cookie", value: String(secret))
        signIn.body = .bytes(ByteBuffer(string: "form_token=\(token)&credential=\(admin)"))
        let signedIn = try await client.execute(signIn, timeout: .seconds(30))
        guard
            let setCookie = signedIn.headers["Set-Cookie"].first(where: {
                $0.hasPrefix("onboarding_session=")
            }),
            let cookie = setCookie.split(separator: ";").first
        else {
            throw BenchFailure("the dashboard did not sign in (\(signedIn.status))")
        }
        let targets: [(String, String, Bool)] = [
            ("dashboard: all apps", "/dashboard", true),
            ("dashboard: all apps, a 30-day range", "/dashboard?from=2025-12-01&to=2025-12-30", true),
            ("dashboard: the app", "/dashboard/apps/\(app)", true),
            ("dashboard: a flow's funnel", "/dashboard/apps/\(app)/flows/welcome", true),
            (
                "dashboard: a flow's funnel, a 30-day range",
                "/dashboard/apps/\(app)/flows/welcome?from=2025-12-01&to=2025-12-30", true
            ),
            ("dashboard: a funnel as CSV", "/dashboard/apps/\(app)/flows/welcome?format=csv", true),
            ("dashboard: the app as JSON", "/dashboard/apps/\(app)?format=json", true),
            ("dashboard: all apps' trend as CSV", "/dashboard?format=csv&table=trend", true),
            (
                "dashboard: the variants as CSV",
                "/dashboard/apps/\(app)/flows/welcome?format=csv&table=variants", true
            ),
            (
                "dashboard: a funnel split by locale, per day",
                "/dashboard/apps/\(app)/flows/welcome?split=locale&every=day", true
            ),
            (
                "dashboard: a funnel split by catalog, a 30-day range",
                "/dashboard/apps/\(app)/flows/welcome?split=catalog&from=2025-12-01&to=2025-12-30", true
            ),
            (
                "dashboard: the split as CSV",
                "/dashboard/apps/\(app)/flows/welcome?format=csv&table=split&split=app", true
            ),
            (
                "dashboard: drill-down, abandoned at step3",
                "/dashboard/apps/\(app)/flows/welcome/subjects?step=step3&standing=abandoned", true
            ),
            (
                "dashboard: drill-down, skipped at step5, a later page",
                "/dashboard/apps/\(app)/flows/welcome/subjects?step=step5&standing=skipped&after=a5", true
            ),
            (
                "dashboard: drill-down, a 30-day range",
                """
                /dashboard/apps/\(app)/flows/welcome/subjects?step=step7&standing=skipped&from=2025-12-01\
                &to=2025-12-30
                """,
                true
            ),
            ("dashboard: a subject's timeline", "/dashboard/apps/\(app)/subjects/a\(accounts / 2 + 7)", true),
            ("GET /v1/apps/{app}/report", "/v1/apps/\(app)/report", false),
            ("GET /v1/apps/{app}/report?by=variant", "/v1/apps/\(app)/report?by=variant", false),
        ]
        var timings: [Timing] = []
        for (name, path, isPage) in targets {
            var times: [Double] = []
            for _ in 0..<runs {
                var request = HTTPClientRequest(url: server.absoluteString + path)
                if isPage {
                    request.headers.add(name: "Cookie", value: String(cookie))
                } else {
                    request.headers.add(name: "Authorization", value: "Bearer \(admin)")
                }
                let started = ContinuousClock.now
                let response = try await client.execute(request, timeout: .seconds(60))
                let body = try await response.body.collect(upTo: 64 << 20)
                times.append(seconds(ContinuousClock.now - started) * 1000)
                guard response.status == .ok else {
                    throw BenchFailure(
                        "\(path) answered \(response.status): \(String(buffer: body).suffix(600))")
                }
            }
            times.sort()
            timings.append(Timing(name: name, p50: percentile(times, 0.5), p95: percentile(times, 0.95)))
        }
        // What page views cost the primary: its transaction ids used (writes) and transactions
        // ended (any), beyond what the catch-up job uses in as long with no page asked for.
        let pagePaths = targets.filter(\.2).map(\.1)
        let idle = try await primaryUse { try await Task.sleep(for: .seconds(3)) }
        let viewed = try await primaryUse {
            for _ in 0..<3 {
                for path in pagePaths {
                    var request = HTTPClientRequest(url: server.absoluteString + path)
                    request.headers.add(name: "Cookie", value: String(cookie))
                    _ = try await client.execute(request, timeout: .seconds(60)).body.collect(upTo: 64 << 20)
                }
            }
        }
        let views = Double(pagePaths.count * 3)
        let perView = (
            xids: max(0, viewed.xids - idle.xids / idle.seconds * viewed.seconds) / views,
            transactions: max(0, viewed.transactions - idle.transactions / idle.seconds * viewed.seconds)
                / views
        )
        return (timings, perView)
    }

    /// Transaction ids used and transactions ended on the primary's database while `body` runs
    /// (the statistics are read two seconds after, when PostgreSQL has flushed them).
    private func primaryUse(_ body: () async throws -> Void) async throws -> (
        xids: Double, transactions: Double, seconds: Double
    ) {
        func read() async throws -> (Double, Double) {
            try await withClient { client, logger in
                var result = (0.0, 0.0)
                for try await (xmax, ended) in try await client.query(
                    """
                    SELECT pg_snapshot_xmax(pg_current_snapshot())::text::float8, (xact_commit + \
                    xact_rollback)::float8
                    FROM pg_stat_database WHERE datname = current_database()
                    """, logger: logger
                ).decode((Double, Double).self) { result = (xmax, ended) }
                return result
            }
        }
        try await Task.sleep(for: .seconds(2))
        let before = try await read()
        let started = ContinuousClock.now
        try await body()
        let elapsed = seconds(ContinuousClock.now - started)
        try await Task.sleep(for: .seconds(2))
        let after = try await read()
        // Each read above is one transaction of its own; the sleeps are outside `elapsed`.
        return (after.0 - before.0, after.1 - before.1 - 1, elapsed)
    }

    /// Erases `count` of the seeded accounts, one transaction each (``AccountStore/erase``), spread
    /// over the population; the time each took, sorted, and whether every aggregate then equals a
    /// recount of the facts and pushes that remain (the report's figures, recounted by scan).
    func erase(_ count: Int) async throws -> (times: [Double], recountDiffers: Int) {
        try await withClient { client, logger in
            let store = AccountStore(client: client, logger: logger)
            let actor = Actor(name: "bench", source: "bench", person: nil)
            var times: [Double] = []
            let stride = max(1, accounts / max(1, count))
            for index in 0..<min(count, accounts) {
                let started = ContinuousClock.now
                _ = try await store.erase(
                    app: app, subject: "a\(index * stride)", pseudonym: "hmac:bench", by: actor,
                    at: Date().timeIntervalSince1970)
                times.append(seconds(ContinuousClock.now - started) * 1000)
            }
            try await store.catchUpInsights(waitingUpTo: .seconds(60))
            // Each figure the report shows, against the same figure counted from the raw rows.
            let aggregated = """
                SELECT flow, milestone, step, sum(subjects)::bigint AS n FROM insight_counts WHERE app = \
                '\(app)'
                    AND milestone IN ('started', 'completed', 'skipped', 'step') GROUP BY 1, 2, 3 HAVING \
                sum(subjects) > 0
                """
            let recounted = """
                SELECT flow, CASE WHEN kind = 'flowStarted' THEN 'started' WHEN kind = 'stepEntered' THEN \
                'step' ELSE ending END,
                    CASE WHEN kind = 'stepEntered' THEN coalesce(step, '') ELSE '' END, count(DISTINCT \
                account)::bigint
                FROM facts WHERE app = '\(app)' AND (kind IN ('flowStarted', 'stepEntered') OR (kind = \
                'flowEnded' AND ending IN ('completed', 'skipped')))
                GROUP BY 1, 2, 3
                """
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT (SELECT count(*) FROM ((\(aggregated) EXCEPT \(recounted)) UNION ALL \
                        (\(recounted) EXCEPT \(aggregated))) d)
                            + (SELECT abs((SELECT coalesce(sum(subjects), 0) FROM insight_totals WHERE app = \
                        '\(app)' AND kind = 'account')
                                - (SELECT count(DISTINCT account) FROM pushes WHERE app = '\(app)')))::bigint
                        """), logger: logger)
            var differs = 0
            for try await count in rows.decode(Int64.self) { differs = Int(count) }
            return (times.sorted(), differs)
        }
    }

    private func withClient<T: Sendable>(
        _ body: @escaping @Sendable (PostgresClient, Logger) async throws -> T
    ) async throws -> T {
        var logger = Logger(label: "insights-bench")
        logger.logLevel = .error
        let client = PostgresClient(
            configuration: database.clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            let result = try await body(client, logger)
            group.cancelAll()
            return result
        }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
