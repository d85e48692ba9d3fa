import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The wire format between a device and the account server (`/v1`), shared by both sides so they
/// cannot drift. Every type encodes with explicit keys; new keys are optional.
public enum SyncAPI {
    /// The path prefix of every route.
    public static let version = "v1"
    /// At most this many journal rows in one push.
    public static let maxItemsPerPush = 500
    /// At most this many bytes in one request body.
    public static let maxBodyBytes = 1 << 20
    /// At most this many bytes in one catalog document: published (the API and the command line
    /// alike) and kept by a device, which refuses a larger one before reading it.
    public static let maxDocumentBytes = 256 << 10

    /// App ids, account ids, device ids and flow ids: ``WireName``.
    public static func isValidName(_ text: String) -> Bool { WireName.isValid(text) }

    public static let nameRule = WireName.rule

    public static func accountPath(app: String, account: String) -> String {
        "/\(version)/apps/\(app)/accounts/\(account)"
    }
}

/// One journal row of a device, as pushed: its facts, and the account records of the user-scoped
/// flows it changed. `(device, seq)` is its idempotency key: a retried push changes nothing.
extension SyncAPI {
    /// The latest event time a push may carry: the end of the year 9999 (PostgreSQL's dates, and
    /// the reports' days, stop being meaningful well before theirs do).
    public static let latestTime: Double = 253_402_300_799
}

public struct PushItem: Equatable, Sendable {
    /// The device's journal row id: increasing, never reused.
    public var seq: Int64
    /// When the event happened on the device, seconds since 1970.
    public var time: Double
    /// The event's short name (`next`, `appLaunched`).
    public var event: String
    public var catalogVersion: Int
    /// The row's facts as stored (`{"fact": "stepEntered", "flow": ..., ...}`). Kinds this server
    /// does not know (written by a newer release) are kept and not counted.
    public var facts: [TourValue]
    /// Flow id to the record this device reached with the event.
    public var records: [String: AccountFlowRecord]
    /// The app version that ran the event, when the device knows it (the funnels split by it).
    public var appVersion: String?

    public init(
        seq: Int64, time: Double, event: String, catalogVersion: Int, facts: [TourValue],
        records: [String: AccountFlowRecord], appVersion: String? = nil
    ) {
        self.appVersion = appVersion
        self.seq = seq
        self.time = time
        self.event = event
        self.catalogVersion = catalogVersion
        self.facts = facts
        self.records = records
    }
}

/// `POST /v1/apps/{app}/accounts/{account}/push`.
public struct PushBatch: Equatable, Sendable {
    /// The device: a random id made once per installation (database file).
    public var device: String
    public var items: [PushItem]

    public init(device: String, items: [PushItem]) {
        self.device = device
        self.items = items
    }
}

/// The answer to a push: applied in one transaction, all or nothing.
public struct PushAck: Equatable, Sendable {
    /// Items stored now.
    public var applied: Int
    /// Items the server already had (a retried push).
    public var duplicates: Int
    /// The account's records of the flows the batch touched, after the merge.
    public var records: [String: AccountFlowRecord]

    public init(applied: Int, duplicates: Int, records: [String: AccountFlowRecord]) {
        self.applied = applied
        self.duplicates = duplicates
        self.records = records
    }
}

/// `GET /v1/apps/{app}/accounts/{account}/flows`: the account's record of each flow it has one of.
public struct AccountRecords: Equatable, Sendable {
    public var app: String
    public var account: String
    public var flows: [String: AccountFlowRecord]

    public init(app: String, account: String, flows: [String: AccountFlowRecord]) {
        self.app = app
        self.account = account
        self.flows = flows
    }
}

/// Every error response: `{"error": {"code": "forbidden", "message": "..."}}`.
public struct ErrorBody: Equatable, Sendable {
    public struct Detail: Equatable, Sendable {
        public var code: String
        public var message: String
        /// The pushed row the refusal concerns, when it concerns one.
        public var seq: Int64?
    }

    public var error: Detail

