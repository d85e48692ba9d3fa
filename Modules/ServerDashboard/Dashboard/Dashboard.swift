import AccountSync
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import InsightsPages
import Logging
import NIOCore
import OnboardingServer
import ServerControlPlane
import ServerDatabase
import ServerInsights
import ServerKit
import ServerPublishing
import ServerSyncAPI
import TourCodec
import TourCore

/// `/dashboard`: the insights pages for the people of the control plane (Docs/Server.md, "The
/// dashboard"). Server-rendered HTML with SVG charts and the tables of their numbers, readable
/// without JavaScript, every asset inside the binary. Signing in (with a person's credential,
/// posted in a form, never in a URL, or through the identity provider) opens a session cookie;
/// every other page needs that session and shows the apps its person holds a role in.
///
/// Given repositories, never a store (``ServerParts``): what a page or a form may ask of the
/// database is what their protocols say.
struct Dashboard: Sendable {
    /// An app's figures on the primary: experiments' arms, facts set apart as unplanned.
    let reports: any ReportRepository
    let catalogs: any CatalogRepository
    let drafts: any DraftRepository
    let rollouts: any GuardedRolloutRepository
    let archive: any FlowArchiveRepository
    let people: any PeopleRepository
    let keys: any PublicationKeyRepository
    let auditTrail: any AuditRepository
    /// Where a form's answer is kept under its idempotency key, in the write's transaction.
    let writes: WritableDatabase
    let insights: Insights
    /// Who calls (their session's person, the sign-in limiter) and the server's signer: not how a
    /// page reaches storage.
    let controlPlane: ControlPlane
    /// Signing in and out, and the person a session cookie signs in (ServerControlPlane).
    let signIns: SignIns
    /// The dashboard's own origin as browsers see it (`ONBOARDING_PUBLIC_URL`), when the request's
    /// `Host` is not it (a balancer that rewrites it); else the request's.
    let publicOrigin: String?
    /// How long a device keeps its list of publications (`serve --publication-max-age`): the studio
    /// says when devices get what it publishes.
    var publicationMaxAge: Int = 300
    /// How fresh the figures are (``InsightsFreshness``).
    var freshness: InsightsFreshness? = nil
    let logger: Logger

    /// What a page says of its figures' freshness, when they are not fresh.
    @TaskLocal static var freshnessNotice: String?

    static let cookie = "onboarding_session"

    /// A signed-in request: its session and the person as they are now (their roles read afresh).
    typealias Access = DashboardAccess

