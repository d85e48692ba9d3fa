/// The journal's JSON form of an event: an object tagged by `type`, stable across releases because
/// old journal rows must keep replaying. `{"type": "actionPerformed", "action": "next", "parameters": {}}`.
extension TourEvent: Codable {
    private enum Key: String, CodingKey {
        case type, version, name, place, action, parameters, gate, status, flow, payload, record
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        switch try container.decode(String.self, forKey: .type) {
        case "appLaunched":
            self = .appLaunched(version: try container.decodeIfPresent(String.self, forKey: .version))
        case "signal": self = .signal(try container.decode(String.self, forKey: .name))
        case "featureVisited": self = .featureVisited(try container.decode(String.self, forKey: .place))
        case "actionPerformed":
            self = .actionPerformed(
                try container.decode(String.self, forKey: .action),
                parameters: try container.decode([String: String].self, forKey: .parameters))
        case "gateAnswered":
            self = .gateAnswered(
                try container.decode(String.self, forKey: .gate),
                try container.decode(GateStatus.self, forKey: .status))
        case "clockAdvanced": self = .clockAdvanced
        case "domainEvent":
            self = .domainEvent(
                try container.decode(String.self, forKey: .name),
                payload: try container.decode([String: TourValue].self, forKey: .payload))
        case "replayRequested":
            self = .replayRequested(try container.decodeIfPresent(FlowID.self, forKey: .flow))
        case "resetRequested":
            self = .resetRequested(try container.decodeIfPresent(FlowID.self, forKey: .flow))
        case "accountRecordLearned":
            self = .accountRecordLearned(
                try container.decode(FlowID.self, forKey: .flow),
                try container.decode(AccountFlowRecord.self, forKey: .record))
        case let other:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "unknown event type \(other)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case .appLaunched(let version):
            try container.encode("appLaunched", forKey: .type)
            try container.encode(version, forKey: .version)
        case .signal(let name):
            try container.encode("signal", forKey: .type)
            try container.encode(name, forKey: .name)
        case .featureVisited(let place):
            try container.encode("featureVisited", forKey: .type)
            try container.encode(place, forKey: .place)
        case .actionPerformed(let action, let parameters):
            try container.encode("actionPerformed", forKey: .type)
            try container.encode(action, forKey: .action)
            try container.encode(parameters, forKey: .parameters)
        case .gateAnswered(let gate, let status):
            try container.encode("gateAnswered", forKey: .type)
            try container.encode(gate, forKey: .gate)
            try container.encode(status, forKey: .status)
        case .clockAdvanced:
            try container.encode("clockAdvanced", forKey: .type)
        case .domainEvent(let name, let payload):
            try container.encode("domainEvent", forKey: .type)
            try container.encode(name, forKey: .name)
            try container.encode(payload, forKey: .payload)
        case .replayRequested(let flow):
            try container.encode("replayRequested", forKey: .type)
            try container.encode(flow, forKey: .flow)
        case .resetRequested(let flow):
            try container.encode("resetRequested", forKey: .type)
            try container.encode(flow, forKey: .flow)
        case .accountRecordLearned(let flow, let record):
            try container.encode("accountRecordLearned", forKey: .type)
            try container.encode(flow, forKey: .flow)
            try container.encode(record, forKey: .record)
        }
    }
}
