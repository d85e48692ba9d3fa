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

    static func invalid(_ message: String) -> APIError { APIError(status: .badRequest, code: "invalid_request", message: message) }
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
                let ack = try await withDeadline(Self.requestDeadline) {
                    try await store.push(app: app, account: account, batch, tokenIssuedAt: claims.issuedAt)
                }
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
                let (_, account) = try await accountPath(context, request)
                var request = request
                let body = try await Self.body(&request)
                let exchange: BudgetExchange
                do { exchange = try BudgetExchange(jsonUTF8: body.readableBytesView) } catch {
                    throw APIError.invalid("the body is not a budget exchange: \(Self.describe(error))")
                }
                if let problem = SyncAPI.problem(with: exchange) { throw APIError.invalid(problem) }
                return try await Self.json(
                    withDeadline(Self.requestDeadline) { try await store.exchangeBudget(account: account, exchange) })
            }
        }
        // Sign out everywhere: the account's tokens issued until now are refused from now on.
        router.post("/v1/apps/:app/accounts/:account/sign-out") { request, context in
            await answer {
                let app = try Self.name(context, "app")
                let account = try Self.name(context, "account")
                // The account itself, or an owner of the app (support: a lost phone).
                var staff: Actor?
                if let token = ControlPlane.bearer(request), (try? tokens.verify(token, now: Date()))?.scope == .person {
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
                claims = try tokens.verify(token, now: now)
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

    /// The facts this server checks before storing (``TourFact/kinds``); others, from newer
    /// releases, are stored as sent.
    static let knownFacts: Set<String> = TourFact.kinds

    /// Checks the whole batch before anything is written: a refused batch changes nothing.
    static func validate(_ batch: PushBatch) throws {
        guard SyncAPI.isValidName(batch.device) else {
            throw APIError.invalid("the device id must be \(SyncAPI.nameRule)")
        }
        guard (1...SyncAPI.maxItemsPerPush).contains(batch.items.count) else {
            throw APIError.invalid("a push carries 1 to \(SyncAPI.maxItemsPerPush) items (got \(batch.items.count))")
        }
        var seen: Set<Int64> = []
        for item in batch.items {
            let at = "item seq \(item.seq)"
            guard item.seq > 0, seen.insert(item.seq).inserted else {
                throw APIError.invalid("\(at): seq must be positive and appear once in a push")
            }
            guard item.time.isFinite, (0...SyncAPI.latestTime).contains(item.time) else {
                throw APIError.invalid("\(at): time must be seconds since 1970, before the year 10000")
            }
            if let appVersion = item.appVersion, appVersion.isEmpty || appVersion.count > 64 {
                throw APIError.invalid("\(at): appVersion, when given, is 1 to 64 characters")
            }
            guard !item.event.isEmpty, item.event.count <= 200 else {
                throw APIError.invalid("\(at): event must be 1 to 200 characters")
            }
            // PostgreSQL's text holds no NUL character; refused here, it is the device's mistake (a 400),
            // not the server's failure.
            guard !Self.holdsNUL(.string(item.event)), !Self.holdsNUL(.string(item.appVersion ?? "")),
                !item.facts.contains(where: Self.holdsNUL)
            else {
                throw APIError.invalid("\(at): text must not contain the NUL character (U+0000)")
            }
            guard item.catalogVersion >= 1 else { throw APIError.invalid("\(at): catalogVersion must be 1 or more") }
            for fact in item.facts {
                guard let object = fact.objectValue, let kind = object["fact"]?.stringValue,
                    let flow = object["flow"]?.stringValue, SyncAPI.isValidName(flow)
                else {
                    throw APIError.invalid("\(at): each fact is an object with a 'fact' name and a 'flow' id")
                }
                if knownFacts.contains(kind) {
                    guard (try? TourFact(tourValue: fact)) != nil else {
                        throw APIError.invalid("\(at): the \(kind) fact of \(flow) is not well formed")
                    }
                }
            }
            for (flow, record) in item.records {
                guard SyncAPI.isValidName(flow) else { throw APIError.invalid("\(at): flow ids must be \(SyncAPI.nameRule)") }
                if let problem = record.problem { throw APIError.invalid("\(at): the record of \(flow): \(problem)") }
                guard record.device == batch.device else {
                    throw APIError.invalid("\(at): the record of \(flow) names another device; a device pushes its own")
                }
            }
        }
    }

    static func holdsNUL(_ value: TourValue) -> Bool {
        switch value {
        case .string(let text): text.utf8.contains(0)
        case .list(let values): values.contains(where: holdsNUL)
        case .object(let members): members.contains { holdsNUL(.string($0.key)) || holdsNUL($0.value) }
        default: false
        }
    }

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
        } catch {
            logger.error("request failed", metadata: ["error": "\(String(reflecting: type(of: error)))"])
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
        status: .serviceUnavailable, code: "unavailable", message: "the database does not answer; try again")

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
        var response = json(ErrorBody(code: error.code, message: error.message), status: error.status)
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
