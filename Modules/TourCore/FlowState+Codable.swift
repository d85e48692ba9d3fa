import TourCodec

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The stored form of a flow's state: explicit keys and a format number, written by hand (as a
/// ``TourValue``, see ``TourValueConvertible``) so that renaming a Swift property never changes
/// stored data.
///
/// Format 2 (since 0.6.0):
///
///     {"format": 2, "status": "notStarted", "pendingStart": 1767603600.0}
///     {"format": 2, "status": "active", "run": {"plan": [...], "position": 1, "fields": {...},
///      "gates": {...}, "performed": [...], "deadline": ..., "activation": 3, "catalogVersion": 1,
///      "catalogFingerprint": "9f86d0…", "replayOf": {"status": "completed", "version": "2.5"}}}
///
/// (`catalogFingerprint` since 0.9.0: the SHA-256 of the catalog document the run was written under.)
///     {"format": 2, "status": "completed", "version": "2.5"}
///
/// Evolving it: a later release may add keys. Readers ignore keys they do not know, and a new key
/// is read with `decodeIfPresent` and a default, so rows written before it still load (tested by
/// `StoredRecordTests`). Changing the meaning of a key is a new format number with a converter
/// here; format 1 (the synthesized form of 0.1 to 0.5, no "format" key) is read below.
extension FlowState: TourValueCodable {
    public static let storedFormat = 2

    public var tourValue: TourValue {
        var object: [String: TourValue] = [
            "format": .int(Self.storedFormat), "status": .string(status.rawValue),
        ]
        switch self {
        case .notStarted(let start):
            if let start { object["pendingStart"] = .double(start.timeIntervalSince1970) }
        case .active(let run):
            object["run"] = run.tourValue
        case .finished(let record):
            if let version = record.version { object["version"] = .string(version) }
        }
        return .object(object)
    }

    public init(tourValue: TourValue) throws {
        let stored = try TourValueReader(tourValue, as: "flow state")
        let format = try stored.optionalInt("format") ?? 1
        guard format <= Self.storedFormat else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [MemberKey("format")],
                    debugDescription:
                        "flow state format \(format) is newer than this build reads (\(Self.storedFormat))"))
        }
        let status = try stored.raw("status", FlowStatus.self)
        if format == 1 {
            self = try Self.legacy(status, stored)
            return
        }
        switch status {
        case .notStarted:
            self = .notStarted(
                pendingStart: try stored.optionalDouble("pendingStart").map(Date.init(timeIntervalSince1970:))
            )
        case .active:
            self = .active(try stored.decode("run", FlowRun.self))
        case .completed, .skipped:
            self = .record(status: status, version: try stored.optionalString("version"))
        }
    }

    /// The synthesized form of releases 0.1 to 0.5: every run field present whatever the status.
    private static func legacy(_ status: FlowStatus, _ stored: TourValueReader) throws -> FlowState {
        let version = try stored.optionalString("finishedInVersion")
        switch status {
        case .notStarted:
            return .notStarted(
                pendingStart: try stored.optionalDouble("pendingStart").map(Date.init(timeIntervalSince1970:))
            )
        case .completed, .skipped:
            return .record(status: status, version: version)
        case .active:
            let replayOf = try stored.value("replayOf").map { snapshot -> FlowRecord.Before in
                let before = try TourValueReader(snapshot, as: "replayed record")
                let record = FlowState.record(
                    status: try before.raw("status", FlowStatus.self),
                    version: try before.optionalString("finishedInVersion"))
                if case .finished(let record) = record { return .finished(record) }
                return .notStarted
            }
            let plan = try stored.optionalStrings("plan").map { $0.map(StepID.init(rawValue:)) } ?? []
            return .active(
                FlowRun(
                    plan: plan,
                    position: try stored.optionalInt("position", in: 0...plan.count) ?? 0,
                    fields: try stored.optionalObject("fields") ?? [:],
                    gates: try FlowRun.gates(stored.optionalObject("gates") ?? [:]),
                    performed: try stored.optionalStrings("performed") ?? [],
                    deadline: try stored.optionalDouble("deadline").map(Date.init(timeIntervalSince1970:)),
                    activation: try stored.optionalInt("activation", in: 0...FlowRun.maximumCount) ?? 0,
                    // Every catalog before versioned catalogs is version 1.
                    catalogVersion: 1,
                    replayOf: replayOf))
        }
    }
}

extension FlowRun: TourValueCodable {
    /// The largest activation count (and step index of a fact) a stored row may hold: far beyond
    /// any real run, and far from `Int.max`, since the engine adds one to them.
    public static let maximumCount = 1_000_000_000