    /// The dashboard's routes: the sign-in form's on `server`; every other in one group whose
    /// middleware renders refusals as pages and refuses a change that did not come from a page of
    /// this dashboard; every page but sign-out's behind a session; an app's pages behind the role
    /// they need there (DashboardMiddleware.swift says the order).
    func add(to server: Router<ServerRequestContext>) {
        addSignIn(to: server)
        let router = server.group()
            .add(middleware: DashboardPages(dashboard: self))
            .add(middleware: DashboardForgeryGuard(publicOrigin: publicOrigin))
            .add(middleware: DashboardSessionAuthenticator(dashboard: self))
            .group(context: DashboardRequestContext.self)
        let viewers = router.requiring(.viewer)
        addSignOut(to: router)
        router.get("/dashboard") { request, context in
            let access = context.access
            let today = Date()
            let range = try Self.range(request, today: today)
            let apps = access.visible(try await insights.apps())
            let format = try Self.format(request)
            let table = try Self.table(request, format: format, of: Self.overviewTables)
            // Archived flows leave the overview (its flows and its trend); their app's page and
            // their own keep them.
            let archived = try await archive.archived(apps: apps)
            // One trend window for every app, so the overview can add their days up.
            let trendRange = try await
                (insights.trendRange(apps: apps, range: range, today: today, excluding: archived))
            var summaries: [Insights.AppSummary] = []
            for app in apps {
                let prefix = app + "/"
                let excluded = Set(
                    archived.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) })
                summaries.append(
                    try await
                        (insights.summary(
                            app: app, range: range, trendRange: trendRange, excluding: excluded)))
            }
            return try Self.overview(
                summaries, trendRange: trendRange, range: range, format: format, table: table,
                access: access)
        }
        viewers.get("/dashboard/apps/:app") { request, context in
            let access = context.access
            let app = try context.app()
            let today = Date()
            let range = try Self.range(request, today: today)
            let format = try Self.format(request)
            let table = try Self.table(request, format: format, of: Self.appTables)
            let apps = try await knownApps(app, access: access)
            let trendRange = try await (insights.trendRange(apps: [app], range: range, today: today))
            let summary = try await (insights.summary(app: app, range: range, trendRange: trendRange))
            let entries = try await (catalogs.all(app: app))
            let unplanned = try await (reports.unplanned(app: app))
            let archived = try await archive.archived(apps: [app])
            let guarded = try await guardedRolloutViews(app: app)
            return try Self.appPage(
                summary, catalogs: entries, guarded: guarded, unplanned: unplanned,
                archived: Set(archived.map { String($0.dropFirst(app.count + 1)) }), apps: apps,
                range: range, format: format,
                table: table, access: access)
        }
        viewers.get("/dashboard/apps/:app/flows/:flow") { request, context in
            let access = context.access
            let app = try context.app()
            let flow = try Self.name(context, "flow", access: nil)
            let range = try Self.range(request, today: Date())
            let format = try Self.format(request)
            let table = try Self.table(request, format: format, of: Self.funnelTables)
            let apps = try await knownApps(app, access: access)
            let experiments = try await (reports.experimentReports(app: app, history: catalogs))
                .experiments.filter { $0.flow == flow }
            // Known once any account reached it, whatever the range asked for (an empty range of a
            // known flow is a funnel of zeros; an unknown flow is not found in any range).
            guard
                try await (insights.hasFlow(app: app, flow: flow))
                    || !experiments.isEmpty
            else {
                throw DashboardError(.notFound, "No account of \(app) has reached the flow \(flow).")
            }
            return try await flowPage(
                app: app, flow: flow, apps: apps, range: range, format: format, table: table,
                access: access,
                experiments: experiments, view: try FlowView(request))
        }
        addSubjects(to: router)
        addPeople(to: router)
        addStudio(to: router)
        addStudioPublishing(to: router)
        addGuardedRollouts(to: router)
        // Any other path under /dashboard: a page of its own saying which pages there are (after
        // the session check, so it tells no one without a session what exists). The router reads
        // "/dashboard/" as "/dashboard".
        router.get("/dashboard/**") { _, _ -> Response in
            throw DashboardError(
                .notFound,
                """
                There is no such dashboard page. The pages are /dashboard, /dashboard/apps/APP, \
                /dashboard/apps/APP/flows/FLOW, /dashboard/apps/APP/flows/FLOW/subjects, \
                /dashboard/apps/APP/subjects/SUBJECT, /dashboard/apps/APP/people, /dashboard/apps/APP/studio \
                (and its drafts) and /dashboard/audit.
                """
            )
        }
    }

    /// Every app the session may see, after checking that `app` is one of the server's.
    func knownApps(_ app: String, access: Access) async throws -> [String] {
        let apps = try await (insights.apps())
        guard apps.contains(app) else {
            throw DashboardError(.notFound, "This server has no app named \(app).")
        }
        return access.visible(apps)
    }

    // MARK: - Sessions

    /// The request's live session and its person, if its cookie opens one.
    func access(_ request: Request) async throws -> Access? {
        guard let value = Self.cookieValue(Self.cookie, request) else { return nil }
        return try await signIns.access(cookie: value, now: Date().timeIntervalSince1970)
    }

    /// Runs a page; a refusal becomes an HTML page with its status, a database that does not
    /// answer a 503 page, anything else a 500 page (logged without the request).
    func page(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let error as DashboardError {
            RequestOutcome.record(code: "refused")
            var response = Self.html(Self.messagePage(error.title, error.message), status: error.status)
            if let wait = error.retryAfter { response.headers[.retryAfter] = String(wait) }
            return response
        } catch let error where DatabaseUnavailable.covers(error) {
            let unavailable = DatabaseUnavailable.from(error, operation: .read)
            RequestOutcome.record(code: "unavailable", cause: unavailable.description)
            var response = Self.html(
                Self.messagePage(
                    "Unavailable", APIError.unavailable(unavailable).message.capitalizedFirst + "."),
                status: .serviceUnavailable)
            response.headers[.retryAfter] = "1"
            return response
        } catch {
            RequestOutcome.record(code: "internal", cause: String(reflecting: error))
            return Self.html(
                Self.messagePage("Failed", "The server failed; try again."), status: .internalServerError)
        }
    }

    /// The cookie is `Secure` when the request came over TLS to the balancer in front (which says so
    /// in `X-Forwarded-Proto`); the server itself listens in plain HTTP on a private network.
    ///
    /// A chain of proxies appends to the header (`https, http`): the first value is the client's
    /// side. The standard `Forwarded: proto=https` (RFC 7239) is read the same way.
    static func isSecure(_ request: Request) -> Bool {
        if let forwarded = request.headers[.xForwardedProto] {
            let first = forwarded.split(separator: ",").first ?? ""
            return first.trimmingCharacters(in: .whitespaces).lowercased() == "https"
        }
        if let forwarded = request.headers[.forwarded] {
            let first = forwarded.split(separator: ",").first ?? ""
            return first.split(separator: ";").contains { pair in
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(
                        in: CharacterSet(charactersIn: "\"")
                    ).lowercased()
                }
                return parts.count == 2 && parts[0] == "proto" && parts[1] == "https"
            }
        }
        return false
    }

    // MARK: - Cookies

    /// The dashboard's cookies. Over TLS each is a `__Host-` cookie (`Secure`, `Path=/`, no
    /// `Domain`), which no sibling subdomain can set or shadow; over plain HTTP (development, this
    /// machine) the plain name under `path`.
    static func cookieName(_ base: String, _ request: Request) -> String {
        isSecure(request) ? "__Host-" + base : base
    }

    static func makeCookie(
        _ base: String, value: String, maxAge: Int, path: String = "/dashboard",
        sameSite: Cookie.SameSite = .strict,
        _ request: Request
    ) -> Cookie {
        let secure = isSecure(request)
        return Cookie(
            name: cookieName(base, request), value: value, maxAge: maxAge, path: secure ? "/" : path,
            secure: secure,
            httpOnly: true, sameSite: sameSite)
    }

    /// A cookie that tells the browser to forget `base`.
    static func clearing(_ base: String, _ request: Request, path: String = "/dashboard") -> Cookie {
        let secure = isSecure(request)
        return Cookie(
            name: cookieName(base, request), value: "", expires: Date(timeIntervalSince1970: 0), maxAge: 0,
            path: secure ? "/" : path, secure: secure, httpOnly: true, sameSite: .strict)
    }

    static func cookieValue(_ base: String, _ request: Request) -> String? {
        request.cookies[cookieName(base, request)]?.value
    }

    // MARK: - Answers

    static var contentSecurityPolicy: String { HTMLPage.contentSecurityPolicy }

    static func html(_ page: InsightsPage, status: HTTPResponse.Status = .ok) -> Response {
        var page = page
        if let notice = freshnessNotice, page.notice == nil { page.notice = notice }
        return HTMLPage.response(page, status: status)
    }

    static func download(_ text: String, type: String, name: String) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: type, .cacheControl: "no-store",
                .contentDisposition: "attachment; filename=\"\(name)\"",
                .xContentTypeOptions: "nosniff",
            ],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    static var footer: String { HTMLPage.footer }

    static func messagePage(_ title: String, _ message: String) -> InsightsPage {
        HTMLPage.message(title, message)
    }

    /// The range form, with the query it keeps in links (`from`/`to` of the current range).
    static func rangeForm(_ action: String, _ range: DayRange?) -> InsightsPage.Section {
        .form(
            .init(
                action: action, method: "get",
                fields: [
                    .init(name: "from", label: "From (YYYY-MM-DD)", type: "day", value: range?.first ?? ""),
                    .init(name: "to", label: "To (YYYY-MM-DD)", type: "day", value: range?.last ?? ""),
                ], submit: "Show"))
    }

    static func query(_ range: DayRange?, format: String? = nil, table: String? = nil) -> String {
        var items: [String] = []
        if let range { items += ["from=\(range.first)", "to=\(range.last)"] }
        if let format { items.append("format=\(format)") }
        if let table { items.append("table=\(table)") }
        return items.isEmpty ? "" : "?" + items.joined(separator: "&")
    }

    /// Links to every table of the page as CSV, and to all of them as one JSON document.
    static func exports(_ path: String, _ range: DayRange?, tables: [String]) -> InsightsPage.Section {
        .links(
            "Export these numbers",
            tables.map { .init("CSV: \($0)", href: path + query(range, format: "csv", table: $0)) }
                + [.init("JSON: all", href: path + query(range, format: "json"))])
    }

    static func rangeText(_ range: DayRange?) -> String {
        range.map { "First reaches from \($0.first) to \($0.last) (UTC)" } ?? "All time"
    }

    static func rate(_ part: Int, _ whole: Int) -> Double? { whole > 0 ? Double(part) / Double(whole) : nil }

    /// A flow's start rate: its starts over the app's accounts. Accounts are counted all time, so the
    /// rate is given for all time only; within a range it would divide a range's starts by every
    /// account ever seen.
    static func startRate(_ flow: Insights.FlowSummary, _ app: Insights.AppSummary, range: DayRange?)
        -> Double?
    {
        range == nil ? rate(flow.started, app.accounts) : nil
    }

    static let startRateNote =
        """
        Start rates are starts over all the app's accounts, which are counted all time: \
        within a date range they are left out.
        """

    static func json(_ value: TourValue, name: String) throws -> Response {
        download(try value.jsonText(), type: "application/json", name: name)
    }
}

extension String {
    /// The text with its first letter in capitals.
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
