import TourCodec

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What one account's devices together know about one user-scoped flow: the record the account
/// server keeps and every device converges to.
///
/// Records form a join semilattice: ``merged(with:)`` is the maximum in one total order, so it is
/// commutative, associative and idempotent, and any interleaving, duplication or reordering of
/// pushes ends at the same record. The order, most significant first:
///
/// 1. ``epoch``: how many debug resets the account has seen. A reset starts a new epoch, which
///    outranks everything known before it.
/// 2. ``standing``: not started < shown < skipped < completed. Completed outranks skipped: it
///    says the user saw every step on some device; a skip on another device (usually one that had
///    not heard of the completion) only says that showing was unwanted.
/// 3. ``version``: the app version it finished in, newer first (what Carrier Wave's update prompts
///    compare against).
/// 4. ``at`` and ``device``: when and where this standing was reached, so that two records that
///    differ only there still have one winner.
///
/// ``orderKey`` spells the order as a string whose byte order is the record order; the server
/// merges with that same key in SQL, so both sides apply one rule.
public struct AccountFlowRecord: Equatable, Hashable, Sendable, Comparable {
    public enum Standing: String, Sendable, Codable, CaseIterable, Comparable {
        case notStarted, shown, skipped, completed

        var rank: Int {
            switch self {
            case .notStarted: 0
            case .shown: 1
            case .skipped: 2
            case .completed: 3
            }
        }

        public static func < (lhs: Standing, rhs: Standing) -> Bool { lhs.rank < rhs.rank }

        /// The record a finished flow holds, or nil while not finished.
        public var ending: FlowRecord.Ending? {
            switch self {
            case .skipped: .skipped
            case .completed: .completed
            case .notStarted, .shown: nil
            }
        }
    }

    public var epoch: Int
    public var standing: Standing
    /// The app version the flow finished in; nil unless finished (or when the app reported none).
    public var version: String?
    /// Milliseconds since 1970 when the standing was reached.
    public var at: Int64
    /// The device that reached it.
    public var device: String

    public init(epoch: Int, standing: Standing, version: String? = nil, at: Int64, device: String) {
        self.epoch = epoch
        self.standing = standing
        self.version = version
        self.at = at
        self.device = device
    }

    /// The least record: nothing known.
    public static let nothing = AccountFlowRecord(epoch: 0, standing: .notStarted, at: 0, device: "")

    /// The join: the greater of the two in the record order.
    public func merged(with other: AccountFlowRecord) -> AccountFlowRecord { max(self, other) }

    public static func < (lhs: AccountFlowRecord, rhs: AccountFlowRecord) -> Bool {
        lhs.orderKey < rhs.orderKey
    }

    /// Whether two records say the same thing about the flow (they may differ in when and where).
    public func sameStanding(as other: AccountFlowRecord) -> Bool {
        epoch == other.epoch && standing == other.standing && version == other.version
    }

    /// The record order as a string compared byte by byte (SQL's `COLLATE "C"`): fixed-width
    /// numbers, the version's numeric parts padded, then every field raw so no two different
    /// records share a key. Fields are separated by a space, which sorts below the digits and the
    /// dot, so "2.0" sorts below "2.0.1".
    public var orderKey: String {
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(max(0, value))
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let versionKey =
            version.map { version in
                version.split(separator: ".").map { pad(Int64($0.prefix(18)) ?? 0, 18) }.joined(
                    separator: ".")
            } ?? ""
        return [
            pad(Int64(epoch), 10), String(standing.rank), versionKey.isEmpty ? "" : "v" + versionKey,
            pad(at, 15), version ?? "", device,
        ].joined(separator: " ")
    }

    /// The largest epoch a record may have: far beyond any account's debug resets, and far from
    /// `Int.max`, so that the next epoch (`epoch + 1` on a reset) can never overflow on a device
    /// that adopted the record.
    public static let maximumEpoch = 1_000_000_000
    /// The latest `at`: the year 9999 in milliseconds since 1970.
    public static let maximumAt: Int64 = 253_402_300_799_999

    /// Whether the record is well formed: epoch and time in range, a version only on a finished
    /// record and a dotted number.
    public var problem: String? {
        if epoch < 0 || epoch > Self.maximumEpoch { return "epoch must be 0 to \(Self.maximumEpoch)" }
        if at < 0 || at > Self.maximumAt {
            return "at must be 0 to \(Self.maximumAt) (milliseconds since 1970)"
        }
        if let version {
            if standing.ending == nil { return "only a finished record (skipped, completed) has a version" }
            if !AppVersion.isValid(version) {
                return "version '\(version.quotable)' is not \(AppVersion.rule)"
            }
        }
        if device.count > 128 { return "device must be at most 128 characters" }
        return nil
    }
}

/// The stored and wire form, the same on devices and on the server (both read and write it through
/// TourCodec): `{"epoch": 0, "standing": "completed", "version": "2.5", "at": ..., "device": ...}`.
extension AccountFlowRecord: TourValueCodable {
    public var tourValue: TourValue {
        .members([
            "epoch": .int(epoch), "standing": .string(standing.rawValue),
            "version": version.map(TourValue.string),
            "at": .int(Int(at)), "device": .string(device),
        ])
    }

    public init(tourValue: TourValue) throws {
        let stored = try TourValueReader(tourValue, as: "account record")
        self.init(
            epoch: try stored.int("epoch"), standing: try stored.raw("standing", Standing.self),
            version: try stored.optionalString("version"), at: Int64(try stored.int("at")),
            device: try stored.string("device"))
    }
}

extension FlowState {
    /// The standing this device's state gives the flow. A replay shows the record it will restore:
    /// replaying a finished tour does not make it unfinished.
    public var accountStanding: (standing: AccountFlowRecord.Standing, version: String?) {
        func standing(of record: FlowRecord) -> (AccountFlowRecord.Standing, String?) {
            (record.ending == .completed ? .completed : .skipped, record.version)
        }
        switch self {
        case .notStarted: return (.notStarted, nil)
        case .finished(let record): return standing(of: record)
        case .active(let run):
            if case .finished(let record)? = run.replayOf { return standing(of: record) }
            return (.shown, nil)
        }
    }
}
