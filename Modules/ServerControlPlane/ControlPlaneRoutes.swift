import AccountSync
import Foundation
import Hummingbird
import NIOCore
import ServerDatabase
import ServerKit
import TourCodec

/// `/v1/apps/{app}/keys`, `/v1/apps/{app}/people` and `/v1/audit`: an app's publication keys and
/// people, for its owners, and the audit trail (Docs/Server.md, Docs/Security.md).
package struct ControlPlaneRoutes: AuthorisedRoutes {
    /// Who calls (authentication, roles) and the server's signer: not how the routes reach storage.
    package let controlPlane: ControlPlane
    let people: any PeopleRepository
    let keys: any PublicationKeyRepository
    let audit: any AuditRepository
    /// Where a write's answer is kept under its `Idempotency-Key`, in the write's transaction.
    package let writes: WritableDatabase

    package init(
        controlPlane: ControlPlane, people: any PeopleRepository, keys: any PublicationKeyRepository,
        audit: any AuditRepository, writes: WritableDatabase
    ) {
        self.controlPlane = controlPlane
        self.people = people
        self.keys = keys
        self.audit = audit
        self.writes = writes
    }

    /// The people changes and their rules, shared with the dashboard's people page.
    var peopleChanges: PeopleChanges { PeopleChanges(people: people, tokens: controlPlane.tokens) }

    /// The routes, on the group whose ``APIAuthentication`` proves a caller.
    package func add(to router: RouterGroup<AuthenticatedRequestContext>) {
        requiring(.viewer, to: "reading publication keys", in: router).get("/v1/apps/:app/keys") {
            _, context in
            await answer {
                let app = try Self.name(context, "app")
                _ = try context.actor()
                let stored = try await keys.all(app: app)
                return Self.json(["app": .string(app), "keys": .list(stored.map(\.tourValue))] as TourValue)
            }
        }
        requiring(.owner, to: "registering a publication key", in: router).post("/v1/apps/:app/keys") {
            request, context in
            await answer {
                let app = try Self.name(context, "app")
                let actor = try context.actor()
                var request = request
                let body = try await Self.body(&request, upTo: .fields)
                let key: PublicationKey
                do {
                    let reader = try TourValueReader(TourValue(jsonUTF8: body.readableBytesView), as: "key")
                    key = try PublicationKey(app: app, publicKey: try reader.string("publicKey"))
                } catch {
                    throw APIError.invalid(
                        """
                        the body is {\"publicKey\": the raw 32-byte Ed25519 public key, \
                        base64 (onboarding-server keys new prints it)}
                        """
                    )
                }
                return try await idempotent(request, body: body, caller: actor.caller) {
                    let outcome = try await keys.register(
                        key, by: actor, at: Date().timeIntervalSince1970)
                    switch outcome {
                    case .registered(let key):
                        return try Self.written(["key": .string(key.id)] as TourValue, status: .created)
                    case .unchanged(let key), .retired(let key):
                        return try Self.written(["key": .string(key.id)] as TourValue)
                    case .refused(let why):
                        throw APIError(status: .conflict, code: "key_refused", message: why)
                    }
                }
            }
        }
        requiring(.owner, to: "retiring a publication key", in: router).delete("/v1/apps/:app/keys/:key") {
            request, context in
            await answer {
                let app = try Self.name(context, "app")
                let id = try Self.name(context, "key")
                let actor = try context.actor()
                return try await idempotent(request, caller: actor.caller) {
                    let outcome = try await keys.retire(
                        app: app, id: id, by: actor, at: Date().timeIntervalSince1970)
                    switch outcome {
                    case .retired(let key), .unchanged(let key), .registered(let key):
                        return try Self.written(
                            [
                                "key": .string(key.id),
                                "retiredAt": key.retiredAt.map(TourValue.double) ?? .null,
                            ] as TourValue)
                    case .refused(let why): throw APIError(status: .notFound, code: "not_found", message: why)
                    }
                }
            }
        }
        addPeopleRoutes(to: router)
        // An owner of the `app` asked for; without one, an operator.
        let auditors = router.group().add(
            middleware: RequiredRole(
                controlPlane: controlPlane, role: .owner,
                what: { app in app.map { "the audit trail of \($0)" } ?? "the whole audit trail" },
                devicesToo: false))
        auditors.get("/v1/audit") { request, context in
            await answer {
                _ = try context.actor()
                // (Read, as the role was checked for it, by ``RequiredRole``.)
                let app = request.uri.queryParameters.get("app").map { String($0) }
                let filter = try Self.auditFilter(request, app: app)
                let entries = try await audit.list(filter)
                return Self.json(["entries": .list(entries.map(\.tourValue))] as TourValue)
            }
        }
    }

    /// The audit filter of a request: `app` (given), `person`, `before` (an id: the next page),
    /// `limit` (1 to 1,000).
    package static func auditFilter(_ request: Request, app: String?) throws -> AuditLog.Filter {
        let query = request.uri.queryParameters
        var filter = AuditLog.Filter(apps: app.map { [$0] }, includingEveryApp: app == nil)
        if let person = query.get("person"), !person.isEmpty {
            guard person.count <= 200 else {
                throw APIError.invalid("person is a name of at most 200 characters")
            }
            filter.actor = person
        }
        if let before = query.get("before") {
            guard let id = Int64(before), id > 0 else {
                throw APIError.invalid("before is a row id, 1 or more")
            }
            filter.before = id
        }
        if let limit = query.get("limit") {
            guard let count = Int(limit), (1...1000).contains(count) else {
                throw APIError.invalid("limit is 1 to 1000")
            }
            filter.limit = count
        }
        return filter
    }

    private func addPeopleRoutes(to router: RouterGroup<AuthenticatedRequestContext>) {
        requiring(.owner, to: "reading the app's people", in: router).get("/v1/apps/:app/people") {
            _, context in
            await answer {
                let app = try Self.name(context, "app")
                let actor = try context.actor()
                let listed = try await people.list(app: app)
                return Self.json(
                    [
                        "app": .string(app),
                        "people": .list(listed.map { $0.summary(now: Date(), shownTo: actor) }),
                    ] as TourValue)
            }
        }
        // Grant a role in the app (creating the person, whose first credential is answered once).
        let owners = requiring(.owner, to: "changing the app's people", in: router)
        owners.put("/v1/apps/:app/people/:person") { request, context in
            await answer {
                let app = try Self.name(context, "app")
                let name = try Self.name(context, "person")
                let actor = try context.actor()
                var request = request
                let body = try await Self.body(&request, upTo: .fields)
                let role: Role
                let identity: String?
                do {
                    let reader = try TourValueReader(TourValue(jsonUTF8: body.readableBytesView), as: "role")
                    guard let given = Role(rawValue: try reader.string("role")) else {
                        throw APIError.invalid("")
                    }
                    role = given
                    identity = try reader.optionalString("identity")
                    if let identity, identity.isEmpty || identity.count > PeopleChanges.maximumIdentity {
                        throw APIError.invalid("")
                    }
                } catch {
                    throw APIError.invalid(
                        """
                        the body is {\"role\": one of \(Role.names), \"identity\": the identity provider's \
                        claim, optional}
                        """
                    )
                }
                return try await idempotent(request, body: body, caller: actor.caller) {
                    let (person, credential) = try await peopleChanges.grant(
                        role, in: app, to: name, identity: identity, by: actor)
                    var answer = person.summary(now: Date(), shownTo: actor).objectValue ?? [:]
                    // Shown once: kept for a retry only sealed (``Idempotency``).
                    if let credential { answer["credential"] = .string(credential) }
                    return try Self.written(.object(answer), status: credential == nil ? .ok : .created)
                }
            }
        }
        owners.delete("/v1/apps/:app/people/:person") { request, context in
            await answer {
                let app = try Self.name(context, "app")
                let name = try Self.name(context, "person")
                let actor = try context.actor()
                return try await idempotent(request, caller: actor.caller) {
                    try await peopleChanges.remove(name, from: app, by: actor)
                    return try Self.written(
                        ["person": .string(name), "removedFrom": .string(app)] as TourValue)
                }
            }
        }
        requiring(.owner, to: "ending sessions", in: router).post("/v1/apps/:app/people/:person/end-sessions")
        {
            request, context in
            await answer {
                let app = try Self.name(context, "app")
                let name = try Self.name(context, "person")
                let actor = try context.actor()
                return try await idempotent(request, caller: actor.caller) {
                    let ended = try await peopleChanges.endSessions(of: name, app: app, by: actor)
                    return try Self.written(
                        ["person": .string(name), "sessionsEnded": .int(ended)] as TourValue)
                }
            }
        }
    }
}

extension Person {
    /// What lists show of a person: never a credential's text (the server does not have it); of an
    /// operator, to someone who is not one, only their name and role.
    func summary(now: Date, shownTo viewer: Actor) -> TourValue {
        if let everyApp = roles[.everyApp], viewer.person?.isOperator != true {
            return .members(["name": .string(name), "roles": .object(["*": .string(everyApp.rawValue)])])
        }
        let roleNames = roles.map { ($0.key.stored, TourValue.string($0.value.rawValue)) }
        return .members([
            "name": .string(name), "identity": identity.map(TourValue.string),
            "roles": .object(Dictionary(uniqueKeysWithValues: roleNames)),
            "credentials": .list(
                credentials.map { credential in
                    .members([
                        "id": .string(credential.id), "createdAt": .double(credential.createdAt),
                        "expiresAt": .double(credential.expiresAt),
                        "revokedAt": credential.revokedAt.map(TourValue.double),
                        "live": .bool(
                            credential.revokedAt == nil && credential.expiresAt > now.timeIntervalSince1970),
                    ])
                }),
        ])
    }
}
