import AccountSync
import Foundation
import Hummingbird
import NIOCore
import TourCodec
import TourCore

/// `/v1/apps/{app}/catalogs`: publishing (admin) and the devices' conditional pull.
extension Routes {
    func addCatalogRoutes(to router: Router<ServerRequestContext>) {
        // The live publications, newest first, each with its document: a device picks the newest
        // whose rollout includes it. An unchanged list costs a 304 (If-None-Match).
        router.get("/v1/apps/:app/catalogs") { request, context in
            await answer {
                let app = try Self.name(context, "app")
                // Devices (an account token), or people of the app.
                if let token = ControlPlane.bearer(request), (try? await tokens.verify(token, now: Date()))?.scope == .person {
                    _ = try await controlPlane.actor(request, context, app: app, role: .viewer, to: "reading publications")
                } else {
                    let claims = try await authorize(request, context, app: app)
                    try await refuseIfSignedOut(claims, app: app, account: claims.subject)
                }
                let (live, keys) = (try await catalogs.live(app: app), try await controlPlane.keys.all(app: app))
                let statuses = keys.map { PublicationKeyStatus(id: $0.key.id, retiredAt: $0.key.retiredAt) }
                let tag = Self.entityTag(live, keys: statuses)
                if let given = request.headers[.ifNoneMatch], given.split(separator: ",").contains(where: {
                    $0.trimmingCharacters(in: .whitespaces) == tag
                }) {
                    return Response(status: .notModified, headers: [.eTag: tag, .cacheControl: "private, max-age=\(publicationMaxAge)"])
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
        router.post("/v1/apps/:app/catalogs") { request, context in
            await answer {
                let app = try Self.name(context, "app")
                let actor = try await controlPlane.actor(request, context, app: app, role: .publisher, to: "publishing")
                var request = request
                let body = try await Self.body(&request)
                let publication: (text: String, rollout: Int, signatures: [CatalogSignature])
                do {
                    let reader = try TourValueReader(TourValue(jsonUTF8: body.readableBytesView), as: "publication")
                    guard let document = reader.value("document") else {
                        throw DecodingError.keyNotFound(MemberKey("document"), .init(codingPath: [], debugDescription: "no document"))
                    }
                    publication.text = try document.stringValue ?? document.jsonText()
                    publication.rollout = try reader.int("rollout")
                    publication.signatures = reader.value("signatures") == nil ? [] : try reader.list("signatures")
                } catch {
                    throw APIError.invalid(
                        "the body is {\"document\": a catalog document (object or text), \"rollout\": 0 to 100, \"signatures\": [{\"key\", \"signature\"}]}: \(Self.describe(error))")
                }
                return try await idempotent(request, body: body, caller: actor.caller) {
                    let outcome = try await catalogs.publish(
                        app: app, text: publication.text, rollout: publication.rollout, signatures: publication.signatures,
                        by: actor, at: Date().timeIntervalSince1970)
                    switch outcome {
                    case .stored(let entry): return try Self.written(["publication": entry.tourValue] as TourValue, status: .created)
                    case .refused(let problems): throw Self.refusal(problems)
                    }
                }
            }
        }
        // Withdraw a publication (roll back): admin only.
        router.delete("/v1/apps/:app/catalogs/:version") { request, context in
            await answer {
                let app = try Self.name(context, "app")
                let actor = try await controlPlane.actor(request, context, app: app, role: .publisher, to: "withdrawing")
                guard let version = context.parameters.get("version").flatMap(Int.init), version >= 1 else {
                    throw APIError.invalid("the version is a whole number, 1 or more")
                }
                return try await idempotent(request, caller: actor.caller) {
                    let withdrawn = try await catalogs.withdraw(app: app, version: version, by: actor, at: Date().timeIntervalSince1970)
                    guard let withdrawn else {
                        throw APIError(
                            status: .notFound, code: "not_found", message: "\(app) has no live publication of version \(version)")
                    }
                    return try Self.written(["publication": withdrawn.tourValue] as TourValue)
                }
            }
        }
    }

    /// A refused document: every problem, in one message.
    static func refusal(_ problems: [String]) -> APIError {
        APIError(
            status: .unprocessableContent, code: "catalog_refused",
            message: "the document is refused, nothing changed (\(problems.count) problem\(problems.count == 1 ? "" : "s")): "
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
            .joined(separator: ",") + "|" + keys.map { "\($0.id):\($0.retiredAt.map { String($0) } ?? "")" }.joined(separator: ",")
        return "\"" + SHA256Hasher.hex(identity.utf8) + "\""
    }
}
