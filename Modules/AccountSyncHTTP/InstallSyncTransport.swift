import AccountSync
import TourCore

#if canImport(Darwin)
    import Foundation
#else
    import FoundationEssentials
#endif

/// Sync for an app without sign-in: the install is the subject (Docs/Server.md, "Installs").
///
/// On its first request it enrolls the install with the app's enrollment key (public, compiled into
/// the product) and keeps the credential the server answers in `store` (sealed in the database's
/// secret store on the CLI); every later request, in this process or another, uses the kept one.
/// Pushes, pulls and the budget go to the install's subject (`install.<id>`) whatever account name
/// the caller passes: the device's local user names its rows, the install names the server's. A
/// credential the server no longer accepts (expired, its key dropped) is forgotten, and the install
/// enrolls again once.
public struct InstallSyncTransport: SyncTransport {
    public let server: URL
    private let enrollmentKey: String
    private let store: any InstallCredentialStore
    private let timeout: TimeInterval
    private let kept = Locked<InstallCredential?>(nil)

    public init(
        server: URL, enrollmentKey: String, store: any InstallCredentialStore, timeout: TimeInterval = 5
    ) {
        self.server = server
        self.enrollmentKey = enrollmentKey
        self.store = store
        self.timeout = timeout
    }

    public var syncsAsInstall: Bool { true }

    public func push(app: String, account: String, _ batch: PushBatch) async throws(SyncError) -> PushAck {
        try await withCredential(app: app) { transport, subject async throws(SyncError) in
            try await transport.push(app: app, account: subject, batch)
        }
    }

    public func pull(app: String, account: String) async throws(SyncError) -> AccountRecords {
        try await withCredential(app: app) { transport, subject async throws(SyncError) in
            try await transport.pull(app: app, account: subject)
        }
    }

    public func catalogs(app: String, ifNoneMatch entityTag: String?) async throws(SyncError) -> CatalogPull {
        try await withCredential(app: app) { transport, _ async throws(SyncError) in
            try await transport.catalogs(app: app, ifNoneMatch: entityTag)
        }
    }

    public func budget(app: String, account: String, _ exchange: BudgetExchange) async throws(SyncError)
        -> AccountBudget
    {
        try await withCredential(app: app) { transport, subject async throws(SyncError) in
            try await transport.budget(app: app, account: subject, exchange)
        }
    }

    /// Runs `body` with the install's credential, enrolling first when there is none (or it is
    /// about to expire), and once more when the server refuses the one kept.
    private func withCredential<T>(
        app: String, _ body: (HTTPSyncTransport, String) async throws(SyncError) -> T
    ) async throws(SyncError) -> T {
        let credential = try await credential(app: app, renew: false)
        do {
            return try await body(
                HTTPSyncTransport(server: server, token: credential.credential, timeout: timeout),
                credential.subject)
        } catch .rejected(let status, let code, let message) where status == 401 {
            // Expired, signed by a dropped key, or revoked (the install's data was erased): a new
            // enrollment, a new subject.
            guard ["token_expired", "unauthorized", "token_revoked"].contains(code) else {
                throw .rejected(status: status, code: code, message: message)
            }
            let fresh = try await self.credential(app: app, renew: true)
            return try await body(
                HTTPSyncTransport(server: server, token: fresh.credential, timeout: timeout), fresh.subject)
        }
    }

    private func credential(app: String, renew: Bool) async throws(SyncError) -> InstallCredential {
        let now = Int64(Date().timeIntervalSince1970)
        if !renew {
            if let held = kept.withLock({ $0 }), held.expires > now + 60 { return held }
            let stored: InstallCredential?
            do { stored = try store.load() } catch {
                throw .localStorage("the install credential could not be read: \(error)")
            }
            if let stored, stored.expires > now + 60 {
                kept.withLock { $0 = stored }
                return stored
            }
        }
        let enrolled: InstallCredential
        do {
            enrolled = try await HTTPSyncTransport(server: server, token: nil, timeout: timeout)
                .enroll(app: app, enrollmentKey: enrollmentKey)
        } catch .rejected(let status, "enrollment_refused", let message) {
            // The server tells an anonymous caller only that the key is not accepted; the app knows
            // its own key, and so what accepts it.
            throw .rejected(
                status: status, code: "enrollment_refused",
                message:
                    """
                    \(message) (onboarding-server enrollment-keys add --app \(app) \(enrollmentKey) accepts \
                    it)
                    """
            )
        }
        do { try store.save(enrolled) } catch {
            throw .localStorage("the install credential could not be kept: \(error)")
        }
        kept.withLock { $0 = enrolled }
        return enrolled
    }
}
