import AccountSync
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServerControlPlane
import ServerDatabase
import ServerKit
import TourCodec
import TourCore

/// `/v1/apps/{app}/catalogs`: publishing (its people) and the devices' conditional pull.
package struct CatalogRoutes: AuthorisedRoutes {
    let catalogs: any CatalogRepository
    let guardedRollouts: any GuardedRolloutRepository
    package let controlPlane: ControlPlane
    /// Seconds a device may keep the publications list before it asks again.
    let publicationMaxAge: Int
    let logger: Logger

    /// Where a write's answer is kept under its `Idempotency-Key`, in the write's transaction.
    package let writes: WritableDatabase

    package init(
        catalogs: any CatalogRepository, rollouts: any GuardedRolloutRepository, controlPlane: ControlPlane,
        writes: WritableDatabase, publicationMaxAge: Int, logger: Logger
    ) {
        self.catalogs = catalogs
        self.guardedRollouts = rollouts
        self.controlPlane = controlPlane
        self.writes = writes
        self.publicationMaxAge = publicationMaxAge
        self.logger = logger
    }

    /// The routes, on the group whose ``APIAuthentication`` proves a caller.
    package func add(to router: RouterGroup<AuthenticatedRequestContext>) {
        // The live publications, newest first, each with its document: a device picks the newest
        // whose rollout includes it. An unchanged list costs a 304 (If-None-Match).
        // Devices (an account token), or people of the app.
        requiring(.viewer, to: "reading publications", devicesToo: true, in: router).get(
            "/v1/apps/:app/catalogs"
        ) { request, context in
            await answer {
                let app = try Self.name(context, "app")
                if case .person = context.caller {
                    _ = try context.actor()
                } else {
                    let claims = try deviceClaims(context, app: app)
                    try await refuseIfSignedOut(claims, app: app, account: claims.subject)
                }
                let (live, keys) = (
                    try await catalogs.live(app: app), try await controlPlane.keys.all(app: app)
                )
                let statuses = keys.map { PublicationKeyStatus(id: $0.key.id, retiredAt: $0.key.retiredAt) }
                let tag = Self.entityTag(live, keys: statuses)
                if let given = request.headers[.ifNoneMatch],
                    given.split(separator: ",").contains(where: {
                        $0.trimmingCharacters(in: .whitespaces) == tag
                    })
                {
                    return Response(
                        status: .notModified,
                        headers: [.eTag: tag, .cacheControl: "private, max-age=\(publicationMaxAge)"])
                }
                let body: TourValue = [
                    "app": .string(app), "entityTag": .string(tag),
                    "publications": .list(
                        live.map { entry in
                            var object = entry.tourValue.objectValue ?? [:]
                            object["document"] = .string(entry.document)
                            object["signatures"] = entry.signatures.tourValue
                            return .object(object)
                        }),
                    "keys": statuses.tourValue,
                ]
                var response = Self.json(body)
                response.headers[.eTag] = tag
                // A device asks again at its next launch after this many seconds, not on every command.
                response.headers[.cacheControl] = "private, max-age=\(publicationMaxAge)"
                ServerMetrics.publicationsServed.increment()
                return response
            }
        }
        // Publish (or change the rollout of a published document): admin only.
        requiring(.publisher, to: "publishing", in: router).post("/v1/apps/:app/catalogs") {
            request, context in
            await answer {
                let app = try Self.name(context, "app")
                let actor = try context.actor()
                var request = request
                let body = try await Self.body(&request, upTo: .batch)
                let publication:
                    (
                        text: String, rollout: Int, signatures: [CatalogSignature],
                        guarded: GuardedRollout.Plan?
                    )
                do {
                    let reader = try TourValueReader(
                        TourValue(jsonUTF8: body.readableBytesView), as: "publication")
                    guard let document = reader.value("document") else {
                        throw DecodingError.keyNotFound(
                            MemberKey("document"), .init(codingPath: [], debugDescription: "no document"))
                    }
                    publication.text = try document.stringValue ?? document.jsonText()
                    publication.rollout = try reader.int("rollout")
                    publication.signatures =
                        reader.value("signatures") == nil ? [] : try reader.list("signatures")
                    publication.guarded = try reader.value("guarded").map(Self.guardedPlan)
                } catch let error as APIError {
                    throw error
                } catch {
                    throw APIError.invalid(
                        """
                        the body is {\"document\": a catalog document (object or text), \"rollout\": \
                        0 to 100, \"signatures\": [{\"key\", \"signature\"}], 
                        """
                            + "optionally \"guarded\": \(Self.guardedShape)}: \(Self.describe(error))")
                }
                return try await idempotent(request, body: body, caller: actor.caller) {
                    let outcome = try await catalogs.publish(
                        app: app, text: publication.text, rollout: publication.rollout,
                        signatures: publication.signatures,
                        guarded: publication.guarded, by: actor, at: Date().timeIntervalSince1970)
                    switch outcome {
                    case .stored(let entry):
                        return try Self.written(
                            ["publication": entry.tourValue] as TourValue, status: .created)
                    case .refused(let problems): throw Self.refusal(problems)
                    }
                }
            }
        }
        // Withdraw a publication (roll back): admin only.
        requiring(.publisher, to: "withdrawing", in: router).delete("/v1/apps/:app/catalogs/:version") {
            request, context in
            await answer {
                let app = try Self.name(context, "app")
                let actor = try context.actor()
                let version = try Self.version(context)
                return try await idempotent(request, caller: actor.caller) {
                    let withdrawn = try await catalogs.withdraw(
                        app: app, version: version, by: actor, at: Date().timeIntervalSince1970)
                    guard let withdrawn else {
                        throw APIError(
                            status: .notFound, code: "not_found",
                            message: "\(app) has no live publication of version \(version)")
                    }
                    return try Self.written(["publication": withdrawn.tourValue] as TourValue)
                }
            }
        }
        // The guarded rollouts, each with the guard's looks (the guardrail's interval over time).
        requiring(.viewer, to: "reading guarded rollouts", in: router).get("/v1/apps/:app/rollouts") {
            _, context in
            await answer {
                let app = try Self.name(context, "app")
                _ = try context.actor()
                let rollouts = guardedRollouts
                var list: [TourValue] = []
                for record in try await rollouts.all(app: app) {
                    var object = record.tourValue.objectValue ?? [:]
                    object["looks"] = .list(
                        try await rollouts.looks(app: app, version: record.version, limit: 200).map(
                            \.tourValue))
                    list.append(.object(object))
                }
                return Self.json(["app": .string(app), "rollouts": .list(list)] as TourValue)
            }
        }
        // A person's command to a guarded rollout: pause, resume or end.
        requiring(.publisher, to: "steering a guarded rollout", in: router).post(
            "/v1/apps/:app/rollouts/:version/:command"
        ) { request, context in
            await answer {
                let app = try Self.name(context, "app")
                let actor = try context.actor()
                let version = try Self.version(context)
                guard
                    let command = context.parameters.get("command").flatMap(
                        GuardedRollout.Command.init(rawValue:))
                else {
                    throw APIError(
                        status: .notFound, code: "not_found",
                        message: "a guarded rollout's commands are pause, resume and end")
                }
                return try await idempotent(request, caller: actor.caller) {
                    switch try await guardedRollouts.command(
                        command, app: app, version: version, by: actor, at: Date().timeIntervalSince1970)
                    {
                    case .applied(let record):
                        return try Self.written(["rollout": record.tourValue] as TourValue)
                    case .missing:
                        throw APIError(
                            status: .notFound, code: "not_found",
                            message: "\(app) has no guarded rollout of version \(version)")
                    case .refused(let message):
                        throw APIError(status: .conflict, code: "rollout_state", message: message)
                    }
                }
            }
        }
    }

    /// The path's catalog version: a whole number, 1 or more.
    static func version(_ context: some RequestContext) throws -> Int {
        guard let version = context.parameters.get("version").flatMap(Int.init), version >= 1 else {
            throw APIError.invalid("the version is a whole number, 1 or more")
        }
        return version
    }

    static let guardedShape =
        """
        {\"stages\": [5, 25, 50, 100], \"guard\": \"completion:-2pp\" or \"step:STEP:-1pp\", \"flow\": \
        FLOW (default: the first), 
        """
        + "\"stageMinimumSeconds\": 0 to 7776000, \"stageMinimumSubjects\": 0 or more}"

    /// A publication's guarded-rollout plan from its JSON (``guardedShape``).
    static func guardedPlan(_ value: TourValue) throws -> GuardedRollout.Plan {
        let reader = try TourValueReader(value, as: "guarded rollout")
        let stages = try reader.values("stages").map { value in
            guard let stage = value.intValue else {
                throw APIError.invalid("the stages are whole percentages, as [5, 25, 50, 100]")
            }
            return stage
        }
        let flow = try reader.optionalString("flow") ?? ""
        let text = try reader.string("guard")
        guard let guardrail = GuardedRollout.Guardrail(text, flow: flow) else {
            throw APIError.invalid(
                "the guard is \(GuardedRollout.Guardrail.grammar); got '\(text.prefix(100))'")
        }
        let plan = GuardedRollout.Plan(
            stages: stages, minimumSeconds: try reader.optionalDouble("stageMinimumSeconds") ?? 86_400,
            minimumSubjects: try reader.optionalInt("stageMinimumSubjects") ?? 500, guardrail: guardrail)
        if let problem = plan.problems.first { throw APIError.invalid(problem) }
        return plan
    }

    /// A refused document: every problem, in one message.
    static func refusal(_ problems: [String]) -> APIError {
        APIError(
            status: .unprocessableContent, code: "catalog_refused",
            message:
                """
                the document is refused, nothing changed (\(problems.count) problem\
                \(problems.count == 1 ? "" : "s")): 
                """
                    + problems.joined(separator: "; "))
    }

    /// The list's identity: its versions, fingerprints, rollouts and signatures (each with its
    /// signing key), and the keys' retirements.
    static func entityTag(_ live: [CatalogStore.Entry], keys: [PublicationKeyStatus]) -> String {
        let identity =
            live.map { entry in
                let signatures = entry.signatures.map { "\($0.key)=\($0.signature)" }.joined(separator: "+")
                return "\(entry.version):\(entry.fingerprint):\(entry.rollout):\(signatures)"
            }
            .joined(separator: ",") + "|"
            + keys.map { "\($0.id):\($0.retiredAt.map { String($0) } ?? "")" }.joined(separator: ",")
        return "\"" + CatalogStore.fingerprint(identity) + "\""
    }
}
