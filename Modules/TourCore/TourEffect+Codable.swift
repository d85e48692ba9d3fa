import TourCodec

/// The journal's JSON form of an effect: an object tagged by `type`, such as
/// `{"type": "analytics", "name": "tutorial_started", "properties": {...}}`. Secrets encode as
/// "‹redacted›".
extension TourEffect: TourValueCodable {
    public var tourValue: TourValue {
        switch self {
        case .haptic(let feedback): ["type": "haptic", "haptic": .string(feedback.rawValue)]
        case .celebration(let flow, let step, let reducedMotion):
            // `reducedMotion` only when true: the form celebrations always had stays as it was.
            reducedMotion
                ? [
                    "type": "celebration", "flow": .string(flow.rawValue), "step": .string(step.rawValue),
                    "reducedMotion": true,
                ]
                : ["type": "celebration", "flow": .string(flow.rawValue), "step": .string(step.rawValue)]
        case .analytics(let event): ["type": "analytics", "name": .string(event.name), "properties": .object(event.properties)]
        case .checkPermission(let gate, let permission):
            ["type": "checkPermission", "gate": .string(gate), "permission": .string(permission.rawValue)]
        case .requestPermission(let gate, let permission):
            ["type": "requestPermission", "gate": .string(gate), "permission": .string(permission.rawValue)]
        case .request(let gate, let name, let payload, let secrets):
            [
                "type": "request", "gate": .string(gate), "name": .string(name), "payload": .object(payload),
                "secrets": .object(secrets.mapValues { _ in .string(Secret.redactedText) }),
            ]
        case .product(let effect): ["type": "product", "name": .string(effect.name), "payload": .object(effect.payload)]
        case .presented(let flow): ["type": "presented", "flow": .string(flow.rawValue)]
        case .dismissed(let flow): ["type": "dismissed", "flow": .string(flow.rawValue)]
        }
    }

    public init(tourValue: TourValue) throws {
        let stored = try TourValueReader(tourValue, as: "effect")
        switch try stored.string("type") {
        case "haptic": self = .haptic(try stored.raw("haptic", HapticFeedback.self))
        case "celebration":
            self = .celebration(
                flow: try stored.raw("flow", FlowID.self), step: try stored.raw("step", StepID.self),
                reducedMotion: try stored.optionalBool("reducedMotion") ?? false)
        case "analytics":
            self = .analytics(AnalyticsEvent(name: try stored.string("name"), properties: try stored.object("properties")))
        case "checkPermission":
            self = .checkPermission(gate: try stored.string("gate"), try stored.raw("permission", PermissionName.self))
        case "requestPermission":
            self = .requestPermission(gate: try stored.string("gate"), try stored.raw("permission", PermissionName.self))
        case "request":
            // A stored secret is only ever its redacted text.
            self = .request(
                gate: try stored.string("gate"), name: try stored.string("name"), payload: try stored.object("payload"),
                secrets: try stored.object("secrets").mapValues { value in
                    guard case .string = value else {
                        throw TourValueReader.mismatch("effect: a secret as text", value, path: [MemberKey("secrets")])
                    }
                    return Secret(Secret.redactedText)
                })
        case "product":
            self = .product(ProductEffect(name: try stored.string("name"), payload: try stored.object("payload")))
        case "presented": self = .presented(try stored.raw("flow", FlowID.self))
        case "dismissed": self = .dismissed(try stored.raw("flow", FlowID.self))
        case let other:
            throw DecodingError.dataCorrupted(
                .init(codingPath: [MemberKey("type")], debugDescription: "unknown effect type \(other)"))
        }
    }
}
