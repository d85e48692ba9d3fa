/// What a step shows: the words are the product's, copied from its spec.
public struct StepContent: Sendable, Equatable {
    public var title: String
    /// The message. `{field}` and `{#field|one|many}` are filled in from the flow's fields, so
    /// LockedIn can say "4 apps selected".
    public var body: String
    /// The action hint ("Tap anywhere to continue"), if any.
    public var hint: String?
    /// Extra lines under the body (Carrier Wave's service list, LockedIn's "Starting Bank: 60 min").
    /// A line that counts an empty field (`{#apps|app|apps}` with no apps) is left out.
    public var details: [String]
    /// The UI element to spotlight, if any.
    public var anchor: Anchor?

    public init(
        title: String, body: String, hint: String? = nil, details: [String] = [], anchor: Anchor? = nil
    ) {
        self.title = title
        self.body = body
        self.hint = hint
        self.details = details
        self.anchor = anchor
    }
}

/// Where a coach mark's popover sits relative to its target.
public enum PopoverPosition: String, Codable, Sendable, CaseIterable {
    case above, below, leading, trailing, center
}

/// The UI element a step spotlights, with the element to use instead when it is not available
/// (Finite: no filled weeks, so spotlight the first weeks of the grid).
public struct Anchor: Sendable, Equatable {
    public var target: String
    public var fallback: String?
    /// When this does not hold, ``fallback`` is spotlighted instead of ``target``.
    public var availableWhen: Condition
    public var highlightPadding: Double?
    public var popover: PopoverPosition?

    public init(
        _ target: String, fallback: String? = nil, availableWhen: Condition = .always,
        highlightPadding: Double? = nil, popover: PopoverPosition? = nil
    ) {
        self.target = target
        self.fallback = fallback
        self.availableWhen = availableWhen
        self.highlightPadding = highlightPadding
        self.popover = popover
    }
}
