import AccountSync
import Foundation
import HTTPTypes
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerControlPlane
import ServerKit
import TourCodec

/// The control plane's pages: an app's people (for its owners) and the audit trail.
extension Dashboard {
    func addPeople(to router: RouterGroup<DashboardRequestContext>) {
        let owners = router.requiring(.owner)
        owners.get("/dashboard/apps/:app/people") { request, context in
            let access = context.access
            let app = try context.app()
            return try await peoplePage(app, access: access, message: nil)
        }
        // Give a role (creating the person: their credential is shown once).
        owners.post("/dashboard/apps/:app/people") { request, context in
            try await changing(request, context) { app, fields, actor, access in
                guard let name = fields["person"], PeopleStore.isValidName(name) else {
                    throw DashboardError(.badRequest, "A person's name is \(SyncAPI.nameRule).")
                }
                guard let role = fields["role"].flatMap(Role.init(rawValue:)) else {
                    throw DashboardError(.badRequest, "The role is one of \(Role.names).")
                }
                let identity = fields["identity"].flatMap { $0.isEmpty ? nil : $0 }
                if let identity, identity.count > PeopleChanges.maximumIdentity {
                    throw DashboardError(
                        .badRequest, "An identity is at most \(PeopleChanges.maximumIdentity) characters.")
                }
                let message = try await formWrite(fields, caller: actor.caller) {
                    let (_, credential) = try await refusalsShown {
                        try await peopleChanges.grant(role, in: app, to: name, identity: identity, by: actor)
                    }
                    guard let credential else { return "\(name) is now \(role.rawValue) of \(app)." }
                    // Shown once: kept for the same form sent again only sealed (``Idempotency``).
                    return
                        """
                        \(name) is new: give them this credential, shown only now (it lasts \
                        \(PeopleStore.defaultDays) days): 
                        """
                            + credential
                }
                return try await peoplePage(app, access: access, message: message)
            }
        }
        owners.post("/dashboard/apps/:app/people/remove") { request, context in
            try await changing(request, context) { app, fields, actor, access in
                let name = try person(fields)
                let message = try await formWrite(fields, caller: actor.caller) {
                    try await refusalsShown { try await peopleChanges.remove(name, from: app, by: actor) }
                    return "\(name) holds no role in \(app) any more."
                }
                return try await peoplePage(app, access: access, message: message)
            }
        }
        owners.post("/dashboard/apps/:app/people/end-sessions") { request, context in
            try await changing(request, context) { app, fields, actor, access in
                let name = try person(fields)
                let message = try await formWrite(fields, caller: actor.caller) {
                    let ended = try await refusalsShown {
                        try await peopleChanges.endSessions(of: name, app: app, by: actor)
                    }
                    return "\(ended) session\(ended == 1 ? "" : "s") of \(name) ended."
                }
                return try await peoplePage(app, access: access, message: message)
            }
        }
        router.get("/dashboard/audit") { request, context in
            let access = context.access
            return try await auditPage(request, access: access)
        }
    }

    /// The people changes and their rules, shared with the `/v1` people routes.
    var peopleChanges: PeopleChanges { PeopleChanges(people: people, tokens: controlPlane.tokens) }

    /// `change`'s refusal (an ``APIError``: not found, forbidden) as the page shows it.
    @discardableResult
    private func refusalsShown<T>(_ change: () async throws -> T) async throws -> T {
        do { return try await change() } catch let error as APIError {
            throw DashboardError(error.status, error.message + ".")
        }
    }

    private func person(_ fields: [String: String]) throws -> String {
        guard let name = fields["person"], PeopleStore.isValidName(name) else {
            throw DashboardError(.badRequest, "Choose a person.")
        }
        return name
    }

