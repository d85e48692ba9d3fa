import TourCodec

/// Who started a run, as the dashboard splits journeys by it (Docs/Server.md, "Journeys"): the
/// locale its cards showed in, its accessibility settings in a few words
/// (``TourCore/AccessibilitySettings/summary``) and the kind of device. A device sends it as the
/// `context` member of each `flowStarted` fact it pushes; the journal does not keep it (it is
/// said at push time, from the row's own context and the session's locale and device kind).
public struct StartContext: Equatable, Sendable {
    public var locale: String?
    public var accessibility: String?
    public var device: String?

    public init(locale: String? = nil, accessibility: String? = nil, device: String? = nil) {
        self.locale = locale
        self.accessibility = accessibility
        self.device = device
    }

    /// The longest value a member may have.
    public static let maximumLength = 64
    /// The members a context may have.
    public static let members: Set<String> = ["locale", "accessibility", "device"]

    public var tourValue: TourValue {
        var object: [String: TourValue] = [:]
        if let locale { object["locale"] = .string(locale) }
        if let accessibility { object["accessibility"] = .string(accessibility) }
        if let device { object["device"] = .string(device) }
        return .object(object)
    }

    /// Why a pushed `context` is refused, in words that say what is allowed; nil when it is fine.
    public static func problem(_ value: TourValue) -> String? {
        let allowed =
            """
            a flowStarted fact's context is an object of locale, accessibility and device, \
            each text of 1 to \(maximumLength) characters
            """
        guard let object = value.objectValue else { return allowed }
        for (key, member) in object {
            guard members.contains(key), let text = member.stringValue,
                (1...maximumLength).contains(text.count)
            else { return allowed }
        }
        return nil
    }

    /// Whether `kind` is a device kind a device may report: a lowercase word (phone, tablet, mac, vision).
    public static func isDeviceKind(_ kind: String) -> Bool {
        (1...maximumLength).contains(kind.count) && kind.allSatisfy { ("a"..."z").contains($0) || $0 == "-" }
    }
}
