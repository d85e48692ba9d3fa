#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The stored form of a flow's state: explicit keys and a format number, written by hand so that
/// renaming a Swift property never changes stored data.
///
/// Format 2 (since 0.6.0):
///
///     {"format": 2, "status": "notStarted", "pendingStart": 1767603600.0}
///     {"format": 2, "status": "active", "run": {"plan": [...], "position": 1, "fields": {...},
///      "gates": {...}, "performed": [...], "deadline": ..., "activation": 3, "catalogVersion": 1,
///      "replayOf": {"status": "completed", "version": "2.5"}}}
///     {"format": 2, "status": "completed", "version": "2.5"}
///
/// Evolving it: a later release may add keys. Readers ignore keys they do not know, and a new key
/// is read with `decodeIfPresent` and a default, so rows written before it still load (tested by
/// `StoredRecordTests`). Changing the meaning of a key is a new format number with a converter
/// here; format 1 (the synthesized form of 0.1 to 0.5, no "format" key) is read below.
extension FlowState: Codable {
    public static let storedFormat = 2

    enum Key: String, CodingKey {
        case format, status, pendingStart, version, run
        // Format 1 only.
        case plan, position, fields, gates, performed, deadline, activation, finishedInVersion, replayOf
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(Self.storedFormat, forKey: .format)
        try container.encode(status.rawValue, forKey: .status)
        switch self {
        case .notStarted(let start):
            try container.encodeIfPresent(start?.timeIntervalSince1970, forKey: .pendingStart)
        case .active(let run):
            try container.encode(run, forKey: .run)
        case .finished(let record):
            try container.encodeIfPresent(record.version, forKey: .version)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let format = try container.decodeIfPresent(Int.self, forKey: .format) ?? 1
        guard format <= Self.storedFormat else {
            throw DecodingError.dataCorruptedError(
                forKey: .format, in: container,
                debugDescription: "flow state format \(format) is newer than this build reads (\(Self.storedFormat))")
        }
        let status = try container.decode(FlowStatus.self, forKey: .status)
        if format == 1 {
            self = try Self.legacy(status, container)
            return
        }
        switch status {
        case .notStarted:
            self = .notStarted(
                pendingStart: try container.decodeIfPresent(Double.self, forKey: .pendingStart).map(
                    Date.init(timeIntervalSince1970:)))
        case .active:
            self = .active(try container.decode(FlowRun.self, forKey: .run))
        case .completed, .skipped:
            self = .record(status: status, version: try container.decodeIfPresent(String.self, forKey: .version))
        }
    }

    /// The synthesized form of releases 0.1 to 0.5: every run field present whatever the status.
    private static func legacy(_ status: FlowStatus, _ container: KeyedDecodingContainer<Key>) throws -> FlowState {
        let version = try container.decodeIfPresent(String.self, forKey: .finishedInVersion)
        switch status {
        case .notStarted:
            return .notStarted(
                pendingStart: try container.decodeIfPresent(Double.self, forKey: .pendingStart).map(
                    Date.init(timeIntervalSince1970:)))
        case .completed, .skipped:
            return .record(status: status, version: version)
        case .active:
            struct Snapshot: Decodable {
                var status: FlowStatus
                var finishedInVersion: String?
            }
            let snapshot = try container.decodeIfPresent(Snapshot.self, forKey: .replayOf)
            return .active(
                FlowRun(
                    plan: try container.decodeIfPresent([StepID].self, forKey: .plan) ?? [],
                    position: try container.decodeIfPresent(Int.self, forKey: .position) ?? 0,
                    fields: try container.decodeIfPresent([String: TourValue].self, forKey: .fields) ?? [:],
                    gates: try container.decodeIfPresent([String: GateStatus].self, forKey: .gates) ?? [:],
                    performed: try container.decodeIfPresent([String].self, forKey: .performed) ?? [],
                    deadline: try container.decodeIfPresent(Double.self, forKey: .deadline).map(
                        Date.init(timeIntervalSince1970:)),
                    activation: try container.decodeIfPresent(Int.self, forKey: .activation) ?? 0,
                    // Every catalog before versioned catalogs is version 1.
                    catalogVersion: 1,
                    replayOf: snapshot.map { snapshot in
                        let before = FlowState.record(status: snapshot.status, version: snapshot.finishedInVersion)
                        if case .finished(let record) = before { return .finished(record) }
                        return .notStarted
                    }))
        }
    }
}

extension FlowRun: Codable {
    enum Key: String, CodingKey {
        case plan, position, fields, gates, performed, deadline, activation, catalogVersion, replayOf
    }

    enum BeforeKey: String, CodingKey { case status, version }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(plan, forKey: .plan)
        try container.encode(position, forKey: .position)
        try container.encode(fields, forKey: .fields)
        try container.encode(gates, forKey: .gates)
        try container.encode(performed, forKey: .performed)
        try container.encodeIfPresent(deadline?.timeIntervalSince1970, forKey: .deadline)
        try container.encode(activation, forKey: .activation)
        try container.encode(catalogVersion, forKey: .catalogVersion)
        if let replayOf {
            var before = container.nestedContainer(keyedBy: BeforeKey.self, forKey: .replayOf)
            try before.encode(replayOf.status.rawValue, forKey: .status)
            if case .finished(let record) = replayOf { try before.encodeIfPresent(record.version, forKey: .version) }
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        var replayOf: FlowRecord.Before?
        if container.contains(.replayOf) {
            let before = try container.nestedContainer(keyedBy: BeforeKey.self, forKey: .replayOf)
            let status = try before.decode(FlowStatus.self, forKey: .status)
            if case .finished(let record) = FlowState.record(
                status: status, version: try before.decodeIfPresent(String.self, forKey: .version))
            {
                replayOf = .finished(record)
            } else {
                replayOf = .notStarted
            }
        }
        self.init(
            plan: try container.decode([StepID].self, forKey: .plan),
            position: try container.decode(Int.self, forKey: .position),
            fields: try container.decodeIfPresent([String: TourValue].self, forKey: .fields) ?? [:],
            gates: try container.decodeIfPresent([String: GateStatus].self, forKey: .gates) ?? [:],
            performed: try container.decodeIfPresent([String].self, forKey: .performed) ?? [],
            deadline: try container.decodeIfPresent(Double.self, forKey: .deadline).map(
                Date.init(timeIntervalSince1970:)),
            activation: try container.decode(Int.self, forKey: .activation),
            catalogVersion: try container.decodeIfPresent(Int.self, forKey: .catalogVersion) ?? 1,
            replayOf: replayOf)
    }
}