    /// A form that changes something of the path's app (that its person holds the role it needs
    /// there, and that it came from a page of this dashboard with the session's anti-forgery token,
    /// are the route groups' checks: ``DashboardRoleGuard``, ``DashboardForgeryGuard``); `body`
    /// gets the app, the form's fields, the actor for the audit trail and the access.
    func changing(
        _ request: Request, _ context: DashboardRequestContext,
        _ body: (String, [String: String], Actor, Access) async throws -> Response
    ) async throws -> Response {
        let access = context.access
        let app = try context.app()
        var request = request
        let fields = try await Self.form(&request)
        let actor = Actor(
            name: access.person.name, source: controlPlane.clients.of(request, context), person: access.person
        )
        return try await body(app, fields, actor, access)
    }

    private func peoplePage(_ app: String, access: Access, message: String?) async throws -> Response {
        let listed = try await people.list(app: app)
        let now = Date().timeIntervalSince1970
        // An operator's identity and credentials are shown to operators only.
        let hidden = { (person: Person) in person.isOperator && !access.person.isOperator }
        let token = InsightsPage.Form.Field(
            name: "form_token", label: "", type: "hidden", value: access.session.formToken)
        var sections: [InsightsPage.Section] = []
        if let message { sections.append(.text(message)) }
        sections.append(
            .table(
                .init(
                    caption: "People of \(app)",
                    columns: ["Person", "Role here", "Every app", "Identity", "Live credentials"],
                    rows: listed.map { person in
                        [
                            .init(person.name), .init(person.roles[.app(app)]?.rawValue ?? "–"),
                            .init(person.roles[.everyApp]?.rawValue ?? "–"),
                            .init(hidden(person) ? "–" : person.identity ?? "–"),
                            hidden(person)
                                ? .init("–")
                                : .number(
                                    person.credentials.filter { $0.revokedAt == nil && $0.expiresAt > now }
                                        .count),
                        ]
                    })))
        let path = "/dashboard/apps/\(app)/people"
        sections.append(
            .form(
                .init(
                    action: path, method: "post",
                    fields: [
                        token, Self.idempotencyFormField(),
                        .init(name: "person", label: "Person", type: "text"),
                        .init(
                            name: "role", label: "Role", type: "text", value: "viewer",
                            options: Role.allCases.map(\.rawValue)),
                        .init(
                            name: "identity", label: "Identity (the provider's email, optional)",
                            type: "text", optional: true),
                    ], submit: "Give the role")))
        let names = listed.filter { $0.roles[.app(app)] != nil }.map(\.name)
        if !names.isEmpty {
            sections.append(
                .form(
                    .init(
                        action: "\(path)/remove", method: "post",
                        fields: [
                            token, Self.idempotencyFormField(),
                            .init(
                                name: "person", label: "Person", type: "text", value: names[0], options: names
                            ),
                        ],
                        submit: "Remove from \(app)")))
        }
        if !listed.isEmpty {
            sections.append(
                .form(
                    .init(
                        action: "\(path)/end-sessions", method: "post",
                        fields: [
                            token, Self.idempotencyFormField(),
                            .init(
                                name: "person", label: "Person", type: "text", value: listed[0].name,
                                options: listed.map(\.name)),
                        ],
                        submit: "End their sessions")))
        }
        sections.append(.links("More", [.init("Audit trail of \(app)", href: "/dashboard/audit?app=\(app)")]))
        return Self.html(
            InsightsPage(
                title: "People of \(app)",
                subtitle:
                    """
                    Roles: viewer (pages and reports), editor (checks), publisher (publish, rollout, \
                    rollback), owner (people, keys, audit)
                    """,
                navigation: [
                    .init("All apps", href: "/dashboard"), .init(app, href: "/dashboard/apps/\(app)"),
                    .init("People", href: path, current: true),
                ],
                signOut: access.session.formToken, sections: sections, footer: Self.footer))
    }