    public var tourValue: TourValue {
        var object: [String: TourValue] = [
            "plan": .strings(plan.map({ $0.rawValue })), "position": .int(position),
            "fields": .object(fields),
            "gates": .object(gates.mapValues { .string($0.rawValue) }), "performed": .strings(performed),
            "activation": .int(activation), "catalogVersion": .int(catalogVersion),
        ]
        if let deadline { object["deadline"] = .double(deadline.timeIntervalSince1970) }
        if let catalogFingerprint { object["catalogFingerprint"] = .string(catalogFingerprint) }
        if let replayOf {
            var before: [String: TourValue] = ["status": .string(replayOf.status.rawValue)]
            if case .finished(let record) = replayOf, let version = record.version {
                before["version"] = .string(version)
            }
            object["replayOf"] = .object(before)
        }
        return .object(object)
    }

    public init(tourValue: TourValue) throws {
        let stored = try TourValueReader(tourValue, as: "run")
        var replayOf: FlowRecord.Before?
        if stored.contains("replayOf") {
            let before = try TourValueReader(stored.object["replayOf"] ?? .null, as: "replayed record")
            let status = try before.raw("status", FlowStatus.self)
            if case .finished(let record) = FlowState.record(
                status: status, version: try before.optionalString("version"))
            {
                replayOf = .finished(record)
            } else {
                replayOf = .notStarted
            }
        }
        let plan = try stored.strings("plan").map(StepID.init(rawValue:))
        self.init(
            plan: plan,
            position: try stored.int("position", in: 0...plan.count),
            fields: try stored.optionalObject("fields") ?? [:],
            gates: try Self.gates(stored.optionalObject("gates") ?? [:]),
            performed: try stored.optionalStrings("performed") ?? [],
            deadline: try stored.optionalDouble("deadline").map(Date.init(timeIntervalSince1970:)),
            activation: try stored.int("activation", in: 0...Self.maximumCount),
            catalogVersion: try stored.optionalInt("catalogVersion") ?? 1,
            catalogFingerprint: try stored.optionalString("catalogFingerprint"),
            replayOf: replayOf)
    }

    static func gates(_ object: [String: TourValue]) throws -> [String: GateStatus] {
        try object.mapValues { value in
            guard case .string(let text) = value, let status = GateStatus(rawValue: text) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: [MemberKey("gates")], debugDescription: "run: a gate cannot be \(value)"))
            }
            return status
        }
    }
}

/// The same text as `tourValue.jsonText()`, written straight (a flow's state is written by every
/// event): members in key order, `format` < `pendingStart` < `run` < `status` < `version`.
extension FlowState: JSONTextWritable {
    public func writeJSON(to writer: inout JSONTextWriter) throws(JSONTextError) {
        writer.write(punctuation: "{")
        writer.write(key: "format", first: true)
        writer.write(Self.storedFormat)
        switch self {
        case .notStarted(let start):
            if let start {
                writer.write(key: "pendingStart")
                try writer.write(start.timeIntervalSince1970)
            }
        case .active(let run):
            writer.write(key: "run")
            try run.writeJSON(to: &writer)
        case .finished:
            break
        }
        writer.write(key: "status")
        writer.write(status.rawValue)
        if case .finished(let record) = self, let version = record.version {
            writer.write(key: "version")
            writer.write(version)
        }
        writer.write(punctuation: "}")
    }
}

/// Members in key order: `activation` < `catalogFingerprint` < `catalogVersion` < `deadline` <
/// `fields` < `gates` < `performed` < `plan` < `position` < `replayOf`.
extension FlowRun: JSONTextWritable {
    public func writeJSON(to writer: inout JSONTextWriter) throws(JSONTextError) {
        writer.write(punctuation: "{")
        writer.write(key: "activation", first: true)
        writer.write(activation)
        if let catalogFingerprint {
            writer.write(key: "catalogFingerprint")
            writer.write(catalogFingerprint)
        }
        writer.write(key: "catalogVersion")
        writer.write(catalogVersion)
        if let deadline {
            writer.write(key: "deadline")
            try writer.write(deadline.timeIntervalSince1970)
        }
        writer.write(key: "fields")
        try writer.write(TourValue.object(fields))
        writer.write(key: "gates")
        try writer.write(TourValue.object(gates.mapValues { .string($0.rawValue) }))
        writer.write(key: "performed")
        writer.write(strings: performed)
        writer.write(key: "plan")
        writer.write(punctuation: "[")
        for index in plan.indices {
            if index > 0 { writer.write(punctuation: ",") }
            writer.write(plan[index].rawValue)
        }
        writer.write(punctuation: "]")
        writer.write(key: "position")
        writer.write(position)
        if let replayOf {
            writer.write(key: "replayOf")
            writer.write(punctuation: "{")
            writer.write(key: "status", first: true)
            writer.write(replayOf.status.rawValue)
            if case .finished(let record) = replayOf, let version = record.version {
                writer.write(key: "version")
                writer.write(version)
            }
            writer.write(punctuation: "}")
        }
        writer.write(punctuation: "}")
    }
}
