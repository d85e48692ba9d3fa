import TourCodec

/// The journal's JSON form of an effect: an object tagged by `type`, such as
/// `{"type": "analytics", "name": "tutorial_started", "properties": {...}}`. Secrets encode as
/// "‹redacted›".
extension TourEffect: TourValueCodable, JSONTextWritable {
    public var tourValue: TourValue { .members(storedMembers) }

    /// The same text as `tourValue.jsonText()`, from the same members (the journal writes the
    /// effects of every row).
    public func writeJSON(to writer: inout JSONTextWriter) throws(JSONTextError) {
        try writer.write(members: Array(storedMembers))
    }

    /// The stored form's members.
    private var storedMembers: KeyValuePairs<String, TourValue?> {
        // Keys in byte order: written as they come.
        switch self {
        case .haptic(let feedback): ["haptic": .string(feedback.rawValue), "type": "haptic"]
        case .celebration(let flow, let step, let reducedMotion):
            // `reducedMotion` only when true: the form celebrations always had stays as it was.
            [
                "flow": .string(flow.rawValue), "reducedMotion": reducedMotion ? true : nil,
                "step": .string(step.rawValue),
                "type": "celebration",
            ]
        case .analytics(let event):
            ["name": .string(event.name), "properties": .object(event.properties), "type": "analytics"]
        case .checkPermission(let gate, let permission):
            ["gate": .string(gate), "permission": .string(permission.rawValue), "type": "checkPermission"]
        case .requestPermission(let gate, let permission):
            ["gate": .string(gate), "permission": .string(permission.rawValue), "type": "requestPermission"]
        case .request(let gate, let name, let payload, let secrets):
            [
                "gate": .string(gate), "name": .string(name), "payload": .object(payload),
                "secrets": .object(secrets.mapValues { _ in .string(Secret.redactedText) }),
                "type": "request",
            ]
        case .product(let effect):
            ["name": .string(effect.name), "payload": .object(effect.payload), "type": "product"]
        case .presented(let flow): ["flow": .string(flow.rawValue), "type": "presented"]
        case .dismissed(let flow): ["flow": .string(flow.rawValue), "type": "dismissed"]
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
            self = .analytics(
                AnalyticsEvent(name: try stored.string("name"), properties: try stored.object("properties")))
        case "checkPermission":
            self = .checkPermission(
                gate: try stored.string("gate"), try stored.raw("permission", PermissionName.self))
        case "requestPermission":
            self = .requestPermission(
                gate: try stored.string("gate"), try stored.raw("permission", PermissionName.self))
        case "request":
            // A stored secret is only ever its redacted text.
            self = .request(
                gate: try stored.string("gate"), name: try stored.string("name"),
                payload: try stored.object("payload"),
                secrets: try stored.object("secrets").mapValues { value in
                    guard case .string = value else {
                        throw TourValueReader.mismatch(
                            "effect: a secret as text", value, path: [MemberKey("secrets")])
                    }
                    return Secret(Secret.redactedText)
                })
        case "product":
            self = .product(
                ProductEffect(name: try stored.string("name"), payload: try stored.object("payload")))
        case "presented": self = .presented(try stored.raw("flow", FlowID.self))
        case "dismissed": self = .dismissed(try stored.raw("flow", FlowID.self))
        case let other:
            throw DecodingError.dataCorrupted(
                .init(codingPath: [MemberKey("type")], debugDescription: "unknown effect type \(other)"))
        }
    }
}
