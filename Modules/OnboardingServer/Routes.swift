import AccountSync
import Foundation
import TourCodec
import Hummingbird
import Logging
import NIOCore
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
struct APIError: Error {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    /// Seconds to wait, sent as `Retry-After` (a 429 or a 503).
    var retryAfter: Int? = nil
    /// The pushed row refused, when one is (a device sets it aside and pushes the rest).
    var seq: Int64? = nil

    static func invalid(_ message: String, seq: Int64? = nil) -> APIError {
        APIError(status: .badRequest, code: "invalid_request", message: message, seq: seq)
    }
}

/// The `/v1` routes. Every answer is JSON; every refusal is `{"error": {"code", "message"}}` with a
/// 4xx status and changes nothing.
struct Routes: Sendable {
    let store: AccountStore
    let catalogs: CatalogStore
    let tokens: TokenSigner
    let identityProvider: IdentityProvider?
    let controlPlane: ControlPlane
    let logger: Logger

    func add(to router: Router<ServerRequestContext>) {
        router.get("/v1/health") { _, _ in Self.json(["status": "ok"] as TourValue) }
        router.get("/v1/ready") { _, _ in
            await store.isReady()
                ? Self.json(["status": "ready"] as TourValue)
                : Self.error(
                    APIError(status: .serviceUnavailable, code: "unavailable", message: "the database does not answer"))
        }
        router.post("/v1/apps/:app/accounts/:account/push") { request, context in
            await answer {
                let (app, account, claims) = try await accountClaims(context, request)
                var request = request
                let body = try await Self.body(&request)
                let batch: PushBatch
                do { batch = try PushBatch(jsonUTF8: body.readableBytesView) } catch {
                    throw APIError.invalid("the body is not a push batch: \(Self.describe(error))")
                }
                try Self.validate(batch)
                // No deadline around it: the store answers a push it could not take within its
                // bound with a 503, and one it wrote with what its transaction did (PushBatcher).
                let ack = try await store.push(app: app, account: account, batch, tokenIssuedAt: claims.issuedAt)
                guard let ack else { throw Self.revoked }
                return Self.json(ack)
            }
        }
        router.get("/v1/apps/:app/accounts/:account/flows") { request, context in
            await answer {
                let (app, account) = try await accountPath(context, request)
                return try await Self.json(withDeadline(Self.requestDeadline) { try await store.records(app: app, account: account) })
            }
        }
        router.post("/v1/apps/:app/accounts/:account/budget") { request, context in
            await answer {
                let (app, account) = try await accountPath(context, request)
                var request = request
                let body = try await Self.body(&request)
                let exchange: BudgetExchange
                do { exchange = try BudgetExchange(jsonUTF8: body.readableBytesView) } catch {
                    throw APIError.invalid("the body is not a budget exchange: \(Self.describe(error))")
                }
                let today = BudgetDay(Date())
                if let problem = SyncAPI.problem(with: exchange, today: today) { throw APIError.invalid(problem) }
                // The budget is the family's: an app outside it (any token names some app) writes none of it.
                guard try await withDeadline(Self.requestDeadline, { try await store.sharesBudget(app: app) }) else {
                    throw APIError(
                        status: .forbidden, code: "not_in_family",
                        message: "\(app) does not share the family's display budget on this server (ONBOARDING_BUDGET_FAMILY, or the apps registered with onboarding-server register)")
                }
                return try await Self.json(
                    withDeadline(Self.requestDeadline) { try await store.exchangeBudget(account: account, exchange, today: today) })
            }
        }
        // Sign out everywhere: the account's tokens issued until now are refused from now on.
        router.post("/v1/apps/:app/accounts/:account/sign-out") { request, context in
            await answer {
                let app = try Self.name(context, "app")
                let account = try Self.name(context, "account")
                // The account itself, or an owner of the app (support: a lost phone).
                var staff: Actor?
                if let token = ControlPlane.bearer(request), (try? await tokens.verify(token, now: Date()))?.scope == .person {
                    staff = try await controlPlane.actor(request, context, app: app, role: .owner, to: "signing an account out")
                } else {
                    let claims = try await authorize(request, context, app: app)
                    guard claims.subject == account else {
                        throw APIError(
                            status: .forbidden, code: "forbidden", message: "this token is not for account '\(account)'")
                    }
                    try await refuseIfSignedOut(claims, app: app, account: account)
                }
                let now = Date().timeIntervalSince1970
                let audit = staff.map { AuditLog.Entry(at: now, actor: $0, app: app, action: "account.signed-out", target: account) }
                let cutoff = try await withDeadline(Self.requestDeadline) {
                    try await store.signOutEverywhere(app: app, account: account, at: now, audit: audit)
                }
                return Self.json(SignOut(app: app, account: account, tokensIssuedBefore: cutoff))
            }
        }
        addCatalogRoutes(to: router)
        addControlPlaneRoutes(to: router)
        router.get("/v1/apps/:app/report") { request, context in
            await answer {
                let app = try Self.name(context, "app")
                _ = try await controlPlane.actor(request, context, app: app, role: .viewer, to: "reports")
                try await withDeadline(Self.reportDeadline) { try await store.catchUpInsights(waitingUpTo: .seconds(5)) }
                switch request.uri.queryParameters.get("by") ?? "flow" {
                case "flow":
                    return try await Self.json(withDeadline(Self.reportDeadline) { try await store.report(app: app) })
                case "variant":
                    return try await Self.json(
                        withDeadline(Self.reportDeadline) { try await store.experimentReports(app: app, catalogs: catalogs) })
                case let other:
                    throw APIError.invalid("by takes flow (each flow's funnel) or variant (each experiment's variants); got '\(other.prefix(40))'")
                }
            }
        }
    }

