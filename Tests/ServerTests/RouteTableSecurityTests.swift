import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ServerDatabase
import ServerTokens
import TestThreads
import Testing
import TourCodec

@testable import OnboardingServer
@testable import ServerControlPlane
@testable import ServerDashboard
@testable import ServerSyncAPI

/// Every state-changing route of the server's route table refuses a request that lacks what it
/// needs, in process, without naming the routes: a route added tomorrow is walked too.
///
/// - Under `/dashboard` (but the sign-in form, which its own test holds: `CrossSiteTests`): a
///   request with no session, another site's origin, or no anti-forgery token is refused with the
///   dashboard's 403, and a session of a viewer is refused a change that needs a role. Every page
///   of an app, reads included, is refused to a person without a role in that app, and every page
///   but sign-in's sends a request without a session to sign in.
/// - Under `/v1` (but enrollment, which is open by design and holds its own key): a request with no
///   credential is refused 401, and one with a viewer's is refused 401 or 403. Every `/v1` route,
///   reads included, but health, readiness and enrollment refuses a request without a credential
///   or with a forged one (``APIAuthentication``, the group's middleware), and every route of an
///   app refuses a person without a role in it with a 403 (``RequiredRole``, each route's group's,
///   or a device's own route, which takes no person).
///
/// Nothing refused reaches the audit trail. The same requests with everything they need are not
/// refused for forgery, so each refusal above is the check's, not a missing route's.
@Suite("The route table's safety", .ownThread)
struct RouteTableSecurityTests {
    static let app = "growth"
    static let evil = "https://evil.example"

    /// A concrete path for a route's pattern: each parameter given a plausible value.
    static func concrete(_ pattern: String) -> String {
        let values = [
            "app": app, "account": "ann", "install": String(repeating: "a", count: 32), "person": "vera",
            "key": "k1",
            "version": "2", "flow": "tour", "draft": "1",
        ]
        return pattern.split(separator: "/", omittingEmptySubsequences: false).map { component -> String in
            guard component.hasPrefix("{"), component.hasSuffix("}") else { return String(component) }
            return values[String(component.dropFirst().dropLast())] ?? "x"
        }.joined(separator: "/")
    }

