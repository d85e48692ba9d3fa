import AccountSync
import Foundation
import HTTPTypes
import Hummingbird
import ServerDatabase
import TourCodec

/// A refused request: its status, a stable code and one message that says what is allowed.
package struct APIError: Error {
    package var status: HTTPResponse.Status
    package var code: String
    package var message: String
    /// Seconds to wait, sent as `Retry-After` (a 429 or a 503).
    package var retryAfter: Int? = nil
    /// The pushed row refused, when one is (a device sets it aside and pushes the rest).
    package var seq: Int64? = nil

    package init(
        status: HTTPResponse.Status, code: String, message: String, retryAfter: Int? = nil, seq: Int64? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.seq = seq
    }

    package static func invalid(_ message: String, seq: Int64? = nil) -> APIError {
        APIError(status: .badRequest, code: "invalid_request", message: message, seq: seq)
    }
}

extension APIError {
    /// More arrives than the server answers (the push queue full, or its limit of requests in
    /// flight reached, ``RequestAdmission``): shed at once, nothing stored.
    package static let overloaded = APIError(
        status: .serviceUnavailable, code: "overloaded",
        message: "the server is busy and stored nothing; try again",
        retryAfter: 1)

    /// The answer's body, `{"error": {"code", "message"}}` in its one wire form (TourCodec's JSON).
    package var body: [UInt8] {
        // Only strings and an integer: nothing here can fail to encode.
        (try? ErrorBody(code: code, message: message, seq: seq).tourValue.jsonUTF8()) ?? []
    }

    /// A 503 that says what happened and whether anything may have been stored.
    package static func unavailable(_ error: DatabaseUnavailable) -> APIError {
        let what: String
        switch error.reason {
        case .waitedForWriter: what = "every writer was busy for the push's whole wait; nothing was stored"
        case .waitedForConnection: what = "the database gave no connection in time; nothing was done"
        case .noConnection: what = "the database cannot be reached; nothing was done"
        case .rolledBack:
            what = "the database cancelled the request (a lock or a timeout held it); nothing was stored"
        case .connectionLost:
            what =
                """
                the database connection was lost while it ran; it may have been stored, \
                and sending it again is safe
                """
        case .deadline:
            what =
                error.operation == .push
                ? """
                the database did not answer in time; the push may have been stored, \
                and sending it again is safe
                """
                : "the database did not answer in time"
        case .commitUnconfirmed:
            what = "the database did not confirm the commit in time; it may have been applied"
        case .shuttingDown: what = "this server is stopping"
        default: what = "the database does not answer"
        }
        return APIError(
            status: .serviceUnavailable, code: "unavailable", message: "\(what); try again", retryAfter: 1)
    }
}

/// A push the queue sheds: it arrived when the queue was full (``APIAnswering/overloaded``).
public struct Overloaded: Error {
    public init() {}
}

/// The request bodies and answers of the API, for every feature's routes and middleware: each
/// refusal is `{"error": {"code", "message"}}` with its status and changes nothing.
package protocol APIAnswering: Sendable {}

/// How large a request's body may be, by what the route takes: a route reads no more than its
/// largest honest request, so a body sent to be large costs the server that much at most (before
/// authentication too, on the public enrollment route).
package enum BodyLimit: Sendable {
    /// A push's journal rows or a catalog document with its signatures: ``SyncAPI/maxBodyBytes``.
    case batch
    /// A month of display-budget counts (31 days, each under 300 bytes): 64 KiB.
    case budget
    /// A few named fields (a person, a key, an enrollment, a sign-out): 16 KiB.
    case fields

    package var bytes: Int {
        switch self {
        case .batch: SyncAPI.maxBodyBytes
        case .budget: 64 << 10
        case .fields: 16 << 10
        }
    }
}

extension APIAnswering {
    /// The request's body, at most `limit`; a larger one is refused (413) unread past it.
    package static func body(_ request: inout Request, upTo limit: BodyLimit) async throws -> ByteBuffer {
        do {
            return try await request.collectBody(upTo: limit.bytes)
        } catch {
            throw APIError(
                status: .contentTooLarge, code: "too_large",
                message: "this route's request body is at most \(limit.bytes) bytes")
        }
    }

    /// Runs a handler; an ``APIError`` becomes its JSON answer, a ``DatabaseUnavailable`` a 503
    /// with `Retry-After` saying why, anything else a 500. The code and cause go to the request's
    /// log line (``RequestLog``), never the request's body or headers.
    package func answer(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let error as APIError {
            RequestOutcome.record(code: error.code)
            return Self.error(error)
        } catch let error where DatabaseUnavailable.covers(error) {
            let unavailable = DatabaseUnavailable.from(error, operation: .read)
            RequestOutcome.record(code: "unavailable", cause: unavailable.description)
            return Self.error(APIError.unavailable(unavailable))
        } catch is Overloaded {
            RequestOutcome.record(code: "overloaded", cause: "push queue_full")
            return Self.error(.overloaded)
        } catch {
            RequestOutcome.record(code: "internal", cause: String(reflecting: error))
            return Self.error(
                APIError(
                    status: .internalServerError, code: "internal", message: "the server failed; try again"))
        }
    }

    /// How long a device's pull may wait for PostgreSQL: under the devices' own 5 s timeout, so
    /// they hear a 503 rather than nothing. Reports scan more and may take longer.
    package static var requestDeadline: Duration { ReadOnlyDatabase.requestDeadline }
    package static var reportDeadline: Duration { ReadOnlyDatabase.reportDeadline }

    /// An answer in its one wire form (TourCodec's JSON, as the devices write theirs).
    package static func json(_ value: some TourValueRepresentable, status: HTTPResponse.Status = .ok)
        -> Response
    {
        json(value.tourValue, status: status)
    }

    package static func json(_ value: TourValue, status: HTTPResponse.Status = .ok) -> Response {
        // Every answer is made of finite numbers (counts, seconds); a non-finite one would be a bug
        // here, answered as a failure rather than as JSON that is not JSON.
        guard let bytes = try? value.jsonUTF8() else {
            return error(
                APIError(
                    status: .internalServerError, code: "internal", message: "the server failed; try again"))
        }
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    package static func error(_ error: APIError) -> Response {
        var response = Response(
            status: error.status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: error.body)))
        if let wait = error.retryAfter { response.headers[.retryAfter] = String(wait) }
        return response
    }

    package static func describe(_ error: any Error) -> String {
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

    /// A path's name (`app`, `account`, `flow`...), when it is one a device may send.
    package static func name(_ context: some RequestContext, _ parameter: String) throws -> String {
        let value = context.parameters.get(parameter) ?? ""
        guard SyncAPI.isValidName(value) else {
            throw APIError.invalid("the \(parameter) id must be \(SyncAPI.nameRule)")
        }
        return value
    }
}
