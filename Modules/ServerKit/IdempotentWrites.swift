import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import ServerDatabase
import ServerTokens
import TourCodec

/// An answer of a write, kept whole (status, type, location, body) so that the same request sent
/// again with its `Idempotency-Key` gets it again (``Idempotency``).
package struct WrittenAnswer: StoredAnswer {
    var status: HTTPResponse.Status
    var contentType: String
    var location: String?
    var body: [UInt8]
    /// It is a first answer given again.
    var replayed = false

    init(status: HTTPResponse.Status, contentType: String, location: String? = nil, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.location = location
        self.body = body
    }

    var response: Response {
        var headers: HTTPFields = [.contentType: contentType]
        if let location { headers[.location] = location }
        if replayed { headers[.idempotentReplayed] = "true" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    package var storedBytes: [UInt8] {
        (try? TourValue.members([
            "status": .int(status.code), "contentType": .string(contentType),
            "location": location.map(TourValue.string),
            "body": .string(Data(body).base64EncodedString()),
        ]).jsonUTF8()) ?? []
    }

    package init(storedBytes: [UInt8]) throws {
        let reader = try TourValueReader(TourValue(jsonUTF8: storedBytes), as: "kept answer")
        status = HTTPResponse.Status(code: try reader.int("status"))
        contentType = try reader.string("contentType")
        location = try reader.optionalString("location")
        body = Array(Data(base64Encoded: try reader.string("body")) ?? Data())
        replayed = true
    }
}

/// Routes that write: each write is one transaction on `writes`, its answer kept under the caller's
/// `Idempotency-Key` (sealed with `tokens`' keys).
package protocol IdempotentWrites: APIAnswering {
    var tokens: TokenSigner { get }
    var writes: WritableDatabase { get }
}

extension IdempotentWrites {
    /// A JSON answer to keep (``WrittenAnswer``).
    package static func written(_ value: TourValue, status: HTTPResponse.Status = .ok) throws -> WrittenAnswer
    {
        WrittenAnswer(status: status, contentType: "application/json", body: try value.jsonUTF8())
    }

    /// Runs a request's write in one transaction (the stores' writes inside it join it). With an
    /// `Idempotency-Key`, its answer is kept with the transaction and the same request sent again
    /// by the same caller gets it (``Idempotency``); the same key with another request is refused
    /// (422). A commit PostgreSQL did not confirm is answered 503 `commit_unconfirmed`, which
    /// says it may have happened: sent again with its key, the request learns which.
    package func idempotent(
        _ request: Request, body: ByteBuffer? = nil, caller: String,
        _ write: @escaping @Sendable () async throws -> WrittenAnswer
    ) async throws -> Response {
        let idempotency = try Self.idempotency(request, body: body, caller: caller, tokens: tokens)
        do {
            return try await writes.write(.write, idempotency: idempotency) { _, _ in try await write()
            }.response
        } catch is IdempotencyKeyReused {
            throw APIError(
                status: .unprocessableContent, code: "idempotency_key_reused",
                message: IdempotencyKeyReused().description)
        } catch let error as DatabaseUnavailable where error.reason == .commitUnconfirmed {
            throw APIError(
                status: .serviceUnavailable, code: "commit_unconfirmed",
                message: idempotency == nil
                    ? """
                    PostgreSQL did not confirm the change in time: it may have been applied; \
                    check before sending it again (an Idempotency-Key makes sending it again safe)
                    """
                    : """
                    PostgreSQL did not confirm the change in time: it may have been applied; \
                    send the same request with the same Idempotency-Key to get its answer
                    """,
                retryAfter: 1)
        }
    }

    /// The request's idempotency, when it carries a key: its caller's pseudonym, the key, and a
    /// hash of its method, path and body.
    package static func idempotency(
        _ request: Request, body: ByteBuffer?, caller: String, tokens: TokenSigner
    ) throws
        -> Idempotency?
    {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        guard Idempotency.isValidKey(key) else {
            throw APIError.invalid("an Idempotency-Key is \(Idempotency.keyRule)")
        }
        var hash = SHA256()
        hash.update(data: Data("\(request.method) \(request.uri.path)\n".utf8))
        if let body { hash.update(data: Data(body.readableBytesView)) }
        return Idempotency(
            scope: tokens.pseudonym(caller, purpose: "idempotency"), key: key,
            fingerprint: ByteText.hex(hash.finalize()),
            seal: { try tokens.seal($0, purpose: "idempotent answer") },
            open: { try tokens.open($0, purpose: "idempotent answer") })
    }
}
