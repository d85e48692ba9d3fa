import AccountSync
import Foundation
import HTTPTypes
import Hummingbird
import Logging
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

/// A refused request: its status, a stable code and one message that says what is allowed.
package struct APIError: Error {
    package var status: HTTPResponse.Status
    package var code: String
    package var message: String
    /// Seconds to wait, sent as `Retry-After` (a 429 or a 503).
    package var retryAfter: Int? = nil
    /// The pushed row refused, when one is (a device sets it aside and pushes the rest).
    var seq: Int64? = nil

    static func invalid(_ message: String, seq: Int64? = nil) -> APIError {
        APIError(status: .badRequest, code: "invalid_request", message: message, seq: seq)
    }
}

/// The `/v1` routes. Every answer is JSON; every refusal is `{"error": {"code", "message"}}` with a
/// 4xx status and changes nothing.
package struct Routes: Sendable {
    let store: AccountStore
    let catalogs: CatalogStore
    let tokens: TokenSigner
    let identityProvider: IdentityProvider?
    let controlPlane: ControlPlane
    let enrollmentStore: EnrollmentStore
    /// Enrollments per source: every attempt spends one.
    let enrollments: RateLimiter
    /// Seconds a device may keep the publications list before it asks again.
    let publicationMaxAge: Int
    let logger: Logger
    /// Where `/report` reads its figures when not on the primary: a store over the replica.
    var reports: AccountStore? = nil
    /// How fresh the figures are, and the wait for them (``InsightsFreshness``).
    var freshness: InsightsFreshness? = nil
    /// Readiness: whether a write commits (the server's); without it, whether PostgreSQL answers.
    var readiness: CommitProbe? = nil
    /// How long `/report` waits for its pushes to be counted, and for a replica to replay them.
    static let countWait: Duration = .seconds(5)
    static let replicaWait: Duration = .seconds(2)

    func add(to router: Router<ServerRequestContext>) {
        addPublicRoutes(to: router)
        // Every other route needs a caller: the middleware proves one, and the group's context
        // carries it, so no handler of the group runs without it.
        let authenticated = router.group().add(middleware: APIAuthentication(routes: self))
            .group(context: AuthenticatedRequestContext.self)
        addDeviceRoutes(to: authenticated)
        addCatalogRoutes(to: authenticated)
        addErasureRoutes(to: authenticated)
        addFlowArchiveRoutes(to: authenticated)
        addControlPlaneRoutes(to: authenticated)
        addReportRoute(to: authenticated)
    }

    /// The routes anyone may call: health, readiness and enrollment (which takes the app's key).
    private func addPublicRoutes(to router: Router<ServerRequestContext>) {
        router.get("/v1/health") { _, _ in Self.json(["status": "ok"] as TourValue) }
        router.get("/v1/ready") { _, _ in
            let ready =
                if let readiness { await readiness.isReady(within: .seconds(2)) } else {
                    await store.isReady()
                }
            return ready
                ? Self.json(["status": "ready"] as TourValue)
                : Self.error(
                    APIError(
                        status: .serviceUnavailable, code: "unavailable",
                        message:
                            "the database does not commit a write within 2 s (down, read-only, or waiting for a standby)",
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
                guard store.admitsPush() else { throw Overloaded() }
                let (app, account, claims) = try accountClaims(context)
                var request = request
                let body = try await Self.body(&request)
                let batch: PushBatch
                do { batch = try PushBatch(jsonUTF8: body.readableBytesView) } catch {
                    throw APIError.invalid("the body is not a push batch: \(Self.describe(error))")
                }
                try Self.validate(batch)
                // Its experiment facts count for the credential that pushed them (PushSubjects).
                let counted = try PushSubjects.counted(batch, pushedBy: account)
                // No deadline around it: the store answers a push it could not take within its
                // bound with a 503, and one it wrote with what its transaction did (PushBatcher).
                let ack = try await store.push(
                    app: app, account: account, counted, tokenIssuedAt: claims.issuedAt,
                    subjectNames: tokens.subjectPseudonyms(app: app, subject: account), arrived: arrived)
                guard let ack else { throw Self.revoked }
                return Self.json(ack)
            }
        }
        router.get("/v1/apps/:app/accounts/:account/flows") { request, context in
            await answer {
                let (app, account) = try await accountPath(context)
                return Self.json(try await (store.records(app: app, account: account)))
            }
        }
        router.post("/v1/apps/:app/accounts/:account/budget") { request, context in
            await answer {
                let (app, account) = try await accountPath(context)
                var request = request
                let body = try await Self.body(&request)
                let exchange: BudgetExchange
                do { exchange = try BudgetExchange(jsonUTF8: body.readableBytesView) } catch {
                    throw APIError.invalid("the body is not a budget exchange: \(Self.describe(error))")
                }
                let today = BudgetDay(Date())
                if let problem = SyncAPI.problem(with: exchange, today: today) {
                    throw APIError.invalid(problem)
                }
                // The budget is the family's: an app outside it (any token names some app) writes none of it.
                guard try await (store.sharesBudget(app: app)) else {
                    throw APIError(
                        status: .forbidden, code: "not_in_family",
                        message:
                            "\(app) does not share the family's display budget on this server (ONBOARDING_BUDGET_FAMILY, or the apps registered with onboarding-server register)"
                    )
                }
                return Self.json(
                    try await store.exchangeBudget(account: account, exchange, today: today))
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
                let body = try await Self.body(&request)
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
                    let cutoff = try await store.signOutEverywhere(
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
                        "by takes flow (each flow's funnel) or variant (each experiment's variants); got '\(by.prefix(40))'"
                    )
                }
                // Every push answered before this request is counted: the newest transaction id
                // now (a read on the primary) is the target, and the wait is for the catch-up's
                // notification that it counted past it (on a replica, then for the replica to
                // replay that count): once, never by polling, with nothing written.
                let target = try await store.newestTransaction()
                _ = await freshness?.waitForCount(below: target, onReplica: false, within: Self.countWait)
                let reader = reports ?? store
                var behind: Double?
                if reports != nil, let freshness, freshness.readsReplica,
                    !(await freshness.waitForCount(below: target, onReplica: true, within: Self.replicaWait))
                {
                    behind = freshness.replicaBehind ?? 2
                }
                var response =
                    by == "flow"
                    ? Self.json(try await (reader.report(app: app)))
                    : Self.json(
                        try await reader.experimentReports(app: app, catalogs: catalogs))
                // Read from a replica still behind: by how many seconds (the dashboard's notice, as a
                // header).
                if let behind { response.headers[.onboardingStaleSeconds] = String(Int(behind.rounded(.up))) }
                return response
            }
        }
    }
}
