import AccountSync
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServerControlPlane
import ServerDatabase
import ServerKit
import ServerPublishing
import ServerTokens
import TourCodec
import TourCore

/// The answer to a sign-out everywhere: tokens of the account issued before this time are refused.
struct SignOut: TourValueRepresentable {
    var app: String
    var account: String
    var tokensIssuedBefore: Double

    var tourValue: TourValue {
        ["app": .string(app), "account": .string(account), "tokensIssuedBefore": .double(tokensIssuedBefore)]
    }
}

/// The devices' `/v1` routes (push, pull, installs, device tokens, the budget exchange, sign-out,
/// export and erasure, the flow archive) and an app's report. Every answer is JSON; every refusal
/// is `{"error": {"code", "message"}}` with a 4xx status and changes nothing.
package struct SyncRoutes: AuthorisedRoutes {
    /// The devices' accounts (push, pull, budget, sign-out, export, erasure).
    let accounts: any AccountRepository
    /// `/report`'s figures on the primary, and where it waits for what was pushed to be counted.
    let figures: any ReportRepository
    /// The publications an experiment's report reads its arms from.
    let history: any PublicationHistory
    package let controlPlane: ControlPlane
    let enrollmentStore: any EnrollmentRepository
    let flowArchive: any FlowArchiveRepository
    /// Enrollments per source: every attempt spends one.
    let enrollments: RateLimiter
    let logger: Logger
    /// Where `/report` reads its figures when not on the primary: a store over the replica.
    package var reports: (any ReportRepository)? = nil
    /// How fresh the figures are, and the wait for them (``InsightsFreshness``).
    package var freshness: InsightsFreshness? = nil
    /// Readiness: whether a write commits (the server's); without it, whether PostgreSQL answers.
    package var readiness: CommitProbe? = nil
    /// How long `/report` waits for its pushes to be counted, and for a replica to replay them.
    static let countWait: Duration = .seconds(5)
    static let replicaWait: Duration = .seconds(2)

    /// Where a write's answer is kept under its `Idempotency-Key`, in the write's transaction.
    package let writes: WritableDatabase

    package init(
        accounts: any AccountRepository, figures: any ReportRepository, history: any PublicationHistory,
        controlPlane: ControlPlane, enrollmentStore: any EnrollmentRepository,
        flowArchive: any FlowArchiveRepository, enrollments: RateLimiter, writes: WritableDatabase,
        logger: Logger
    ) {
        self.accounts = accounts
        self.figures = figures
        self.history = history
        self.controlPlane = controlPlane
        self.enrollmentStore = enrollmentStore
        self.flowArchive = flowArchive
        self.enrollments = enrollments
        self.writes = writes
        self.logger = logger
    }

    /// The routes that need a caller, on the group whose ``APIAuthentication`` proves one.
    package func add(to authenticated: RouterGroup<AuthenticatedRequestContext>) {
        addDeviceRoutes(to: authenticated)
        addErasureRoutes(to: authenticated)
        addFlowArchiveRoutes(to: authenticated)
        addReportRoute(to: authenticated)
    }

    /// The routes anyone may call: health, readiness and enrollment (which takes the app's key).
    package func addPublicRoutes(to router: Router<ServerRequestContext>) {
        router.get("/v1/health") { _, _ in Self.json(["status": "ok"] as TourValue) }
        router.get("/v1/ready") { _, _ in
            let ready =
                if let readiness { await readiness.isReady(within: .seconds(2)) } else {
                    await accounts.isReady()
                }
            return ready
                ? Self.json(["status": "ready"] as TourValue)
                : Self.error(
                    APIError(
                        status: .serviceUnavailable, code: "unavailable",
                        message:
                            """
                            the database does not commit a write within 2 s (down, read-only, \
                            or waiting for a standby)
                            """,
                        retryAfter: 1))
        }
        addEnrollmentRoute(to: router)
    }

    /// A device's own routes: its pushes, records, display budget and sign-out everywhere.
    private func addDeviceRoutes(to router: RouterGroup<AuthenticatedRequestContext>) {
        router.post("/v1/apps/:app/accounts/:account/push") { request, context in
            await answer {
                // Its deadline runs from here; a push the queue would shed now is shed before its
                // body is read, decoded and checked (what a shed push costs the server is what
                // keeps the accepted ones fast under overload).
                let arrived = ContinuousClock.now
                guard accounts.admitsPush() else { throw Overloaded() }
                let (app, account, claims) = try accountClaims(context)
                var request = request
                let body = try await Self.body(&request, upTo: .batch)
                let batch: PushBatch
                do { batch = try PushBatch(jsonUTF8: body.readableBytesView) } catch {
                    throw APIError.invalid("the body is not a push batch: \(Self.describe(error))")
                }
                try Self.validate(batch)
                // Its experiment facts count for the credential that pushed them (PushSubjects).
                let counted = try PushSubjects.counted(batch, pushedBy: account)
                // No deadline around it: the store answers a push it could not take within its
                // bound with a 503, and one it wrote with what its transaction did (PushBatcher).
                let ack = try await accounts.push(
                    app: app, account: account, counted, tokenIssuedAt: claims.issuedAt,
                    subjectNames: tokens.subjectPseudonyms(app: app, subject: account), arrived: arrived)
                guard let ack else { throw Self.revoked }
                return Self.json(ack)
            }
        }
        router.get("/v1/apps/:app/accounts/:account/flows") { request, context in
            await answer {
                let (app, account) = try await accountPath(context)
                return Self.json(try await (accounts.records(app: app, account: account)))
            }
        }
        router.post("/v1/apps/:app/accounts/:account/budget") { request, context in
            await answer {
                let (app, account) = try await accountPath(context)
                var request = request
                let body = try await Self.body(&request, upTo: .budget)
                let exchange: BudgetExchange
                do { exchange = try BudgetExchange(jsonUTF8: body.readableBytesView) } catch {
                    throw APIError.invalid("the body is not a budget exchange: \(Self.describe(error))")
                }
                let today = BudgetDay(Date())
                if let problem = SyncAPI.problem(with: exchange, today: today) {
                    throw APIError.invalid(problem)
                }
                // The budget is the family's: an app outside it (any token names some app) writes none of it.
                guard try await (accounts.sharesBudget(app: app)) else {
                    throw APIError(
                        status: .forbidden, code: "not_in_family",
                        message:
                            """
                            \(app) does not share the family's display budget on this server \
                            (ONBOARDING_BUDGET_FAMILY, or the apps registered with onboarding-server \
                            register)
                            """
                    )
                }
                return Self.json(
                    try await accounts.exchangeBudget(account: account, exchange, today: today))
            }
        }
        // Sign out everywhere: the account's tokens issued until now are refused from now on.
        // The account itself, or an owner of the app (support: a lost phone).
        requiring(.owner, to: "signing an account out", devicesToo: true, in: router).post(
            "/v1/apps/:app/accounts/:account/sign-out"
        ) { request, context in
            await answer {
                let app = try Self.name(context, "app")
                let account = try Self.name(context, "account")
                var owner: Actor?
                var claims: TokenClaims?
                if case .person = context.caller {
                    owner = try context.actor()
                } else {
                    claims = try deviceClaims(context, app: app)
                    guard claims?.subject == account else {
                        throw APIError(
                            status: .forbidden, code: "forbidden",
                            message: "this token is not for account '\(account)'")
                    }
                }
                var request = request
                let body = try await Self.body(&request, upTo: .fields)
                let now = Date().timeIntervalSince1970
                let named = tokens.subjectPseudonym(app: app, subject: account)
                let audit = owner.map {
                    AuditLog.Entry(at: now, actor: $0, app: app, action: "account.signed-out", target: named)
                }
                let accountClaims = claims
                return try await idempotent(
                    request, body: body, caller: owner?.caller ?? "account:\(app)/\(account)"
                ) {
                    // Checked only when it is not the same sign-out sent again: that one's token is
                    // refused by the sign-out itself, and gets its first answer.
                    if let accountClaims {
                        try await refuseIfSignedOut(accountClaims, app: app, account: account)
                    }
                    let cutoff = try await accounts.signOutEverywhere(
                        app: app, account: account, named: named, at: now, audit: audit)
                    return try Self.written(
                        SignOut(app: app, account: account, tokensIssuedBefore: cutoff).tourValue)
                }
            }
        }
    }

    /// An app's report (people of the app).
    private func addReportRoute(to router: RouterGroup<AuthenticatedRequestContext>) {
        requiring(.viewer, to: "reports", in: router).get("/v1/apps/:app/report") { request, context in
            await answer {
                let app = try Self.name(context, "app")
                _ = try context.actor()
                let by = request.uri.queryParameters.get("by") ?? "flow"
                guard by == "flow" || by == "variant" else {
                    throw APIError.invalid(
                        """
                        by takes flow (each flow's funnel) or variant (each experiment's variants); \
                        got '\(by.prefix(40))'
                        """
                    )
                }
                // Every push answered before this request is counted: one past the newest push's
                // transaction (a read on the primary) is the target, and the wait is for the
                // catch-up's notification that it counted past it (on a replica, then for the
                // replica to replay that count): once, never by polling, with nothing written. A
                // report on a server that took no push since the last count waits for nothing.
                // Not counted by then (the count is behind, or a long transaction holds it back):
                // the figures as they are, with how stale they are in a header, never passed off as
                // complete.
                let target = try await figures.reportTarget()
                let reader = reports ?? figures
                var behind: Double?
                if let freshness,
                    !(await freshness.waitForCount(below: target, onReplica: false, within: Self.countWait))
                {
                    // (A replica read is at least as far behind as the primary's count.)
                    let replica = reports == nil ? nil : freshness.replicaBehind
                    behind =
                        [freshness.primaryBehind, replica].compactMap { $0 }.max()
                        ?? Double(Self.countWait.components.seconds)
                } else if reports != nil, let freshness, freshness.readsReplica,
                    !(await freshness.waitForCount(below: target, onReplica: true, within: Self.replicaWait))
                {
                    behind = freshness.replicaBehind ?? 2
                }
                var response =
                    by == "flow"
                    ? Self.json(try await (reader.report(app: app)))
                    : Self.json(
                        try await reader.experimentReports(app: app, history: history))
                // Counted short of the request, or read from a replica still behind: by how many
                // seconds (the dashboard's notice, as a header), at least one.
                if let behind {
                    response.headers[.onboardingStaleSeconds] = String(max(1, Int(behind.rounded(.up))))
                }
                return response
            }
        }
    }
}

