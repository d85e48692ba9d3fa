import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Stores a service password. On iOS: the Keychain. Nothing else ever sees the clear text.
public protocol CredentialStore: Sendable {
    func save(password: Secret, service: String, account: String) async throws
    func hasPassword(service: String, account: String) async -> Bool
}

/// Attempts a connection to a logging service with the given credentials.
public protocol ServiceConnector: Sendable {
    func connect(service: String, username: String, password: Secret) async -> ConnectionResult
}

public enum ConnectionResult: Sendable, Equatable {
    case connected
    case rejected
    case offline
}

/// Keeps passwords in memory for one process, as a stand-in for the Keychain.
public final class StubCredentialStore: CredentialStore, Sendable {
    private let passwords = Locked<[String: Secret]>([:])

    public init() {}

    public func save(password: Secret, service: String, account: String) async throws {
        passwords.withLock { $0["\(service)/\(account)"] = password }
    }

    public func hasPassword(service: String, account: String) async -> Bool {
        passwords.withLock { $0["\(service)/\(account)"] != nil }
    }

    /// For tests: the stored password's text.
    public func password(service: String, account: String) -> String? {
        passwords.withLock { $0["\(service)/\(account)"]?.reveal() }
    }
}

/// A stand-in for the logging services: offline it reaches nothing; online it accepts any
/// credentials, unless told to reject them all (the CLI's `--answer connection=denied`) or these
/// passwords.
public struct StubServiceConnector: ServiceConnector {
    public var online: Bool
    public var rejectsAll: Bool
    public var rejectedPasswords: Set<String>

    public init(online: Bool, rejectsAll: Bool = false, rejectedPasswords: Set<String> = []) {
        self.online = online
        self.rejectsAll = rejectsAll
        self.rejectedPasswords = rejectedPasswords
    }

    /// As the CLI configures it: `--offline`, and `--answer connection=STATUS` (granted, denied:
    /// credentials rejected, unavailable: no network).
    public init(offline: Bool, answer: GateStatus?) {
        self.init(online: !offline && answer != .unavailable, rejectsAll: answer == .denied)
    }

    public func connect(service: String, username: String, password: Secret) async -> ConnectionResult {
        guard online else { return .offline }
        return rejectsAll || rejectedPasswords.contains(password.reveal()) ? .rejected : .connected
    }
}

/// Carrier Wave's side effects, as its catalog sends them.
public enum CarrierWaveEffect: HandlerEffect, Equatable {
    /// A logging service accepted the credentials: its account name is kept (never the password).
    case serviceConnected(service: String, username: String?)

    public static let kinds = [
        EffectKind(
            "serviceConnected",
            "a service accepted the credentials: its account name is kept (never the password)",
            payload: ["service": .text, "username": .text])
    ]

    public init(_ payload: EffectPayload) throws(EffectError) {
        switch payload.kind {
        case "serviceConnected":
            self = .serviceConnected(
                service: try payload.text("service"), username: payload.optionalText("username"))
        case let other:
            throw EffectError("Carrier Wave has no effect '\(other)'")
        }
    }
}

/// Carrier Wave's domain: the services connected and their account names (never a password).
public struct CarrierWaveHandler: ProductHandler {
    public var declarations: CatalogDeclarations {
        CatalogDeclarations(
            context: [
                .computed("hasConnectedService", .flag, default: false, "a service account is connected"),
                .device(
                    "online", .flag, default: true, remembered: false,
                    "the device has a network now (offline, a connection attempt fails)"),
            ],
            requests: ["connect"])
    }

    public var domainState: DomainStateVocabulary {
        DomainStateVocabulary(
            format: 1,
            [
                .init(
                    "accounts", .object,
                    "each connected service's account name, by service (the password is in the keychain)")
            ])
    }

    let credentials: any CredentialStore
    let connector: any ServiceConnector

    public init(credentials: any CredentialStore, connector: any ServiceConnector) {
        self.credentials = credentials
        self.connector = connector
    }

    public func context(domain: [String: TourValue], now: Date) -> TourContext {
        var context = domain
        context["hasConnectedService"] = .bool(!(domain["accounts"]?.objectValue ?? [:]).isEmpty)
        return context
    }

    public nonisolated(nonsending) func perform(
        request name: String, payload: [String: TourValue], secrets: [String: Secret]
    ) async
        -> GateStatus
    {
        guard name == "connect", let password = secrets["password"] else { return .unavailable }
        let service = payload["service"]?.stringValue ?? "qrz"
        let username = payload["username"]?.stringValue ?? ""
        switch await connector.connect(service: service, username: username, password: password) {
        case .connected:
            do {
                try await credentials.save(password: password, service: service, account: username)
                return .granted
            } catch {
                return .unavailable
            }
        case .rejected: return .denied
        case .offline: return .unavailable
        }
    }

    public func apply(_ effect: CarrierWaveEffect, to domain: inout [String: TourValue], now: Date) {
        switch effect {
        case .serviceConnected(let service, let username):
            var accounts = domain["accounts"]?.objectValue ?? [:]
            accounts[service] = username.map(TourValue.string) ?? .null
            domain["accounts"] = .object(accounts)
        }
    }
}

extension CarrierWaveCatalog {
    public static func product(
        credentials: any CredentialStore = StubCredentialStore(), connector: any ServiceConnector
    ) -> Product {
        Product(
            catalog: catalog, handler: CarrierWaveHandler(credentials: credentials, connector: connector),
            currentVersion: currentVersion)
    }
}
