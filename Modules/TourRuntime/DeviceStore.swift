import AccountSync
import Haptics
import Permissions
import Persistence
import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The device's onboarding database as the layers above the runtime see it (the CLI, an app's
/// settings or debug screen): opened once, a user's stored state, the journal decoded (never its
/// columns), and the stored flows of another file for a release forecast. Nothing above the
/// runtime imports `Persistence` or holds an `OnboardingDatabase`: this facade is the whole of what
/// they may ask, so a change to how rows are stored stops here (`LayeringTests` checks the
/// imports). A few plain value types of `Persistence` travel in its answers under the names below.
public final class DeviceStore: Sendable {
    let database: OnboardingDatabase

    private init(_ database: OnboardingDatabase) { self.database = database }

    /// Opens (creating and migrating) the database at `path`. With `createsFolder`, a missing
    /// folder is made (the per-product default); an explicit path's folder must exist.
    ///
    /// - Throws: ``StoreError`` naming the file and what is wrong with it.
    public static func open(path: String, createsFolder: Bool = false) throws -> DeviceStore {
        DeviceStore(try OnboardingDatabase.open(path: path, createsFolder: createsFolder))
    }

    /// Whether opening it created the file.
    public var createdFile: Bool { database.createdFile }

    /// Every published catalog this device refused, oldest first (an append-only journal).
    public func catalogRefusals(app: String) throws -> [OnboardingDatabase.CatalogRefusal] {
        try database.catalogRefusals(app: app)
    }

    /// What the device remembers for the app (permission statuses, device facts), by key.
    public func deviceValues(app: String) throws -> [String: TourValue] {
        try database.deviceValues(app: app)
    }

    /// The user's stored flow state and product domain state, refused by name when a newer release
    /// wrote its domain state in a format `product` does not read.
    public func stored(_ key: SessionKey, of product: Product) throws -> StoredSession {
        try TourSession.prepared(database.session(key, scopes: product.scopes), product)
    }

    /// The app's journal, oldest first (one user's with `user`), with facts derived once for rows
    /// written before 0.6.0 by replaying them through `engine`.
    ///
    /// - Throws: ``StoreError`` naming a row whose effects or facts do not read.
    public func journal(app: String, user: String? = nil, engine: TourEngine) throws -> [JournalEntry] {
        try JournalFacts.derive(app: app, engine: engine, in: database)
        return try database.journal(app: app, user: user).map(JournalEntry.init)
    }

    /// The stored flows of `app` in the database file at `path`, read from an in-memory copy taken
    /// with SQLite's backup API: the file is never migrated or written, even while an app has it
    /// open. Nothing is created when there is no file.
    public static func storedFlows(inCopyOf path: String, app: String) throws -> [String: [FlowID: FlowState]]
    {
        try OnboardingDatabase.snapshot(of: path).storedFlows(app: app)
    }

    /// This file's install id: the subject of install-scoped rollouts (made on first use).
    public func installID() throws -> String { try database.installID() }

    /// What is at `path` (a file, a folder, nothing), asked before a file is opened or read.
    public static func kind(of path: String) -> PathKind { FileStatus(path) }

    /// `path` as an absolute path, for people to find the file.
    public static func absolutePath(_ path: String) -> String { FileStatus.absolutePath(path) }
}

/// One journal row as the layers above the runtime read it: decoded, never its stored columns.
public struct JournalEntry: Equatable, Sendable {
    public var id: Int64
    public var time: Date
    public var user: String
    public var flow: String?
    public var step: String?
    /// The event's short name (`next`, `appLaunched`) and what it did, in prose.
    public var event: String
    public var outcome: String
    public var effects: [TourEffect]
    /// The facts of kinds this build knows; nil for a row written before facts (0.6.0) and not
    /// derived since.
    public var facts: [TourFact]?
    /// The catalog version that reduced the event (1 for rows written before versions).
    public var catalogVersion: Int
    /// The fingerprint of the catalog document that reduced it, for rows written since 0.9.
    public var catalogFingerprint: String?
    /// The accessibility settings the event was reduced with (from the row's stored context;
    /// the defaults for a row whose context does not say).
    public var accessibility: AccessibilitySettings

    /// The row decoded. - Throws: ``StoreError`` naming the row when its effects or facts do not read.
    public init(_ row: JournalRow) throws {
        id = row.id
        time = row.time
        user = row.user
        flow = row.flow
        step = row.step
        event = row.event
        outcome = row.outcome
        do {
            effects = try [TourEffect](tourValue: TourValue(jsonText: row.effectsJSON))
        } catch {
            throw StorageError("journal row \(row.id)'s effects do not read: \(error)")
        }
        facts = try row.storedFacts()
        catalogVersion = row.catalogVersion ?? 1
        catalogFingerprint = row.catalogFingerprint
        // The context is what the engine was given; a row that cannot be read as an object
        // (none has been written so) counts as the defaults rather than failing the report.
        let context = (try? TourValue(jsonText: row.contextJSON))?.objectValue ?? [:]
        accessibility = AccessibilitySettings(context)
    }
}