    // MARK: - Authorisation

    /// The claims of the request's account token, for `app`: one of the server's own tokens (signed
    /// by a key of its ring, naming `app`), or a JWT of the configured identity provider whose
    /// audience is `app`. A source past its limit of failed tokens is refused first, unchecked.
    func authorize(_ request: Request, _ context: ServerRequestContext, app: String) async throws -> TokenClaims {
        guard let token = ControlPlane.bearer(request) else {
            throw APIError(
                status: .unauthorized, code: "unauthorized",
                message: "send a token as 'Authorization: Bearer TOKEN' (onboarding-server token --app APP --account ACCOUNT mints one)")
        }
        let now = Date()
        do {
            return try await verify(token, app: app, now: now)
        } catch let error as APIError where error.status == .unauthorized && !["token_expired", "token_outdated"].contains(error.code) {
            // A token that did not check: counted against its source (429 past the limit). A genuine
            // old one (expired, revoked by a sign-out) is not a guess and is not counted.
            throw controlPlane.refusal(error, source: controlPlane.clients.of(request, context), now: now.timeIntervalSince1970)
        }
    }

    private func verify(_ token: String, app: String, now: Date) async throws -> TokenClaims {
        let claims: TokenClaims
        if let identityProvider, !TokenSigner.isOwnToken(token) {
            do {
                claims = try await identityProvider.verify(token, app: app, now: now)
            } catch .expired {
                throw APIError(status: .unauthorized, code: "token_expired", message: "the token has expired; sign in again")
            } catch .invalid(let why) {
                throw APIError(status: .unauthorized, code: "unauthorized", message: "the identity token is not accepted: \(why)")
            } catch .unavailable {
                throw APIError(
                    status: .serviceUnavailable, code: "unavailable",
                    message: "the identity provider's keys could not be fetched to check the token; try again", retryAfter: 5)
            }
        } else {
            do {
                claims = try await tokens.verify(token, now: now)
            } catch .expired {
                throw APIError(status: .unauthorized, code: "token_expired", message: "the token has expired; get a new one")
            } catch .outdated {
                throw APIError(
                    status: .unauthorized, code: "token_outdated",
                    message: "this token's format (obt1) names no app and is no longer accepted; mint a new one with onboarding-server token --app APP --account ACCOUNT")
            } catch .adminRetired {
                throw ControlPlane.adminRetired
            } catch .unknownKey {
                throw APIError(
                    status: .unauthorized, code: "unauthorized",
                    message: "the token was signed by a key this server no longer accepts; get a new one")
            } catch {
                throw APIError(status: .unauthorized, code: "unauthorized", message: "the token is not valid")
            }
        }
        if let tokenApp = claims.app, tokenApp != app {
            throw APIError(status: .forbidden, code: "forbidden", message: "this token is for the app '\(tokenApp)', not '\(app)'")
        }
        return claims
    }

    /// The app and account of the path, when the token is that account's, for that app, and was
    /// issued after the account last signed out everywhere.
    func accountPath(_ context: ServerRequestContext, _ request: Request) async throws -> (String, String) {
        let (app, account, claims) = try await accountClaims(context, request)
        try await refuseIfSignedOut(claims, app: app, account: account)
        return (app, account)
    }

    /// The app, account and claims of an account request, before the sign-out check (a push makes
    /// that check in its own statement, saving a round trip).
    func accountClaims(_ context: ServerRequestContext, _ request: Request) async throws -> (String, String, TokenClaims) {
        let app = try Self.name(context, "app")
        let account = try Self.name(context, "account")
        let claims = try await authorize(request, context, app: app)
        guard claims.scope == .account, claims.subject == account else {
            throw APIError(
                status: .forbidden, code: "forbidden", message: "this token is not for account '\(account)'")
        }
        return (app, account, claims)
    }

    static let revoked = APIError(
        status: .unauthorized, code: "token_revoked",
        message: "the account signed out everywhere after this token was issued; sign in again")

