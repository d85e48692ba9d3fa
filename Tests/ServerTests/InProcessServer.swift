import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import OnboardingServer
import PostgresNIO
import ServerControlPlane
import ServerDashboard
import ServerDatabase
import ServerSyncAPI
import ServerTokens
import ServiceLifecycle

/// The server's routes in this test's process, through Hummingbird's router test client, on a
/// fresh migrated database: for tests of what a route answers, with no server process, port or
/// connection to pay for. Requests go through the router, middleware and stores `serve` composes
/// (the API and the dashboard feature); the background services (the insights job, the rollout
/// guard, the held facts' admission) do not run, so a test that needs them starts a process.
struct InProcessServer: Sendable {
    let client: any TestClientProtocol
    let signer: TokenSigner
    let databaseURL: String

    /// `body` with the routes of a server on a fresh database.
    static func with(_ body: @escaping @Sendable (InProcessServer) async throws -> Void) async throws {
        try await TestPostgres.withClient(migrated: true, maximumConnections: 4) {
            database, logger, urlText in
            let url = try DatabaseURL(urlText)
            let signer = try TokenSigner(secret: ServerProcess.secret)
            let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, database: url, tokens: signer)
            // Patient bounds: what these tests check is the answer, not a bound the suite's load
            // can pass.
            let store = AccountStore(client: database, logger: logger, writeBounds: .patient)
            let (router, services) = try await OnboardingServer.router(
                configuration, features: [DashboardFeature()], client: database, store: store,
                http: HTTPClient.shared,
                logger: logger)
            try await Self.test(router, services: services, logger: logger) { client in
                try await body(InProcessServer(client: client, signer: signer, databaseURL: urlText))
            }
        }
    }

    /// `body` with Hummingbird's router test client for `router`, while `services` run beside it
    /// and are stopped after (the readiness probe closes its connection).
    ///
    /// In a service group of their own that handles no signal: the test client would run them in
    /// one that sets SIGINT and SIGTERM to be ignored, for the rest of the test process and every
    /// process it starts after (an ignored signal stays ignored across `exec`), and the tests that
    /// stop a server or a CLI with those signals would wait for nothing.
    static func test<Value: Sendable>(
        _ router: Router<ServerRequestContext>, services: [any Service], logger: Logger,
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        let (started, start) = AsyncStream.makeStream(of: Void.self)
        let group = ServiceGroup(
            configuration: .init(
                services: services + [Started(continuation: start)], gracefulShutdownSignals: [],
                logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            // The stream ends with the group too: a group that fails before its services start
            // would otherwise leave the wait below waiting for ever.
            tasks.addTask {
                defer { start.finish() }
                try await group.run()
            }
            // Stopped only once running: a group stopped before it ran would run nothing, and close
            // nothing.
            await started.first { _ in true }
            do {
                let value = try await Application(router: router).test(.router) { client in
                    try await body(client)
                }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return value
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
        }
    }

    /// Says that its group runs, then waits for the group's stop.
    private struct Started: Service {
        let continuation: AsyncStream<Void>.Continuation
        func run() async throws {
            continuation.yield()
            continuation.finish()
            try? await gracefulShutdown()
        }
    }

    /// An account token of `app`, as the `token` command signs it (valid for a day).
    func token(account: String, app: String = "growth") async -> String {
        await signer.sign(
            TokenClaims(
                subject: account, scope: .account, app: app,
                expires: Int64(Date().timeIntervalSince1970) + 86_400))
    }

    /// The answer to `method path` with `token` as its bearer credential and `body`.
    /// `send`, sent again while the answer is a 503 ("try again": on a machine busy with the whole
    /// suite, Swift's pool, which runs these routes too, can pass a read's deadline; ``Patience``):
    /// for a request whose answer when it is answered is the subject, not its time.
    /// (A 503 stored nothing, so a push sent again is what a device does.)
    func sendUntilAnswered(
        _ method: HTTPRequest.Method, _ path: String, token: String? = nil, body: Data? = nil
    ) async throws -> HTTP.Answer {
        try await Patience.untilAnswered({ try await send(method, path, token: token, body: body) }) {
            $0.status == 503
        }
    }

    func send(_ method: HTTPRequest.Method, _ path: String, token: String? = nil, body: Data? = nil)
        async throws
        -> HTTP.Answer
    {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        if body != nil { headers[.contentType] = "application/json" }
        let response = try await client.execute(
            uri: path, method: method, headers: headers, body: body.map { ByteBuffer(bytes: $0) })
        return HTTP.Answer(
            status: Int(response.status.code), body: Data(response.body.readableBytesView),
            retryAfter: response.headers[.retryAfter])
    }

    /// Runs SQL on the server's database through psql; rows as lines.
    func sql(_ query: String) throws -> [String] { try TestPostgres.sql(query, on: databaseURL) }
}
