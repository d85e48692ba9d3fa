import TourCodec

/// The journal's JSON form of an event: an object tagged by `type`, stable across releases because
/// old journal rows must keep replaying. `{"type": "actionPerformed", "action": "next", "parameters": {}}`.
extension TourEvent: TourValueCodable, JSONTextWritable {
    public var tourValue: TourValue { .members(storedMembers) }

    /// The same text as `tourValue.jsonText()`, from the same members (the journal writes the event
    /// of every row).
    public func writeJSON(to writer: inout JSONTextWriter) throws(JSONTextError) {
        try writer.write(members: Array(storedMembers))
    }

    /// The stored form's members.
    private var storedMembers: KeyValuePairs<String, TourValue?> {
        // Keys in byte order: written as they come.
        switch self {
        case .appLaunched(let version): ["type": "appLaunched", "version": .optional(version)]
        case .signal(let name): ["name": .string(name), "type": "signal"]
        case .featureVisited(let place): ["place": .string(place), "type": "featureVisited"]
        case .actionPerformed(let action, let parameters):
            [
                "action": .string(action), "parameters": .object(parameters.mapValues(TourValue.string)),
                "type": "actionPerformed",
            ]
        case .gateAnswered(let gate, let status):
            ["gate": .string(gate), "status": .string(status.rawValue), "type": "gateAnswered"]
        case .clockAdvanced: ["type": "clockAdvanced"]
        case .domainEvent(let name, let payload):
            ["name": .string(name), "payload": .object(payload), "type": "domainEvent"]
        case .replayRequested(let flow): ["flow": .optional(flow?.rawValue), "type": "replayRequested"]
        case .resetRequested(let flow): ["flow": .optional(flow?.rawValue), "type": "resetRequested"]
        case .accountRecordLearned(let flow, let record):
            ["flow": .string(flow.rawValue), "record": record.tourValue, "type": "accountRecordLearned"]
        }
    }

    public init(tourValue: TourValue) throws {
        let stored = try TourValueReader(tourValue, as: "event")
        switch try stored.string("type") {
        case "appLaunched": self = .appLaunched(version: try stored.optionalString("version"))
        case "signal": self = .signal(try stored.string("name"))
        case "featureVisited": self = .featureVisited(try stored.string("place"))
        case "actionPerformed":
            self = .actionPerformed(
                try stored.string("action"),
                parameters: try stored.object("parameters").mapValues { value in
                    guard case .string(let text) = value else {
                        throw TourValueReader.mismatch(
                            "event: a parameter as text", value, path: [MemberKey("parameters")])
                    }
                    return text
                })
        case "gateAnswered":
            self = .gateAnswered(try stored.string("gate"), try stored.raw("status", GateStatus.self))
        case "clockAdvanced": self = .clockAdvanced
        case "domainEvent":
            self = .domainEvent(try stored.string("name"), payload: try stored.object("payload"))
        case "replayRequested": self = .replayRequested(try stored.optionalRaw("flow", FlowID.self))
        case "resetRequested": self = .resetRequested(try stored.optionalRaw("flow", FlowID.self))
        case "accountRecordLearned":
            self = .accountRecordLearned(
                try stored.raw("flow", FlowID.self), try stored.decode("record", AccountFlowRecord.self))
        case let other:
            throw DecodingError.dataCorrupted(
                .init(codingPath: [MemberKey("type")], debugDescription: "unknown event type \(other)"))
        }
    }
}