    func refuseIfSignedOut(_ claims: TokenClaims, app: String, account: String) async throws {
        let cutoff = try await withDeadline(Self.requestDeadline) { try await store.tokenCutoff(app: app, account: account) }
        if let cutoff, claims.issuedAt < cutoff { throw Self.revoked }
    }

    static func name(_ context: ServerRequestContext, _ parameter: String) throws -> String {
        let value = context.parameters.get(parameter) ?? ""
        guard SyncAPI.isValidName(value) else {
            throw APIError.invalid("the \(parameter) id must be \(SyncAPI.nameRule)")
        }
        return value
    }

    // MARK: - Validation

    /// Checks the whole batch before anything is written, by the rules devices check themselves
    /// (``SyncAPI/problem(with:)-(PushBatch)``): a refused batch changes nothing, and the refusal
    /// names the row (`seq`) a device sets aside.
    static func validate(_ batch: PushBatch) throws {
        if let problem = SyncAPI.problem(with: batch) { throw APIError.invalid(problem.message, seq: problem.seq) }
        if let rule = testOnlyRefusal {
            let unnamed = rule.hasPrefix("unnamed:")
            let event = unnamed ? String(rule.dropFirst("unnamed:".count)) : rule
            if let item = batch.items.first(where: { $0.event == event }) {
                throw APIError.invalid(
                    "item seq \(item.seq): events named \(event) are refused (a test-only rule)", seq: unnamed ? nil : item.seq)
            }
        }
    }

    /// A rule a newer server might add, for the tests of devices setting a refused row aside:
    /// debug builds refuse rows of the event `ONBOARDING_TEST_REFUSE_EVENT` names (naming the row,
    /// or, written `unnamed:EVENT`, the way an older server refuses: the whole push). Release
    /// builds have no such rule.
    static let testOnlyRefusal: String? = {
        #if DEBUG
            ProcessInfo.processInfo.environment["ONBOARDING_TEST_REFUSE_EVENT"].flatMap { $0.isEmpty ? nil : $0 }
        #else
            nil
        #endif
    }()

    // MARK: - Bodies and answers

    static func body(_ request: inout Request) async throws -> ByteBuffer {
        do {
            return try await request.collectBody(upTo: SyncAPI.maxBodyBytes)
        } catch {
            throw APIError(
                status: .contentTooLarge, code: "too_large",
                message: "a request body is at most \(SyncAPI.maxBodyBytes) bytes")
        }
    }

    /// Runs a handler; an ``APIError`` becomes its JSON answer, anything else a 503 when the
    /// database did not answer, or a 500 (logged without the request's body or headers).
    func answer(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let error as APIError {
            return Self.error(error)
        } catch is DatabaseUnavailable {
            return Self.error(Self.unavailable)
        } catch is Overloaded {
            return Self.error(Self.overloaded)
        } catch {
            logger.inRequest.error("request failed", metadata: ["error": "\(String(reflecting: error).prefix(2_000))"])
            let unavailable = !(await store.isReady())
            return Self.error(
                unavailable
                    ? Self.unavailable
                    : APIError(status: .internalServerError, code: "internal", message: "the server failed; try again"))
        }
    }

    /// How long a device's push or pull may wait for PostgreSQL: under the devices' own 5 s
    /// timeout, so they hear a 503 rather than nothing. Reports scan more and may take longer.
    static let requestDeadline: Duration = .seconds(3)
    static let reportDeadline: Duration = .seconds(30)

    static let unavailable = APIError(
        status: .serviceUnavailable, code: "unavailable", message: "the database does not answer; try again", retryAfter: 1)
    /// Pushes arrive faster than they are written: shed at once, nothing stored.
    static let overloaded = APIError(
        status: .serviceUnavailable, code: "overloaded", message: "the server is busy and stored nothing; try again", retryAfter: 1)

    /// An answer in its one wire form (TourCodec's JSON, as the devices write theirs).
    static func json(_ value: some TourValueRepresentable, status: HTTPResponse.Status = .ok) -> Response {
        json(value.tourValue, status: status)
    }

    static func json(_ value: TourValue, status: HTTPResponse.Status = .ok) -> Response {
        // Every answer is made of finite numbers (counts, seconds); a non-finite one would be a bug
        // here, answered as a failure rather than as JSON that is not JSON.
        guard let bytes = try? value.jsonUTF8() else {
            return error(APIError(status: .internalServerError, code: "internal", message: "the server failed; try again"))
        }
        return Response(
            status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func error(_ error: APIError) -> Response {
        var response = json(ErrorBody(code: error.code, message: error.message, seq: error.seq), status: error.status)
        if let wait = error.retryAfter { response.headers[.retryAfter] = String(wait) }
        return response
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            "missing '\((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty
                ? "not JSON of the expected shape"
                : "bad value at '\(context.codingPath.map(\.stringValue).joined(separator: "."))'"
        case let error as JSONTextError: "not JSON (\(error))"
        default: "not JSON"
        }
    }
}
