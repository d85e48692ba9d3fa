/// Something outside the engine must answer before or while a step completes: a permission
/// (Screen Time, Health) or a request such as Carrier Wave's QRZ connection attempt.
public struct Gate: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case permission(PermissionName)
        /// A product request performed by the product's handler, with the non-secret fields and the
        /// action's secrets as payload.
        case request(String)
    }

    public var id: String
    public var kind: Kind
    /// Required: Continue is refused until granted, with ``deniedMessage``. Optional: a denial only
    /// shows ``deniedMessage`` as a warning.
    public var required: Bool
    public var deniedMessage: String
    public var grantedMessage: String
    public var unavailableMessage: String?
    /// Read the status as the step is entered, so "already granted" shows success at once.
    public var checksOnEntry: Bool
    /// The step completes as soon as the gate is granted (a successful connection).
    public var advancesWhenGranted: Bool
    /// Product side effects committed with the granting answer (Carrier Wave: the service is connected).
    public var onGranted: [EffectTemplate]

    public init(
        _ id: String, _ kind: Kind, required: Bool, deniedMessage: String, grantedMessage: String,
        unavailableMessage: String? = nil, checksOnEntry: Bool = false, advancesWhenGranted: Bool = false,
        onGranted: [EffectTemplate] = []
    ) {
        self.onGranted = onGranted
        self.id = id
        self.kind = kind
        self.required = required
        self.deniedMessage = deniedMessage
        self.grantedMessage = grantedMessage
        self.unavailableMessage = unavailableMessage
        self.checksOnEntry = checksOnEntry
        self.advancesWhenGranted = advancesWhenGranted
    }

    /// A permission gate whose status is read when the step is entered.
    public static func permission(
        _ id: String, _ permission: PermissionName, required: Bool, deniedMessage: String,
        grantedMessage: String
    ) -> Gate {
        Gate(
            id, .permission(permission), required: required, deniedMessage: deniedMessage,
            grantedMessage: grantedMessage, checksOnEntry: true)
    }

    func notice(for status: GateStatus) -> String? {
        switch status {
        case .granted: grantedMessage
        case .denied, .restricted: deniedMessage
        case .unavailable: unavailableMessage
        case .notDetermined, .pending: nil
        }
    }
}
