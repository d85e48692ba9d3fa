import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServerDatabase
import Synchronization
import TourCodec

/// What a request's handler says of its outcome for the log line: the refusal's code and, for a
/// failure, its cause (``RequestLog``).
package final class RequestOutcome: Sendable {
    private let state = Mutex<(code: String?, cause: String?)>((nil, nil))
    @TaskLocal static var current: RequestOutcome?

    /// Records `code` and `cause` of the request this task serves.
    package static func record(code: String, cause: String? = nil) { current?.set(code: code, cause: cause) }

    func set(code: String, cause: String?) { state.withLock { $0 = (code, cause ?? $0.cause) } }

    var code: String? { state.withLock { $0.code } }
    var cause: String? { state.withLock { $0.cause } }
}

/// The outermost middleware: every request is answered once, with an `X-Request-ID`, and leaves
/// one log line with its id, method, route (the pattern, never the path: a path names accounts
/// and installs), app, status, duration and, for a refusal or a failure, its code and cause, each
/// on one line. What no handler answered (a path no route takes, an error thrown past a handler)
/// is answered here: JSON under `/v1` and anywhere else, an HTML page under `/dashboard`.
package struct RequestLog<Context: RequestContext>: RouterMiddleware, APIAnswering {
    package init() {}

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let id = RequestID.accepting(request.headers[.xRequestID]) ?? RequestID.make()
        var context = context
        context.logger[metadataKey: "request_id"] = "\(id)"
        let outcome = RequestOutcome()
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await RequestLogContext.$requestID.withValue(id) {
                try await RequestOutcome.$current.withValue(outcome) { try await next(request, context) }
            }
        } catch {
            response = Self.answer(error, to: request, outcome: outcome)
        }
        response.headers[.xRequestID] = id
        let route = context.endpointPath ?? "NotFound"
        var metadata: Logger.Metadata = [
            "method": "\(request.method)", "route": "\(route == "NotFound" ? "(no route)" : route)",
            "status": "\(response.status.code)",
            "ms": "\(String(format: "%.1f", (ContinuousClock.now - started).seconds * 1000))",
        ]
        if let app = context.parameters.get("app") { metadata["app"] = "\(app.oneLine)" }
        if let code = outcome.code { metadata["code"] = "\(code)" }
        if let cause = outcome.cause { metadata["cause"] = "\(cause.oneLine)" }
        switch response.status.code {
        case 500...:
            context.logger.log(
                level: response.status == .serviceUnavailable ? .warning : .error, "request",
                metadata: metadata)
        default: context.logger.info("request", metadata: metadata)
        }
        return response
    }

    /// An error no handler answered, as an answer.
    static func answer(_ error: any Error, to request: Request, outcome: RequestOutcome) -> Response {
        let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
        let code = status == .notFound ? "not_found" : status.code >= 500 ? "internal" : "invalid_request"
        let message =
            status == .notFound
            ? """
            no route \(request.method) \(request.uri.path.prefix(200)); the API is under /v1 and the \
            dashboard under /dashboard (Docs/API.md)
            """
            : status.code >= 500 ? "the server failed; try again" : "the request is not one this server takes"
        outcome.set(code: code, cause: status.code >= 500 ? DatabaseUnavailable.describe(error) : nil)
        if request.uri.path.hasPrefix("/dashboard") {
            return HTMLPage.response(
                HTMLPage.message(status == .notFound ? "Not found" : "Refused", message), status: status)
        }
        return Self.error(APIError(status: status, code: code, message: message))
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