    public init(code: String, message: String, seq: Int64? = nil) {
        error = Detail(code: code, message: message, seq: seq)
    }
}

// MARK: - The wire forms, one each, read and written through TourCodec on both sides

extension PushItem: TourValueCodable {
    public var tourValue: TourValue {
        .members([
            "seq": .int(Int(seq)), "time": .double(time), "event": .string(event),
            "catalogVersion": .int(catalogVersion),
            "facts": .list(facts), "records": .object(records.mapValues(\.tourValue)),
            "appVersion": appVersion.map(TourValue.string),
        ])
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "push item")
        self.init(
            seq: Int64(try wire.int("seq")), time: try wire.double("time"), event: try wire.string("event"),
            catalogVersion: try wire.int("catalogVersion"), facts: try wire.values("facts"),
            records: try wire.map("records"),
            appVersion: try wire.optionalString("appVersion"))
    }
}

extension PushBatch: TourValueCodable {
    public var tourValue: TourValue { ["device": .string(device), "items": items.tourValue] }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "push batch")
        self.init(device: try wire.string("device"), items: try wire.list("items"))
    }
}

extension PushAck: TourValueCodable {
    public var tourValue: TourValue {
        [
            "applied": .int(applied), "duplicates": .int(duplicates),
            "records": .object(records.mapValues(\.tourValue)),
        ]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "push answer")
        self.init(
            applied: try wire.int("applied"), duplicates: try wire.int("duplicates"),
            records: try wire.map("records"))
    }
}

extension AccountRecords: TourValueCodable {
    public var tourValue: TourValue {
        ["app": .string(app), "account": .string(account), "flows": .object(flows.mapValues(\.tourValue))]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "account records")
        self.init(
            app: try wire.string("app"), account: try wire.string("account"), flows: try wire.map("flows"))
    }
}

extension ErrorBody: TourValueCodable {
    public var tourValue: TourValue {
        [
            "error": .members([
                "code": .string(error.code), "message": .string(error.message),
                "seq": error.seq.map { .int(Int($0)) },
            ])
        ]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(
            .object(try TourValueReader(tourValue, as: "error answer").object("error")), as: "error")
        self.init(
            code: try wire.string("code"), message: try wire.string("message"),
            seq: wire.value("seq") == nil ? nil : Int64(try wire.int("seq")))
    }
}

/// Why a sync call failed, as a device sees it.
public enum SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No answer (no network, the server down, a timeout): try again later.
    case unreachable(String)
    /// The server refused the request (4xx): retrying the same request will not help.
    case rejected(status: Int, code: String, message: String)
    /// The server refused what a push carries (400, 413, 422): a rule the device did not check.
    /// `seq` names the row when the server said which; the device sets that row aside.
    case refusedContent(status: Int, seq: Int64?, message: String)
    /// The server failed (5xx): try again later.
    case serverFailed(status: Int, message: String)
    /// This device's own database failed while syncing (a full disk, a row that does not read):
    /// nothing was lost; the rows wait in the outbox.
    case localStorage(String)

    /// Whether trying the same request again later may succeed.
    public var isTransient: Bool {
        switch self {
        case .rejected, .refusedContent: false
        default: true
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let reason): "the account server is unreachable (\(reason))"
        case .rejected(let status, let code, let message):
            "the account server refused the request (\(status) \(code)): \(message)"
        case .refusedContent(let status, _, let message):
            "the account server refused a pushed row (\(status)): \(message)"
        case .serverFailed(let status, let message): "the account server failed (\(status)): \(message)"
        case .localStorage(let reason):
            "this device's database failed while syncing (\(reason)); the rows wait in the outbox"
        }
    }
}

/// `GET /v1/apps/{app}/catalogs`: the live publications, newest first, and the list's entity tag
/// (also the `ETag` header) for the next conditional request.
public struct PublishedCatalogs: Equatable, Sendable {
    public var app: String
    public var publications: [PublishedCatalog]
    public var entityTag: String?
    /// The app's publication keys the server knows, with their retirements (a device only ever
    /// refuses more because of these; it trusts its compiled keys, not these).
    public var keys: [PublicationKeyStatus]

