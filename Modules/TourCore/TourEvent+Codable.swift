import TourCodec

/// The journal's JSON form of an event: an object tagged by `type`, stable across releases because
/// old journal rows must keep replaying. `{"type": "actionPerformed", "action": "next", "parameters": {}}`.
extension TourEvent: TourValueCodable {
    public var tourValue: TourValue {
        switch self {
        case .appLaunched(let version): ["type": "appLaunched", "version": .optional(version)]
        case .signal(let name): ["type": "signal", "name": .string(name)]
        case .featureVisited(let place): ["type": "featureVisited", "place": .string(place)]
        case .actionPerformed(let action, let parameters):
            ["type": "actionPerformed", "action": .string(action), "parameters": .object(parameters.mapValues(TourValue.string))]
        case .gateAnswered(let gate, let status):
            ["type": "gateAnswered", "gate": .string(gate), "status": .string(status.rawValue)]
        case .clockAdvanced: ["type": "clockAdvanced"]
        case .domainEvent(let name, let payload): ["type": "domainEvent", "name": .string(name), "payload": .object(payload)]
        case .replayRequested(let flow): ["type": "replayRequested", "flow": .optional(flow?.rawValue)]
        case .resetRequested(let flow): ["type": "resetRequested", "flow": .optional(flow?.rawValue)]
        case .accountRecordLearned(let flow, let record):
            ["type": "accountRecordLearned", "flow": .string(flow.rawValue), "record": record.tourValue]
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
                        throw TourValueReader.mismatch("event: a parameter as text", value, path: [MemberKey("parameters")])
                    }
                    return text
                })
        case "gateAnswered": self = .gateAnswered(try stored.string("gate"), try stored.raw("status", GateStatus.self))
        case "clockAdvanced": self = .clockAdvanced
        case "domainEvent": self = .domainEvent(try stored.string("name"), payload: try stored.object("payload"))
        case "replayRequested": self = .replayRequested(try stored.optionalRaw("flow", FlowID.self))
        case "resetRequested": self = .resetRequested(try stored.optionalRaw("flow", FlowID.self))
        case "accountRecordLearned":
            self = .accountRecordLearned(try stored.raw("flow", FlowID.self), try stored.decode("record", AccountFlowRecord.self))
        case let other:
            throw DecodingError.dataCorrupted(
                .init(codingPath: [MemberKey("type")], debugDescription: "unknown event type \(other)"))
        }
    }
}
