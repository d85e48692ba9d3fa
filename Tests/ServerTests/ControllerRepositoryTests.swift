import AccountSync
import Foundation
import Hummingbird
import Logging
import ServerControlPlane
import ServerDatabase
import ServerInsights
import ServerKit
import ServerPublishing
import ServerTokens
import Synchronization
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures

@testable import ServerSyncAPI

/// The sync API's controller (`SyncRoutes`) is given repositories, not stores: over repositories
/// of this test's own, which record what they are asked, its routes ask them and nothing else. The
/// authentication in front of it is the server's own (its middleware and control plane, on a fresh
/// database); the accounts' storage is the test's.
@Suite("Controllers over repositories", .ownThread)
struct ControllerRepositoryTests {
    struct NotAsked: Error {}

    /// An account repository that keeps the pushes it is given and answers what the test set.
    final class RecordingAccounts: AccountRepository, ReportRepository, Sendable {
        struct Pushed: Sendable {
            var app: String
            var account: String
            var batch: PushBatch
            var subjectNames: [String]
        }
        let admits: Bool
        let stored: [String: AccountFlowRecord]
        let pushes = Mutex<[Pushed]>([])
        let asked = Mutex<[String]>([])

        init(admits: Bool = true, stored: [String: AccountFlowRecord] = [:]) {
            self.admits = admits
            self.stored = stored
        }

        private func ask(_ what: String) { asked.withLock { $0.append(what) } }

        func admitsPush() -> Bool {
            ask("admitsPush")
            return admits
        }
        func push(
            app: String, account: String, _ batch: PushBatch, tokenIssuedAt: Double?, subjectNames: [String],
            arrived: ContinuousClock.Instant
        ) async throws -> PushAck? {
            ask("push")
            pushes.withLock {
                $0.append(Pushed(app: app, account: account, batch: batch, subjectNames: subjectNames))
            }
            return PushAck(applied: batch.items.count, duplicates: 0, records: stored)
        }
        func records(app: String, account: String) async throws -> AccountRecords {
            ask("records \(app)/\(account)")
            return AccountRecords(app: app, account: account, flows: stored)
        }
        func sharesBudget(app: String) async throws -> Bool { throw NotAsked() }
        func exchangeBudget(account: String, _ exchange: BudgetExchange, today: BudgetDay?) async throws
            -> AccountBudget
        { throw NotAsked() }
        func signOutEverywhere(
            app: String, account: String, named name: String, at time: Double, audit: AuditLog.Entry?
        ) async throws -> Double { throw NotAsked() }
        func erase(app: String, subject: String, pseudonym: String, by actor: Actor, at time: Double)
            async throws
            -> ErasureSummary
        { throw NotAsked() }
        func export(app: String, subject: String) async throws -> TourValue { throw NotAsked() }
        func isReady() async -> Bool { true }
        func reportTarget() async throws -> UInt64 { throw NotAsked() }
        func report(app: String) async throws -> AppReport { throw NotAsked() }
        func experimentReports(app: String, history: any PublicationHistory) async throws -> ExperimentReports
        {
            throw NotAsked()
        }
        func unplanned(app: String) async throws -> [AppReport.Unplanned] { throw NotAsked() }
    }

    struct NoEnrollments: EnrollmentRepository {
        func enroll(app: String, key: String, at time: Double) async throws -> String? { throw NotAsked() }
    }
    struct NoArchive: FlowArchiveRepository {
        func set(app: String, flow: String, archived: Bool, by actor: Actor, at time: Double) async throws
            -> Bool
        {
            throw NotAsked()
        }
        func archived(apps: [String]) async throws -> Set<String> { throw NotAsked() }
    }
    struct NoHistory: PublicationHistory {
        func all(app: String) async throws -> [CatalogStore.Entry] { throw NotAsked() }
    }

