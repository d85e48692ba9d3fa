import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerDatabase
import ServerSyncAPI
import TourCodec

/// The dashboard's changes that PostgreSQL may not confirm in time (publishing, rolling back,
/// people's roles and sessions): each form carries a key of its own (the hidden `idempotency`
/// field, made when the page was drawn), so the same form sent again (the browser's reload, a
/// second click after a 503) gets the first answer and changes nothing (``Idempotency``).
extension Dashboard {
    static let idempotencyField = "idempotency"

    /// The hidden field that makes a form's change safe to send again.
    static func idempotencyFormField() -> InsightsPage.Form.Field {
        .init(name: idempotencyField, label: "", type: "hidden", value: UUID().uuidString.lowercased())
    }

    /// Runs a form's change in one transaction (the stores' writes join it), keeping its answer
    /// under the form's key: what the change said (a message, a place to go), from which the page
    /// is drawn after the commit.
    func formWrite(
        _ fields: [String: String], caller: String, _ write: @escaping @Sendable () async throws -> String
    ) async throws -> String {
        var idempotency: Idempotency?
        if let key = fields[Self.idempotencyField] {
            guard Idempotency.isValidKey(key) else {
                throw DashboardError(.badRequest, "This form is damaged; reload the page.")
            }
            var hash = SHA256()
            for (name, value) in fields.sorted(by: { $0.key < $1.key })
            where name != "form_token" && name != Self.idempotencyField {
                hash.update(data: Data("\(name)=\(value)\n".utf8))
            }
            let tokens = controlPlane.tokens
            idempotency = Idempotency(
                scope: tokens.pseudonym(caller, purpose: "idempotency"), key: key,
                fingerprint: ByteText.hex(hash.finalize()),
                seal: { try tokens.seal($0, purpose: "idempotent answer") },
                open: { try tokens.open($0, purpose: "idempotent answer") })
        }
        do {
            return try await writes.write(.write, idempotency: idempotency) { _, _ in
                FormAnswer(text: try await write())
            }.text
        } catch is IdempotencyKeyReused {
            throw DashboardError(
                .unprocessableContent,
                "This form was already sent with other values; reload the page and send it again.")
        } catch let error as DatabaseUnavailable where error.reason == .commitUnconfirmed {
            throw DashboardError(
                .serviceUnavailable,
                """
                The database did not confirm the change in time: it may have been made. \
                Send the same form again (reload this page and confirm): it gives the first answer and \
                changes nothing twice.
                """,
                retryAfter: 1)
        }
    }
}

/// What a form's change said, kept for the same form sent again.
struct FormAnswer: StoredAnswer {
    var text: String
    init(text: String) { self.text = text }
    var storedBytes: [UInt8] { Array(text.utf8) }
    init(storedBytes: [UInt8]) throws { text = String(decoding: storedBytes, as: UTF8.self) }
}
