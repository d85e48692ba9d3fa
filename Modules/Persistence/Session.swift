import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Who a session belongs to: one product, one user.
public struct SessionKey: Hashable, Sendable {
    public var app: String
    public var user: String

    public init(app: String, user: String) {
        self.app = app
        self.user = user
    }

    /// The subject that install-scoped records are stored under.
    public static let installSubject = "@install"

    public func subject(for scope: FlowScope) -> String { scope == .install ? Self.installSubject : user }
}

/// Everything one event may read and change, loaded and saved in one transaction.
public struct Session: Equatable, Sendable {
    /// The flows' states (install-scoped and user-scoped flows together) and the app version.
    public var tour: TourState
    /// The product's domain state for this user (LockedIn's balance, Finite's phases).
    public var domain: [String: TourValue]
    /// What the device knows outside the product: permission statuses the stubs remember.
    public var device: [String: TourValue]
    /// The virtual clock's time, when one is in use.
    public var virtualNow: Date?
    /// What the account's devices together know, when this user syncs with the account server
    /// (nil otherwise: nothing is queued for it).
    public var account: AccountKnowledge?
    /// The format the product's domain state was last written in (``DomainStateVocabulary``); nil
    /// when no release that stores one has written it.
    public var domainFormat: Int?

    public init(
        tour: TourState = TourState(), domain: [String: TourValue] = [:], device: [String: TourValue] = [:],
        virtualNow: Date? = nil
    ) {
        self.tour = tour
        self.domain = domain
        self.device = device
        self.virtualNow = virtualNow
    }
}

/// One journal row to append with the event's commit.
public struct JournalAppend: Sendable {
    public var time: Date
    public var record: JournalRecord
    public var context: TourContext
    public var effects: [TourEffect]
    /// The version of the catalog that reduced the event.
    public var catalogVersion: Int
    /// The fingerprint of the catalog document that reduced it.
    public var catalogFingerprint: String?
    /// For a user who syncs: the row goes to the outbox with the account records it reached.
    public var outbox: [FlowID: AccountFlowRecord]?
    /// The app version the state knew after the event (from the last `appLaunched`).
    public var appVersion: String?
    /// Whether analytics facts of this row may ever leave the device: the consent when it
    /// happened (Docs/Privacy.md). Nil: not known (a tool writing rows outside a product's run).
    public var analyticsAllowed: Bool? = nil
    /// For a row that starts a flow: the locale and device kind it started in, as a JSON object
    /// (pushed with the start, whenever the push happens).
    public var startContextJSON: String? = nil

    public init(
        time: Date, record: JournalRecord, context: TourContext, effects: [TourEffect], catalogVersion: Int,
        catalogFingerprint: String? = nil, outbox: [FlowID: AccountFlowRecord]? = nil,
        appVersion: String? = nil
    ) {
        self.appVersion = appVersion
        self.catalogFingerprint = catalogFingerprint
        self.outbox = outbox
        self.time = time
        self.record = record
        self.context = context
        self.effects = effects
        self.catalogVersion = catalogVersion
    }
}

/// A journal row as stored.
public struct JournalRow: Equatable, Sendable {
    public var id: Int64
    public var time: Date
    public var app: String
    public var user: String
    public var flow: String?
    public var step: String?
    public var event: String
    public var outcome: String
    public var eventJSON: String
    public var contextJSON: String
    public var effectsJSON: String
    /// The catalog version that reduced the event; nil for rows written before 0.6.0 (version 1).
    public var catalogVersion: Int?
    /// The facts as stored (a JSON array); nil for rows written before 0.6.0 until
    /// ``JournalFacts/derive(app:engine:in:)`` fills them.
    public var factsJSON: String?
    /// The fingerprint of the catalog document that reduced the event; nil for rows written before
    /// 0.9.0 (migration `v5-journal-catalog-fingerprint`).
    public var catalogFingerprint: String?

    /// The row's facts; facts of kinds this build does not know (written by a newer release) are
    /// left out, and so is a row whose facts cannot be read (for a view; replay and sync use
    /// ``storedFacts()``, which says why). Nil when the row has none recorded.
    public var facts: [TourFact]? {
        guard factsJSON != nil else { return nil }
        return (try? storedFacts()) ?? []
    }

    /// The row's facts, nil when it has none recorded. A fact of a kind this build does not know
    /// (a newer release wrote it) is left out, as a reader of an older version must; a list that
    /// is not JSON, or a fact of a known kind that does not read, throws naming the row.
    public func storedFacts() throws -> [TourFact]? {
        guard let factsJSON else { return nil }
        guard let list = (try? JSONCoding.value(from: factsJSON))?.listValue else {
            throw StorageError("journal row \(id)'s facts are not a JSON list")
        }
        return try list.compactMap { value -> TourFact? in
            do {
                return try TourFact(tourValue: value)
            } catch {
                guard let kind = value.objectValue?["fact"]?.stringValue, !TourFact.kinds.contains(kind)
                else {
                    throw StorageError("journal row \(id) holds a fact that does not read: \(error)")
                }
                return nil
            }
        }
    }
}

/// What this device knows about one account's flows: its own id, and the join of everything it
/// reached and learned from the account server, per user-scoped flow.
public struct AccountKnowledge: Equatable, Sendable {
    public var device: String
    public var records: [FlowID: AccountFlowRecord]

    public init(device: String, records: [FlowID: AccountFlowRecord] = [:]) {
        self.device = device
        self.records = records
    }

    public subscript(flow: FlowID) -> AccountFlowRecord { records[flow] ?? .nothing }
}
