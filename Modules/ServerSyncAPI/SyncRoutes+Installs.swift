import AccountSync
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import ServerKit
import ServerTokens
import TourCodec

extension SyncRoutes {
    /// Public by design: a device without a credential comes here for one, with the app's key.
    func addEnrollmentRoute(to router: Router<ServerRequestContext>) {
        // Enroll an install: the app's enrollment key in, an install credential out. Every attempt,
        // answered or refused, costs one of the source's enrollments (a flood of installs from one
        // address is slowed to the configured rate; a refused key is not worth guessing at).
        router.post("/v1/apps/:app/installs") { request, context in
            await answer {
                let app = try Self.name(context, "app")
                let source = controlPlane.clients.of(request, context)
                let now = Date().timeIntervalSince1970
                if let wait = enrollments.retryAfter(source: source, now: now) {
                    let seconds = Int(wait.rounded(.up))
                    throw APIError(
                        status: .tooManyRequests, code: "rate_limited",
                        message: "too many enrollments from this address; try again in \(seconds) s",
                        retryAfter: seconds)
                }
                enrollments.failed(source: source, now: now)
                var request = request
                let body = try await Self.body(&request, upTo: .fields)
                let key: String
                do {
                    let reader = try TourValueReader(
                        TourValue(jsonUTF8: body.readableBytesView), as: "enrollment")
                    key = try reader.string("enrollmentKey")
                } catch {
                    throw APIError.invalid(
                        "the body is {\"enrollmentKey\": the app's enrollment key}: \(Self.describe(error))")
                }
                guard Installs.isValidKey(key) else {
                    throw APIError.invalid("an enrollment key is \(Installs.keyRule)")
                }
                // An install sends its enrollment again with the same Idempotency-Key until it has an
                // answer: it gets the install it was given, not a second one.
                return try await idempotent(request, body: body, caller: "enrollment:\(app)") {
                    let install = try await enrollmentStore.enroll(app: app, key: key, at: now)
                    guard let install else {
                        // The caller is anonymous: it learns only that the key is not accepted.
                        throw APIError(
                            status: .forbidden, code: "enrollment_refused",
                            message: "\(app) does not accept this enrollment key")
                    }
                    let expires = Int64(now) + Int64(Installs.credentialDays) * 86_400
                    let credential = await tokens.sign(
                        TokenClaims(
                            subject: Installs.subjectPrefix + install, scope: .install, app: app,
                            issuedAt: now, expires: expires))
                    ServerMetrics.installsEnrolled.increment()
                    return try Self.written(
                        Enrollment(install: install, credential: credential, expires: expires).tourValue,
                        status: .created)
                }
            }
        }
    }
}
