/// The journal's JSON form of an effect: an object tagged by `type`, such as
/// `{"type": "analytics", "name": "tutorial_started", "properties": {...}}`. Secrets encode as
/// "‹redacted›".
extension TourEffect: Codable {
    private enum Key: String, CodingKey {
        case type, haptic, flow, step, name, properties, gate, permission, payload, secrets
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        switch try container.decode(String.self, forKey: .type) {
        case "haptic": self = .haptic(try container.decode(HapticFeedback.self, forKey: .haptic))
        case "celebration":
            self = .celebration(
                flow: try container.decode(FlowID.self, forKey: .flow),
                step: try container.decode(StepID.self, forKey: .step))
        case "analytics":
            self = .analytics(
                AnalyticsEvent(
                    name: try container.decode(String.self, forKey: .name),
                    properties: try container.decode([String: TourValue].self, forKey: .properties)))
        case "checkPermission":
            self = .checkPermission(
                gate: try container.decode(String.self, forKey: .gate),
                try container.decode(PermissionName.self, forKey: .permission))
        case "requestPermission":
            self = .requestPermission(
                gate: try container.decode(String.self, forKey: .gate),
                try container.decode(PermissionName.self, forKey: .permission))
        case "request":
            self = .request(
                gate: try container.decode(String.self, forKey: .gate),
                name: try container.decode(String.self, forKey: .name),
                payload: try container.decode([String: TourValue].self, forKey: .payload),
                secrets: try container.decode([String: Secret].self, forKey: .secrets))
        case "product":
            self = .product(
                ProductEffect(
                    name: try container.decode(String.self, forKey: .name),
                    payload: try container.decode([String: TourValue].self, forKey: .payload)))
        case "presented": self = .presented(try container.decode(FlowID.self, forKey: .flow))
        case "dismissed": self = .dismissed(try container.decode(FlowID.self, forKey: .flow))
        case let other:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "unknown effect type \(other)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case .haptic(let feedback):
            try container.encode("haptic", forKey: .type)
            try container.encode(feedback, forKey: .haptic)
        case .celebration(let flow, let step):
            try container.encode("celebration", forKey: .type)
            try container.encode(flow, forKey: .flow)
            try container.encode(step, forKey: .step)
        case .analytics(let event):
            try container.encode("analytics", forKey: .type)
            try container.encode(event.name, forKey: .name)
            try container.encode(event.properties, forKey: .properties)
        case .checkPermission(let gate, let permission):
            try container.encode("checkPermission", forKey: .type)
            try container.encode(gate, forKey: .gate)
            try container.encode(permission, forKey: .permission)
        case .requestPermission(let gate, let permission):
            try container.encode("requestPermission", forKey: .type)
            try container.encode(gate, forKey: .gate)
            try container.encode(permission, forKey: .permission)
        case .request(let gate, let name, let payload, let secrets):
            try container.encode("request", forKey: .type)
            try container.encode(gate, forKey: .gate)
            try container.encode(name, forKey: .name)
            try container.encode(payload, forKey: .payload)
            try container.encode(secrets, forKey: .secrets)
        case .product(let effect):
            try container.encode("product", forKey: .type)
            try container.encode(effect.name, forKey: .name)
            try container.encode(effect.payload, forKey: .payload)
        case .presented(let flow):
            try container.encode("presented", forKey: .type)
            try container.encode(flow, forKey: .flow)
        case .dismissed(let flow):
            try container.encode("dismissed", forKey: .type)
            try container.encode(flow, forKey: .flow)
        }
    }
}
