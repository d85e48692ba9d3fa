import AccountSync
import Foundation
import Hummingbird
import ServerDatabase
import TourCodec

/// A push's validation (the rules devices check themselves) and the request bodies and answers of
/// the API.
extension Routes {
    /// Checks the whole batch before anything is written, by the rules devices check themselves
    /// (``SyncAPI/problem(with:)-(PushBatch)``): a refused batch changes nothing, and the refusal
    /// names the row (`seq`) a device sets aside.
    static func validate(_ batch: PushBatch) throws {
        if let problem = SyncAPI.problem(with: batch) {
            throw APIError.invalid(problem.message, seq: problem.seq)
        }
        if let rule = testOnlyRefusal {
            let unnamed = rule.hasPrefix("unnamed:")
            let event = unnamed ? String(rule.dropFirst("unnamed:".count)) : rule
            if let item = batch.items.first(where: { $0.event == event }) {
                throw APIError.invalid(
                    "item seq \(item.seq): events named \(event) are refused (a test-only rule)",
                    seq: unnamed ? nil : item.seq)
            }
        }
    }

    /// A rule a newer server might add, for the tests of devices setting a refused row aside:
    /// debug builds refuse rows of the event `ONBOARDING_TEST_REFUSE_EVENT` names (naming the row,
    /// or, written `unnamed:EVENT`, the way an older server refuses: the whole push). Release
    /// builds have no such rule.
    static let testOnlyRefusal: String? = {
        #if DEBUG
            ProcessInfo.processInfo.environment["ONBOARDING_TEST_REFUSE_EVENT"].flatMap {
                $0.isEmpty ? nil : $0
            }
        #else
            nil
        #endif
    }()

    static func body(_ request: inout Request) async throws -> ByteBuffer {
        do {
            return try await request.collectBody(upTo: SyncAPI.maxBodyBytes)
        } catch {
            throw APIError(
                status: .contentTooLarge, code: "too_large",
                message: "a request body is at most \(SyncAPI.maxBodyBytes) bytes")
        }
    }

    /// Runs a handler; an ``APIError`` becomes its JSON answer, a ``DatabaseUnavailable`` a 503
    /// with `Retry-After` saying why, anything else a 500. The code and cause go to the request's
    /// log line (``RequestLog``), never the request's body or headers.
    func answer(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let error as APIError {
            RequestOutcome.record(code: error.code)
            return Self.error(error)
        } catch let error where DatabaseUnavailable.covers(error) {
            let unavailable = DatabaseUnavailable.from(error, operation: .read)
            RequestOutcome.record(code: "unavailable", cause: unavailable.description)
            return Self.error(Self.unavailable(unavailable))
        } catch is Overloaded {
            RequestOutcome.record(code: "overloaded", cause: "push queue_full")
            return Self.error(Self.overloaded)
        } catch {
            RequestOutcome.record(code: "internal", cause: String(reflecting: error))
            return Self.error(
                APIError(
                    status: .internalServerError, code: "internal", message: "the server failed; try again"))
        }
    }

    /// How long a device's pull may wait for PostgreSQL: under the devices' own 5 s timeout, so
    /// they hear a 503 rather than nothing. Reports scan more and may take longer.
    static let requestDeadline = ReadOnlyDatabase.requestDeadline
    static let reportDeadline = ReadOnlyDatabase.reportDeadline

    /// Pushes arrive faster than they are written: shed at once, nothing stored.
    static let overloaded = APIError(
        status: .serviceUnavailable, code: "overloaded",
        message: "the server is busy and stored nothing; try again", retryAfter: 1)

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
                "the database connection was lost while it ran; it may have been stored, and sending it again is safe"
        case .deadline:
            what =
                error.operation == .push
                ? "the database did not answer in time; the push may have been stored, and sending it again is safe"
                : "the database did not answer in time"
        case .commitUnconfirmed:
            what = "the database did not confirm the commit in time; it may have been applied"
        case .shuttingDown: what = "this server is stopping"
        default: what = "the database does not answer"
        }
        return APIError(
            status: .serviceUnavailable, code: "unavailable", message: "\(what); try again", retryAfter: 1)
    }

    /// An answer in its one wire form (TourCodec's JSON, as the devices write theirs).
    static func json(_ value: some TourValueRepresentable, status: HTTPResponse.Status = .ok) -> Response {
        json(value.tourValue, status: status)
    }

    static func json(_ value: TourValue, status: HTTPResponse.Status = .ok) -> Response {
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

    static func error(_ error: APIError) -> Response {
        var response = json(
            ErrorBody(code: error.code, message: error.message, seq: error.seq), status: error.status)
        if let wait = error.retryAfter { response.headers[.retryAfter] = String(wait) }
        return response
    }

    static func describe(_ error: any Error) -> String {
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
}
