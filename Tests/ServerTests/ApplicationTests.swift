import AccountSync
import Foundation
import Hummingbird
import Logging
import OnboardingServer
import ServerDashboard
import ServerDatabase
import ServerTokens
import ServiceLifecycle
import Synchronization
import TestThreads
import Testing
import TourFixtures

/// The whole server as one Hummingbird application (`OnboardingServer.buildApplication`), run in
/// this test's process: its pools, services and routes over a fresh database, on a real port.
@Suite("The server as one application", .ownThread)
struct ApplicationTests {
    /// Built, it migrates the schema before it listens, answers ready (a commit), takes a push,
    /// and stops at a graceful shutdown, every service with it.
    @Test func theAssembledApplicationMigratesServesAndStops() async throws {
        var logger = Logger(label: "application-test")
        logger.logLevel = .error
        let urlText = try TestPostgres.freshDatabase()
        let signer = try TokenSigner(secret: ServerProcess.secret)
        let port = ServerProcess.freePort()
        let configuration = ServerConfiguration(
            host: "127.0.0.1", port: port, database: try DatabaseURL(urlText), tokens: signer)
        let app = try await OnboardingServer.buildApplication(
            configuration, features: [DashboardFeature()], logger: logger)
        // In a group that handles no signal (`runService()` would set SIGINT and SIGTERM for the
        // rest of the test process; see InProcessServer).
        // Its graceful shutdown bounded as the server bounds it, then escalated to cancellation: a
        // connection left open (the tests' client keeps connections alive) cannot hold it.
        var groupConfiguration = ServiceGroupConfiguration(
            services: [app], gracefulShutdownSignals: [], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(5)
        let group = ServiceGroup(configuration: groupConfiguration)
        // Unstructured, so a run that never ends fails this test by a bound instead of holding its
        // lane until CI's limit (a task group would wait for it for ever). On a thread of its own:
        // an unstructured task does not inherit the test's executor, and on Swift's pool (two
        // threads here) the suite's CPU-bound tests kept this server from listening for two
        // minutes in a CI run.
        let executor = ThreadExecutor(name: "application")
        defer { executor.finish() }
        let running = Task(executorPreference: executor) { try await group.run() }
        do {
            let base = URL(string: "http://127.0.0.1:\(port)")!
            // Ready within two minutes (by time: the whole suite at once slows a migration).
            let readyBy = ContinuousClock.now + .seconds(120)
            var ready: HTTP.Answer?
            while ContinuousClock.now < readyBy {
                ready = try? await HTTP.get(base.appendingPathComponent("v1/ready"))
                if ready?.status == 200 { break }
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(ready?.status == 200, "not ready: \(ready.map { "\($0.status)" } ?? "no answer")")
            #expect(
                try TestPostgres.sql("SELECT count(*) FROM readiness_probe", on: urlText) == ["1"],
                "migrated and probed")

            let token = await signer.sign(
                TokenClaims(
                    subject: "ann", scope: .account, app: "growth",
                    expires: Int64(Date().timeIntervalSince1970) + 86_400))
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let batch = PushBatch(device: "d1", items: [APITests.item(1, .completed, device: "d1")])
            let pushed = try await HTTP.post(
                base.appendingPathComponent("v1/apps/growth/accounts/ann/push"), token: token,
                body: try encoder.encode(batch))
            #expect(pushed.status == 200, "\(pushed.status) \(String(decoding: pushed.body, as: UTF8.self))")
            #expect(
                try TestPostgres.sql("SELECT standing FROM account_flows WHERE account = 'ann'", on: urlText)
                    == ["completed"])
            // The routes of every feature are in its router: a dashboard page without a session is
            // sent to sign in (the redirect followed), a person's route without a credential is
            // refused.
            let page = try await HTTP.get(base.appendingPathComponent("dashboard/apps/growth"))
            #expect(
                page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("Sign in"),
                "\(page.status)")
            #expect(try await HTTP.get(base.appendingPathComponent("v1/apps/growth/people")).status == 401)
        } catch {
            // Stopped whatever failed, so nothing of it serves on into the other tests.
            await group.triggerGracefulShutdown()
            _ = await Self.end(of: running, within: .seconds(60))
            throw error
        }
        await group.triggerGracefulShutdown()
        let ended = try #require(
            await Self.end(of: running, within: .seconds(60)),
            "the application did not stop within 60 s of its graceful shutdown")
        try ended.get()
        // Stopped: the port is closed, and no connection of its pools is left open on the database.
        #expect((try? await HTTP.get(URL(string: "http://127.0.0.1:\(port)/v1/health")!)) == nil)
        // (A pool closes its connections as it stops; PostgreSQL may list one a moment longer.)
        let left = try await Patience.untilAnswered({ () async throws -> [String] in
            try TestPostgres.sql(
                """
                SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> \
                pg_backend_pid()
                """,
                on: urlText)
        }) { $0 != ["0"] }
        #expect(left == ["0"], "connections left open: \(left)")
    }

    /// Built over a database that never answers, its migration fails: the run ends with that
    /// error, every service with it (the background jobs waiting for the schema included), rather
    /// than waiting for ever for a schema nobody will open.
    @Test func anApplicationWhoseMigrationFailsStopsWithItsError() async throws {
        var logger = Logger(label: "application-test")
        logger.logLevel = .critical
        let nobody = ServerProcess.freePort()
        let configuration = ServerConfiguration(
            host: "127.0.0.1", port: ServerProcess.freePort(),
            database: try DatabaseURL("postgres://onboarding@127.0.0.1:\(nobody)/nothing"),
            tokens: try TokenSigner(secret: ServerProcess.secret))
        let app = try await OnboardingServer.buildApplication(
            configuration, features: [DashboardFeature()], logger: logger, waitForDatabase: 1)
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let executor = ThreadExecutor(name: "application")
        defer { executor.finish() }
        let running = Task(executorPreference: executor) { try await group.run() }
        let ended = try #require(
            await Self.end(of: running, within: .seconds(60)),
            "the application whose migration failed did not stop within 60 s")
        #expect(throws: (any Error).self) { try ended.get() }
    }

    /// A wait for the schema ends when its task is cancelled, and every wait ends when it opens.
    @Test func aWaitForTheSchemaEndsAtItsCancellationOrItsOpening() async throws {
        let ready = SchemaReady()
        let cancelled = Task { await ready.wait() }
        let opened = Task { await ready.wait() }
        cancelled.cancel()
        #expect(await Self.end(of: cancelled, within: .seconds(30)) != nil, "a cancelled wait ended")
        #expect(!ready.isOpen)
        ready.open()
        #expect(await Self.end(of: opened, within: .seconds(30)) != nil, "the open schema ended the wait")
        // Once open, at once.
        await ready.wait()
        #expect(ready.isOpen)
    }

    /// `task`'s result, or nil when it has not ended within `limit` (then it is left running).
    static func end<Success: Sendable, Failure: Error>(
        of task: Task<Success, Failure>, within limit: Duration
    ) async -> Result<Success, Failure>? {
        try? await Deadline.answer(within: limit, { await task.result }, late: { CancellationError() })
    }
}