/// The storage types the facade's answers are made of, named here so that callers need no
/// import of `Persistence`.
public typealias StoreError = StorageError
public typealias StoredSession = Session
public typealias PathKind = FileStatus
/// Where an account's syncing stands on this device (``TourSession/syncStatus()``).
public typealias AccountSyncStatus = SyncStatus

extension TourSession {
    /// A session on the device's store.
    public init(
        product: Product, user: String, store: DeviceStore, haptics: any HapticPlayer = SilentHaptics(),
        permissions: any PermissionProvider = StubPermissionProvider(), time: TimeSource = .wall,
        deviceFacts: [String: TourValue] = [:], sync transport: (any SyncTransport)? = nil,
        budget: FamilyBudget? = nil,
        deviceKind: String? = nil, budgetExchangeInterval: TimeInterval = 300,
        observe: @escaping @Sendable (TourEffect) -> Void = { _ in }
    ) {
        self.init(
            product: product, user: user, database: store.database, haptics: haptics,
            permissions: permissions, time: time,
            deviceFacts: deviceFacts, sync: transport, budget: budget, deviceKind: deviceKind,
            budgetExchangeInterval: budgetExchangeInterval, observe: observe)
    }
}

// MARK: - Installs and consent

extension DeviceStore {
    /// The device setting that says whether analytics facts may leave the device
    /// (`--analytics on|off`; Docs/Privacy.md).
    public static let analyticsKey = "analytics"

    /// Whether facts may be sent: unless the device's setting says `off`.
    public static func analyticsAllowed(_ values: [String: TourValue]) -> Bool {
        values[analyticsKey]?.stringValue != "off"
    }

    public func analyticsAllowed(app: String) throws -> Bool {
        Self.analyticsAllowed(try deviceValues(app: app))
    }

    /// Sets the device's analytics consent for `app`, kept in the file.
    public func setAnalytics(_ allowed: Bool, app: String) throws {
        try database.setDeviceValue(app: app, key: Self.analyticsKey, value: .string(allowed ? "on" : "off"))
    }

    /// The device setting that keeps the locale a command asked for (`--locale`), as a phone keeps
    /// its language: later commands show that locale until another is asked for.
    public static let localeKey = "locale"

    /// The locale asked for last on this device for `app`, when one was.
    public func rememberedLocale(app: String) throws -> LocaleTag? {
        try deviceValues(app: app)[Self.localeKey]?.stringValue.flatMap(LocaleTag.init)
    }

    /// Keeps `locale` as the device's locale for `app`.
    public func setLocale(_ locale: LocaleTag, app: String) throws {
        try database.setDeviceValue(app: app, key: Self.localeKey, value: .string(locale.rawValue))
    }

    /// The install credential of `app`, kept in this file's secret store sealed under a key that is
    /// not in the file (`keyFile`, mode 0600, made on first use; on iOS the Keychain holds both).
    public func installCredentials(app: String, keyFile: String?) -> any InstallCredentialStore {
        SealedCredentialStore(database: database, app: app, keyFile: keyFile)
    }
}

/// ``InstallCredentialStore`` in the SQLite file's `secret_store`, sealed by ``SealedSecrets``.
struct SealedCredentialStore: InstallCredentialStore {
    let database: OnboardingDatabase
    let app: String
    /// Nil for an in-memory database: the key lives as long as the process.
    let keyFile: String?
    static let name = "install-credential"
    private static let processKey = SealedSecrets.newKeyBytes()

    func load() throws -> InstallCredential? {
        guard let sealed = try database.sealedSecret(app: app, name: Self.name) else { return nil }
        // A box that does not open (the key file lost or replaced) is as good as none: enroll again.
        guard let text = try sealer(creating: false)?.open(sealed)?.reveal(),
            let credential = try? InstallCredential(jsonUTF8: Array(text.utf8))
        else { return nil }
        return credential
    }

    func save(_ credential: InstallCredential) throws {
        guard let sealer = try sealer(creating: true) else {
            throw StorageError("no sealing key for the install credential")
        }
        try database.storeSealedSecret(
            app: app, name: Self.name, sealed: try sealer.seal(Secret(credential.storedText)), at: Date())
    }

    func forget() throws { try database.removeSealedSecret(app: app, name: Self.name) }

    private func sealer(creating: Bool) throws -> SealedSecrets? {
        guard let keyFile else { return try SealedSecrets(keyBytes: Self.processKey) }
        if let bytes = KeyFile.read(keyFile) { return try SealedSecrets(keyBytes: bytes) }
        guard creating else { return nil }
        return try SealedSecrets(keyBytes: try KeyFile.create(keyFile))
    }
}
