import AccountSync
import Crypto
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import ServerInsights
import ServerKit
import ServerTokens
import TourCodec

extension SyncRoutes {
    func addErasureRoutes(to router: RouterGroup<AuthenticatedRequestContext>) {
        for (prefix, isInstall) in [("accounts", false), ("installs", true)] {
            // Erase: an owner of the app (support acting on a person's request).
            requiring(.owner, to: "erasing a subject's data", in: router).delete(
                "/v1/apps/:app/\(prefix)/:\(isInstall ? "install" : "account")"
            ) { request, context in
                await answer {
                    let (app, subject) = try Self.subjectPath(context, install: isInstall)
                    let actor = try context.actor()
                    return try await idempotent(request, caller: actor.caller) {
                        let summary = try await accounts.erase(
                            app: app, subject: subject,
                            pseudonym: tokens.subjectPseudonym(app: app, subject: subject), by: actor,
                            at: Date().timeIntervalSince1970)
                        return try Self.written(summary.tourValue)
                    }
                }
            }
            // Export: the subject itself (its own token or credential), or an owner of the app.
            requiring(.owner, to: "exporting a subject's data", devicesToo: true, in: router).get(
                "/v1/apps/:app/\(prefix)/:\(isInstall ? "install" : "account")/export"
            ) { _, context in
                await answer {
                    let (app, subject) = try Self.subjectPath(context, install: isInstall)
                    if case .person = context.caller {
                        _ = try context.actor()
                    } else {
                        let claims = try deviceClaims(context, app: app)
                        guard claims.scope == (isInstall ? .install : .account), claims.subject == subject
                        else {
                            throw APIError(
                                status: .forbidden, code: "forbidden",
                                message: "this token is not for '\(subject)'")
                        }
                        try await refuseIfSignedOut(claims, app: app, account: subject)
                    }
                    return Self.json(try await (accounts.export(app: app, subject: subject)))
                }
            }
        }
    }

    /// The app and the subject a path names: an account id, or an install id (`install.<id>`).
    static func subjectPath(_ context: some RequestContext, install: Bool) throws -> (String, String) {
        let app = try name(context, "app")
        let id = try name(context, install ? "install" : "account")
        if install {
            let bare = Installs.isInstall(id) ? String(id.dropFirst(Installs.subjectPrefix.count)) : id
            guard bare.count == 32, bare.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
                throw APIError.invalid(
                    """
                    an install id is the 32 lowercase hex digits enrollment answered (with or without \
                    'install.')
                    """
                )
            }
            return (app, Installs.subjectPrefix + bare)
        }
        guard !Installs.isInstall(id) else {
            throw APIError.invalid(
                """
                '\(id.prefix(64))' is an install: use /v1/apps/\(app)/installs/\
                \(id.dropFirst(Installs.subjectPrefix.count))
                """
            )
        }
        return (app, id)
    }
}