    @Test func everyStateChangingRouteRefusesWhatItLacks() async throws {
        try await TestPostgres.withClient(migrated: true, maximumConnections: 4) {
            database, logger, urlText in
            let url = try DatabaseURL(urlText)
            let signer = try TokenSigner(secret: ServerProcess.secret)
            let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, database: url, tokens: signer)
            let store = AccountStore(client: database, logger: logger)
            let (router, services) = try await OnboardingServer.router(
                configuration, features: [DashboardFeature()], client: database, store: store,
                http: HTTPClient.shared, logger: logger)

            // An owner and a viewer of the app, each with a credential. (Set-up, not the subject:
            // patient bounds.)
            let people = PeopleStore(
                writes: WritableDatabase(client: database, logger: logger, bounds: .patient),
                reads: ReadOnlyDatabase(sharing: database, logger: logger), logger: logger)
            let now = Date().timeIntervalSince1970
            let tester = Actor(name: "route-table test", source: "test", person: nil)
            func credential(_ role: Role, _ name: String) async throws -> String {
                let made = try await people.grant(
                    role, in: .app(Self.app), to: name, identity: nil, days: 1, by: tester, now: now)
                return await signer.sign(try #require(made.newCredential).claims)
            }
            let ownerCredential = try await credential(.owner, "olga")
            let viewerCredential = try await credential(.viewer, "vera")
            // An owner of another app, and nothing of this one.
            let strangerCredential = try await {
                let made = try await people.grant(
                    .owner, in: .app("lockedin"), to: "stan", identity: nil, days: 1, by: tester, now: now)
                return await signer.sign(try #require(made.newCredential).claims)
            }()
            @Sendable func auditRows() async throws -> Int {
                let rows = try await database.query("SELECT count(*)::bigint FROM audit_log", logger: logger)
                for try await count in rows.decode(Int64.self) { return Int(count) }
                return 0
            }

            // Every `/v1` route, reads included, but the three anyone may call.
            let open: Set<String> = ["GET /v1/health", "GET /v1/ready", "POST /v1/apps/{app}/installs"]
            let everyAPIRoute = router.routes.map { ($0.method, "\($0.path)") }.filter {
                $0.1.hasPrefix("/v1") && !open.contains("\($0.0) \($0.1)")
            }
            #expect(everyAPIRoute.count >= 24, "\(everyAPIRoute)")
            let routes = router.routes.filter { $0.method != .get && $0.method != .head }.map {
                ($0.method, "\($0.path)")
            }
            let dashboard = routes.filter { $0.1.hasPrefix("/dashboard") && $0.1 != "/dashboard/sign-in" }
            let api = routes.filter { $0.1.hasPrefix("/v1") && $0.1 != "/v1/apps/{app}/installs" }
            #expect(dashboard.count >= 10 && api.count >= 14, "\(routes)")
            // Every dashboard page, reads included, but the sign-in form's.
            let everyDashboardRoute = router.routes.map { ($0.method, "\($0.path)") }.filter {
                $0.1.hasPrefix("/dashboard") && !$0.1.hasPrefix("/dashboard/sign-in")
            }
            let appPages = everyDashboardRoute.filter { $0.1.contains("{app}") }.count
            #expect(appPages >= 20, "\(everyDashboardRoute)")
            // Every state-changing route is one of the two families walked below.
            let elsewhere = routes.filter { route in
                !route.1.hasPrefix("/dashboard") && !route.1.hasPrefix("/v1")
            }
            #expect(elsewhere.isEmpty, "\(elsewhere)")

            try await InProcessServer.test(router, services: services, logger: logger) { client in
                /// A session of the person with `credential`, signed in through the dashboard's own form.
                func session(_ credential: String) async throws -> String {
                    // Only a database slow to answer (503) is tried again (``Patience``).
                    let signedIn = try await Patience.untilAnswered({
                        let form = try await client.execute(uri: "/dashboard/sign-in", method: .get)
                        let cookie = try #require(Self.cookie("onboarding_sign_in", form.headers))
                        let token = DashboardSessions.derive("sign-in", cookie)
                        return try await client.execute(
                            uri: "/dashboard/sign-in", method: .post,
                            headers: [
                                .cookie: "onboarding_sign_in=\(cookie)",
                                .contentType: "application/x-www-form-urlencoded",
                            ],
                            body: ByteBuffer(string: "form_token=\(token)&credential=\(credential)"))
                    }) { $0.status == .serviceUnavailable }
                    guard let session = Self.cookie("onboarding_session", signedIn.headers) else {
                        throw HarnessFailure("sign-in: \(signedIn.status)")
                    }
                    return session
                }
                let owner = try await session(ownerCredential)
                let viewer = try await session(viewerCredential)
                let stranger = try await session(strangerCredential)
                let before = try await auditRows()

                func send(
                    _ method: HTTPRequest.Method, _ path: String, session: String?, token: Bool = true,
                    origin: String? = nil,
                    bearer: String? = nil
                ) async throws -> TestResponse {
                    var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
                    if let session { headers[.cookie] = "onboarding_session=\(session)" }
                    if let origin { headers[.origin] = origin }
                    if let bearer { headers[.authorization] = "Bearer \(bearer)" }
                    let form =
                        token && session != nil
                        ? "form_token=\(DashboardSessions.derive("form", session!))&" : ""
                    // A 503 decides nothing ("try again": the database was slow to answer on a
                    // loaded machine; ``Patience``); anything else is the route's answer.
                    return try await Patience.untilAnswered({
                        try await client.execute(
                            uri: Self.concrete(path), method: method, headers: headers,
                            body: ByteBuffer(string: form + "x=1"))
                    }) { $0.status == .serviceUnavailable }
                }
                func isForgeryRefusal(_ response: TestResponse) -> Bool {
                    response.status == .forbidden
                        && String(buffer: response.body).contains(
                            "did not come from a page of this dashboard")
                }

                for (method, path) in dashboard {
                    let route = "\(method) \(path)"
                    #expect(
                        isForgeryRefusal(try await send(method, path, session: nil)), "\(route): no session")
                    #expect(
                        isForgeryRefusal(try await send(method, path, session: owner, origin: Self.evil)),
                        "\(route): another site")
                    #expect(
                        isForgeryRefusal(try await send(method, path, session: owner, token: false)),
                        "\(route): no token")
                    // Every change but signing out needs a role the viewer does not hold.
                    if path != "/dashboard/sign-out" {
                        let viewed = try await send(method, path, session: viewer)
                        #expect(
                            viewed.status == .forbidden && !isForgeryRefusal(viewed),
                            "\(route): a viewer, \(viewed.status)")
                        // With everything it needs, it is not refused for forgery (what it does with
                        // the made-up values is the route's own business).
                        #expect(
                            !isForgeryRefusal(try await send(method, path, session: owner)),
                            "\(route): the owner's own page")
                    }
                }
                // Every page needs a session; every page of an app needs a role in it.
                for (method, path) in everyDashboardRoute {
                    let route = "\(method) \(path)"
                    if method == .get || method == .head {
                        let bare = try await send(method, path, session: nil)
                        #expect(
                            bare.status == .seeOther && bare.headers[.location] == "/dashboard/sign-in",
                            "\(route): no session, \(bare.status)")
                    }
                    guard path.contains("{app}") else { continue }
                    let strange = try await send(method, path, session: stranger)
                    #expect(
                        strange.status == .forbidden && !isForgeryRefusal(strange)
                            && String(buffer: strange.body).contains("not a member of \(Self.app)"),
                        "\(route): a person without a role in the app, \(strange.status)")
                }
                // No route of an app under /v1 runs for a person without a role in it.
                for (method, path) in everyAPIRoute where path.contains("{app}") {
                    let strange = try await send(method, path, session: nil, bearer: strangerCredential)
                    #expect(
                        strange.status == .forbidden
                            && String(buffer: strange.body).contains("\"code\":\"forbidden\""),
                        "\(method) \(path): a person without a role in the app, \(strange.status)")
                }
                // No route under /v1 runs for a caller without a credential, or with a forged one.
                for (method, path) in everyAPIRoute {
                    let route = "\(method) \(path)"
                    let bare = try await send(method, path, session: nil)
                    #expect(bare.status == .unauthorized, "\(route): no credential, \(bare.status)")
                    #expect(
                        String(buffer: bare.body).contains("\"code\":\"unauthorized\""),
                        "\(route): \(String(buffer: bare.body))")
                    let forged = try await send(
                        method, path, session: nil, bearer: "eyJhbGciOiJIUzI1NiJ9.e30.forged")
                    // (Past a few, the source's failed credentials are rate limited: 429.)
                    #expect(
                        [.unauthorized, .tooManyRequests].contains(forged.status),
                        "\(route): a forged credential, \(forged.status)")
                }
                for (method, path) in api {
                    let route = "\(method) \(path)"
                    let bare = try await send(method, path, session: nil)
                    #expect(bare.status == .unauthorized, "\(route): no credential, \(bare.status)")
                    let viewed = try await send(method, path, session: nil, bearer: viewerCredential)
                    #expect(
                        [.unauthorized, .forbidden].contains(viewed.status),
                        "\(route): a viewer, \(viewed.status)")
                }
                #expect(try await auditRows() == before, "a refused request was audited as an act")
            }
        }
    }

    /// The value a `Set-Cookie` header of `headers` gives `name`.
    static func cookie(_ name: String, _ headers: HTTPFields) -> String? {
        headers[values: .setCookie].lazy.compactMap { header -> String? in
            let pair = header.split(separator: ";").first ?? ""
            let parts = pair.split(separator: "=", maxSplits: 1)
            return parts.count == 2 && parts[0] == name && !parts[1].isEmpty ? String(parts[1]) : nil
        }.first
    }
}