/// A device's own account: its path, its token and the account's sign-out cut-off; and a push's
/// validation.
extension SyncRoutes {
    /// Checks the whole batch before anything is written, by the rules devices check themselves
    /// (``SyncAPI/problem(with:)-(PushBatch)``): a refused batch changes nothing, and the refusal
    /// names the row (`seq`) a device sets aside.
    static func validate(_ batch: PushBatch) throws {
        if let problem = SyncAPI.problem(with: batch) {
            throw APIError.invalid(problem.message, seq: problem.seq)
        }
        if let rule = testOnlyRefusal {
            let unnamed = rule.hasPrefix("unnamed:")
            let event = unnamed ? String(rule.dropFirst("unnamed:".count)) : rule
            if let item = batch.items.first(where: { $0.event == event }) {
                throw APIError.invalid(
                    "item seq \(item.seq): events named \(event) are refused (a test-only rule)",
                    seq: unnamed ? nil : item.seq)
            }
        }
    }

    /// A rule a newer server might add, for the tests of devices setting a refused row aside:
    /// debug builds refuse rows of the event `ONBOARDING_TEST_REFUSE_EVENT` names (naming the row,
    /// or, written `unnamed:EVENT`, the way an older server refuses: the whole push). Release
    /// builds have no such rule.
    static let testOnlyRefusal: String? = {
        #if DEBUG
            ProcessInfo.processInfo.environment["ONBOARDING_TEST_REFUSE_EVENT"].flatMap {
                $0.isEmpty ? nil : $0
            }
        #else
            nil
        #endif
    }()

    /// The app and account of the path, when the token is that account's, for that app, and was
    /// issued after the account last signed out everywhere.
    func accountPath(_ context: AuthenticatedRequestContext) async throws -> (String, String) {
        let (app, account, claims) = try accountClaims(context)
        try await refuseIfSignedOut(claims, app: app, account: account)
        return (app, account)
    }

    /// The app, account and claims of an account request, before the sign-out check (a push makes
    /// that check in its own statement, saving a round trip).
    func accountClaims(_ context: AuthenticatedRequestContext) throws -> (String, String, TokenClaims) {
        let app = try Self.name(context, "app")
        let account = try Self.name(context, "account")
        let claims = try deviceClaims(context, app: app)
        // An install's subject opens with its install credential only; an account's with an account token
        // only.
        guard claims.scope == (Installs.isInstall(account) ? .install : .account), claims.subject == account
        else {
            throw APIError(
                status: .forbidden, code: "forbidden", message: "this token is not for account '\(account)'")
        }
        return (app, account, claims)
    }
}