    private func auditPage(_ request: Request, access: Access) async throws -> Response {
        let query = request.uri.queryParameters
        let app = query.get("app").flatMap { $0.isEmpty ? nil : $0 }
        if let app {
            guard SyncAPI.isValidName(app) else {
                throw DashboardError(.badRequest, "The app id must be \(SyncAPI.nameRule).")
            }
            guard access.may(.owner, in: app) else {
                throw DashboardError(.forbidden, "The audit trail of \(app) is for its owners.")
            }
        }
        // Without an app: an operator sees everything; an owner sees the apps they own.
        let owned = access.person.roles.filter { $0.value == .owner }.compactMap { scope, _ -> String? in
            if case .app(let app) = scope { app } else { nil }
        }
        guard
            app != nil || access.person.isOperator && access.person.role(in: nil) == .owner || !owned.isEmpty
        else {
            throw DashboardError(.forbidden, "The audit trail is for owners of an app and for operators.")
        }
        var filter: AuditLog.Filter
        do {
            filter = try ControlPlaneRoutes.auditFilter(request, app: app)
        } catch let error as APIError {
            throw DashboardError(.badRequest, error.message)
        }
        if app == nil, access.person.role(in: nil) != .owner {
            filter.apps = owned
            filter.includingEveryApp = false
        }
        let chosen = filter
        let entries = try await auditTrail.list(chosen)
        let format = try Self.format(request)
        switch format {
        case .csv:
            let csv = CSVTable(
                header: ["id", "time", "actor", "source", "app", "action", "target", "details"],
                rows: entries.map { entry in
                    [
                        .number(Int(entry.id)), .text(Self.isoTime(entry.at)), .text(entry.actor),
                        .text(entry.source),
                        .text(entry.app ?? ""), .text(entry.action), .text(entry.target ?? ""),
                        .text(entry.details),
                    ]
                })
            return Self.download(
                csv.text, type: "text/csv; charset=utf-8", name: "audit\(app.map { "-\($0)" } ?? "").csv")
        case .json:
            return try Self.json(
                .list(entries.map(\.tourValue)), name: "audit\(app.map { "-\($0)" } ?? "").json")
        case .html:
            var base: [String] = []
            if let app { base.append("app=\(app)") }
            if let person = filter.actor,
                let encoded = person.addingPercentEncoding(withAllowedCharacters: .alphanumerics)
            {
                base.append("person=\(encoded)")
            }
            var sections: [InsightsPage.Section] = [
                .form(
                    .init(
                        action: "/dashboard/audit", method: "get",
                        fields: [
                            .init(name: "app", label: "App", type: "text", value: app ?? ""),
                            .init(name: "person", label: "Person", type: "text", value: filter.actor ?? ""),
                        ], submit: "Show")),
                .table(
                    .init(
                        caption: "Audit trail, newest first",
                        columns: ["#", "Time (UTC)", "Who", "From", "App", "What", "On", "Details"],
                        rows: entries.map { entry in
                            [
                                .number(Int(entry.id)), .init(Self.isoTime(entry.at)), .init(entry.actor),
                                .init(entry.source),
                                .init(entry.app ?? "every app"), .init(entry.action),
                                .init(entry.target ?? ""), .init(entry.details),
                            ]
                        })),
            ]
            var links: [InsightsPage.Link] = []
            if entries.count == filter.limit, let last = entries.last {
                links.append(
                    .init(
                        "Older rows",
                        href: "/dashboard/audit?" + (base + ["before=\(last.id)"]).joined(separator: "&")))
            }
            let suffix = base.isEmpty ? "" : "&" + base.joined(separator: "&")
            links += [
                .init("CSV", href: "/dashboard/audit?format=csv" + suffix),
                .init("JSON", href: "/dashboard/audit?format=json" + suffix),
            ]
            sections.append(.links("More", links))
            return Self.html(
                InsightsPage(
                    title: "Audit trail", subtitle: app.map { "Acts on \($0)" } ?? "Every act you may see",
                    navigation: [
                        .init("All apps", href: "/dashboard"),
                        .init("Audit", href: "/dashboard/audit", current: true),
                    ],
                    signOut: access.session.formToken, sections: sections, footer: Self.footer))
        }
    }
}