    /// `body` with the sync routes over `accounts`, behind the server's authentication.
    static func with(
        _ accounts: RecordingAccounts, _ body: @escaping @Sendable (InProcessServer) async throws -> Void
    ) async throws {
        try await TestPostgres.withMigratedClient(maximumConnections: 4) { client, logger in
            let signer = try TokenSigner(secret: ServerProcess.secret)
            let writes = WritableDatabase(client: client, logger: logger)
            let reads = ReadOnlyDatabase(sharing: client, logger: logger)
            let controlPlane = ControlPlane(
                writes: writes, reads: reads, tokens: signer,
                clients: ClientAddress(trustedProxies: [], logger: logger), logger: logger)
            let sync = SyncRoutes(
                accounts: accounts, figures: accounts, history: NoHistory(), controlPlane: controlPlane,
                enrollmentStore: NoEnrollments(), flowArchive: NoArchive(),
                enrollments: RateLimiter(
                    limits: .init(sourceBurst: 1, sourceRefill: 60, personBurst: 1, personRefill: 1)),
                writes: writes, logger: logger)
            let router = Router(context: ServerRequestContext.self)
            sync.addPublicRoutes(to: router)
            sync.add(
                to: router.group()
                    .add(middleware: APIAuthentication(controlPlane: controlPlane, identityProvider: nil))
                    .group(context: AuthenticatedRequestContext.self))
            try await InProcessServer.test(router, services: [], logger: logger) { testClient in
                try await body(InProcessServer(client: testClient, signer: signer, databaseURL: ""))
            }
        }
    }

    @Test func aPushIsGivenToTheAccountRepositoryAndItsAnswerIsTheAcknowledgement() async throws {
        let record = AccountFlowRecord(epoch: 0, standing: .completed, version: "1", at: 7, device: "d1")
        let accounts = RecordingAccounts(stored: ["tour": record])
        try await Self.with(accounts) { server in
            let token = await server.token(account: "ann")
            let batch = PushBatch(device: "d1", items: [APITests.item(1, .completed, device: "d1")])
            let answer = try await server.send(
                .post, "/v1/apps/growth/accounts/ann/push", token: token,
                body: Data(try batch.tourValue.jsonUTF8()))
            #expect(answer.status == 200, "\(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
            let ack = try PushAck(jsonUTF8: answer.body)
            #expect(ack.applied == 1 && ack.records == ["tour": record])
            let pushed = try #require(accounts.pushes.withLock { $0.first })
            #expect(pushed.app == "growth" && pushed.account == "ann" && pushed.batch.items.map(\.seq) == [1])
            // The subject's pseudonyms come from the server's keys, not from the request.
            #expect(!pushed.subjectNames.isEmpty && !pushed.subjectNames.contains("ann"))

            let flows = try await server.sendUntilAnswered(
                .get, "/v1/apps/growth/accounts/ann/flows", token: token)
            #expect(flows.status == 200)
            #expect(try AccountRecords(jsonUTF8: flows.body).flows == ["tour": record])
            #expect(accounts.asked.withLock { $0 } == ["admitsPush", "push", "records growth/ann"])
        }
    }

    @Test func aPushTheRepositoryWouldShedIsRefusedBeforeItIsReadAndARefusedTokenAsksNothing() async throws {
        let accounts = RecordingAccounts(admits: false)
        try await Self.with(accounts) { server in
            let token = await server.token(account: "ann")
            // A body past the limit, not JSON: read, it would be refused as too large.
            let shed = try await server.send(
                .post, "/v1/apps/growth/accounts/ann/push", token: token,
                body: Data(repeating: UInt8(ascii: "x"), count: SyncAPI.maxBodyBytes + 1))
            #expect(shed.status == 503 && shed.retryAfter != nil, "\(shed.status)")
            #expect(accounts.asked.withLock { $0 } == ["admitsPush"])

            // Another account's token, and none: refused by the middleware, the repository not asked.
            let other = await server.token(account: "bob")
            #expect(
                try await server.sendUntilAnswered(.get, "/v1/apps/growth/accounts/ann/flows", token: other)
                    .status == 403)
            #expect(
                try await server.sendUntilAnswered(.get, "/v1/apps/growth/accounts/ann/flows").status == 401)
            #expect(accounts.asked.withLock { $0 } == ["admitsPush"])
        }
        #expect(accounts.pushes.withLock { $0.isEmpty })
    }
}