    public init(
        app: String, publications: [PublishedCatalog], entityTag: String? = nil,
        keys: [PublicationKeyStatus] = []
    ) {
        self.app = app
        self.publications = publications
        self.entityTag = entityTag
        self.keys = keys
    }
}

extension PublishedCatalogs: TourValueCodable {
    public var tourValue: TourValue {
        .members([
            "app": .string(app), "publications": publications.tourValue,
            "entityTag": entityTag.map(TourValue.string),
            "keys": keys.isEmpty ? nil : keys.tourValue,
        ])
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "publications")
        self.init(
            app: try wire.string("app"), publications: try wire.list("publications"),
            entityTag: try wire.optionalString("entityTag"),
            keys: wire.value("keys") == nil ? [] : try wire.list("keys"))
    }
}

/// What a conditional pull of the catalogs brought.
public enum CatalogPull: Equatable, Sendable {
    /// The list is the one the entity tag names (a 304), fresh for `maxAge` seconds more.
    case unchanged(maxAge: Int?)
    /// The list now, with its entity tag, fresh for `maxAge` seconds (the server's
    /// `Cache-Control: max-age`; nil when it gave none).
    case changed(PublishedCatalogs, entityTag: String?, maxAge: Int?)

    /// The `max-age` of a `Cache-Control` header's value, when it has one (0 to a year).
    public static func maxAge(cacheControl: String?) -> Int? {
        guard let cacheControl else { return nil }
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map {
                String($0.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
            }
            if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = Int(parts[1]), seconds >= 0
            {
                return min(seconds, 366 * 86_400)
            }
            if parts.first?.lowercased() == "no-cache" || parts.first?.lowercased() == "no-store" { return 0 }
        }
        return nil
    }
}

/// How a device talks to the account server. `AccountSyncHTTP` implements it over HTTP; the iOS
/// apps can use it as is (URLSession) or bring their own.
public protocol SyncTransport: Sendable {
    func push(app: String, account: String, _ batch: PushBatch) async throws(SyncError) -> PushAck
    func pull(app: String, account: String) async throws(SyncError) -> AccountRecords
    /// The app's live catalog publications, unless they are the ones `entityTag` names.
    func catalogs(app: String, ifNoneMatch entityTag: String?) async throws(SyncError) -> CatalogPull
    /// Tells the account's display budget what this device counted and hears what every device did.
    func budget(app: String, account: String, _ exchange: BudgetExchange) async throws(SyncError)
        -> AccountBudget
    /// Whether the device syncs as its install (an app without sign-in, `InstallSyncTransport`)
    /// rather than as a signed-in account: its rollouts and experiments then draw by the install.
    var syncsAsInstall: Bool { get }
}

extension SyncTransport {
    public var syncsAsInstall: Bool { false }

    /// A transport without a catalog service: the device keeps what it has.
    public func catalogs(app: String, ifNoneMatch entityTag: String?) async throws(SyncError) -> CatalogPull {
        throw .unreachable("this transport serves no catalogs")
    }

    /// A transport without the budget service: each device holds to the budget alone.
    public func budget(app: String, account: String, _ exchange: BudgetExchange) async throws(SyncError)
        -> AccountBudget
    {
        throw .unreachable("this transport carries no display budget")
    }
}

/// A device without network (`--offline`): every call is unreachable, so events wait in the outbox.
public struct NoNetwork: SyncTransport {
    /// Whether the device would sync as its install (it keeps drawing by the install offline).
    public let syncsAsInstall: Bool
    public init(asInstall: Bool = false) { syncsAsInstall = asInstall }
    public func push(app: String, account: String, _ batch: PushBatch) async throws(SyncError) -> PushAck {
        throw .unreachable("the device is offline")
    }
    public func pull(app: String, account: String) async throws(SyncError) -> AccountRecords {
        throw .unreachable("the device is offline")
    }
}
