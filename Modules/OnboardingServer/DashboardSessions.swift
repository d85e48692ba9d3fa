import Crypto
import Foundation
import Logging
import PostgresNIO

/// The dashboard's sign-in sessions (migration `v5-dashboard-sessions`). The cookie carries 256
/// random bits; the table keeps only their SHA-256, so neither the database nor its backups hold a
/// session. A session lasts ``lifetime`` or until the admin token it was opened with expires,
/// whichever comes first, and ends at sign-out (its row is deleted).
struct DashboardSessions: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// Eight hours: a working day.
    static let lifetime: Double = 8 * 3600

    struct Session: Equatable, Sendable {
        /// The app an app-scoped admin token limits the session to; nil for every app.
        var app: String?
        var expiresAt: Double
    }

    /// Opens a session; returns the cookie's value.
    func open(app: String?, tokenExpires: Double, now: Double) async throws -> (value: String, session: Session) {
        let value = TokenSigner.base64URL(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
        let session = Session(app: app, expiresAt: min(now + Self.lifetime, tokenExpires))
        try await client.query(
            """
            INSERT INTO dashboard_sessions (id_hash, app, created_at, expires_at)
            VALUES (\(Self.hash(value)), \(app), \(now), \(session.expiresAt))
            """, logger: logger)
        // Expired sessions are removed as new ones open: the table stays the size of the live ones.
        try await client.query("DELETE FROM dashboard_sessions WHERE expires_at <= \(now)", logger: logger)
        return (value, session)
    }

    /// The live session the cookie's value opens, if any: a value never issued, tampered with,
    /// signed out or expired opens none.
    func find(_ value: String, now: Double) async throws -> Session? {
        guard Self.isWellFormed(value) else { return nil }
        let rows = try await client.query(
            "SELECT app, expires_at FROM dashboard_sessions WHERE id_hash = \(Self.hash(value)) AND expires_at > \(now)",
            logger: logger)
        for try await (app, expires) in rows.decode((String?, Double).self) { return Session(app: app, expiresAt: expires) }
        return nil
    }

    func close(_ value: String) async throws {
        guard Self.isWellFormed(value) else { return }
        try await client.query("DELETE FROM dashboard_sessions WHERE id_hash = \(Self.hash(value))", logger: logger)
    }

    /// 43 base64url characters (256 bits), as ``open`` makes them.
    static func isWellFormed(_ value: String) -> Bool {
        value.utf8.count == 43
            && value.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F
            }
    }

    static func hash(_ value: String) -> String {
        SHA256.hash(data: Data(value.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
