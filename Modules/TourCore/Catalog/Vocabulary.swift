import TourCodec

/// The kinds of value a context key, a payload key or a field holds, as a catalog document names them.
public enum ValueKind: String, Sendable, Equatable, CaseIterable {
    /// A string (a name, a date written YYYY-MM-DD, a choice).
    case text
    /// A number (whole or not).
    case number
    /// `true` or `false`.
    case flag
    /// A list of values.
    case list
    /// An object of named values.
    case object
    /// Anything: the handler reads it as it comes.
    case any

    /// The kind of a value; nil for `null`, which fits every kind.
    public init?(of value: TourValue) {
        switch value {
        case .null: return nil
        case .bool: self = .flag
        case .int, .double: self = .number
        case .string: self = .text
        case .list: self = .list
        case .object: self = .object
        }
    }

    /// Whether a value of kind `given` fits where this kind is expected.
    public func accepts(_ given: ValueKind) -> Bool { self == .any || given == .any || self == given }

    /// The kind as a sentence names it: "text", "a number", ...
    public var phrase: String {
        switch self {
        case .text: "text"
        case .number: "a number"
        case .flag: "true or false"
        case .list: "a list"
        case .object: "an object"
        case .any: "any value"
        }
    }
}

/// One key of an effect's payload: the kind of its value, and whether the catalog must give it.
public struct PayloadSpec: Sendable, Equatable, Hashable {
    public var kind: ValueKind
    /// The catalog's effect must give this key (its value may still be null at run time when it
    /// comes from a field or parameter nobody filled; the handler decides what null means).
    public var required: Bool

    public init(_ kind: ValueKind, required: Bool = true) {
        self.kind = kind
        self.required = required
    }

    public static let text = PayloadSpec(.text)
    public static let number = PayloadSpec(.number)
    public static let flag = PayloadSpec(.flag)
    public static let list = PayloadSpec(.list)
    public static let object = PayloadSpec(.object)
    public static let any = PayloadSpec(.any)
    /// A key the catalog may leave out.
    public static func optional(_ kind: ValueKind) -> PayloadSpec { PayloadSpec(kind, required: false) }
}

/// One kind of product side effect a handler performs (LockedIn's `activate`), with the payload it
/// takes. The catalog check refuses an effect of a kind no handler declares, a payload key the kind
/// does not take, a required one left out, and a value of the wrong kind.
public struct EffectKind: Sendable, Equatable {
    public var name: String
    public var payload: [String: PayloadSpec]
    /// What the effect does, for `check` and the docs; not part of the catalog document.
    public var summary: String

    public init(_ name: String, _ summary: String = "", payload: [String: PayloadSpec] = [:]) {
        self.name = name
        self.summary = summary
        self.payload = payload
    }
}

/// A product's side effects as a Swift type, usually an enum with one case per kind: the runtime
/// checks each effect the engine filled in against ``kinds``, reads it into this type, and hands it
/// to the handler, whose `switch` is exhaustive. A misspelt kind or payload key in a catalog is
/// refused by the catalog check; one that reaches the runtime anyway fails its event, never
/// silently does nothing.
public protocol HandlerEffect: Sendable {
    /// Every kind, with its payload: the vocabulary the catalog is checked against.
    static var kinds: [EffectKind] { get }
    /// Reads an effect whose kind and payload already fit ``kinds``.
    init(_ payload: EffectPayload) throws(EffectError)
}

/// The type of a product with no side effects: no kinds, so any effect in its catalog is refused.
public enum NoEffects: HandlerEffect {
    public static var kinds: [EffectKind] { [] }
    public init(_ payload: EffectPayload) throws(EffectError) { throw .undeclared(payload.kind) }
}

/// Why an effect could not be read: it names the effect and the key.
public struct EffectError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }

    static func undeclared(_ kind: String) -> EffectError {
        EffectError("effect '\(kind.quotable)' is not one the product's handler declares")
    }
}

/// A filled-in effect's payload, checked against its kind's declaration, with typed reads.
public struct EffectPayload: Sendable, Equatable {
    /// The effect's kind (its name).
    public let kind: String
    public let values: [String: TourValue]

    /// Checks `effect` against `kinds`: a declared kind, no key it does not take, every required
    /// key given, each non-null value of its declared kind.
    public init(_ effect: ProductEffect, kinds: [EffectKind]) throws(EffectError) {
        guard let declared = kinds.first(where: { $0.name == effect.name }) else {
            throw .undeclared(effect.name)
        }
        for (key, value) in effect.payload {
            guard let spec = declared.payload[key] else {
                throw EffectError("effect '\(effect.name)' takes no payload key '\(key.quotable)'")
            }
            if let given = ValueKind(of: value), !spec.kind.accepts(given) {
                throw EffectError(
                    "effect '\(effect.name)': '\(key)' must be \(spec.kind.phrase), not \(given.phrase)")
            }
        }
        for (key, spec) in declared.payload where spec.required && effect.payload[key] == nil {
            throw EffectError("effect '\(effect.name)' needs payload key '\(key)'")
        }
        self.kind = effect.name
        self.values = effect.payload
    }

    /// The value at `key`, or nil when it is missing or null.
    public func value(_ key: String) -> TourValue? {
        guard let value = values[key], value != .null else { return nil }
        return value
    }

    private func missing(_ key: String, _ what: String) -> EffectError {
        EffectError("effect '\(kind)': '\(key)' must be \(what), and it is missing or null")
    }

    public func text(_ key: String) throws(EffectError) -> String {
        guard let text = value(key)?.stringValue else { throw missing(key, "text") }
        return text
    }

    public func optionalText(_ key: String) -> String? { value(key)?.stringValue }

    public func int(_ key: String) throws(EffectError) -> Int {
        guard let number = value(key)?.intValue else { throw missing(key, "a whole number") }
        return number
    }

    public func optionalInt(_ key: String) -> Int? { value(key)?.intValue }

    public func flag(_ key: String) throws(EffectError) -> Bool {
        guard let flag = value(key)?.boolValue else { throw missing(key, "true or false") }
        return flag
    }

    /// A list of strings (LockedIn's blocked apps).
    public func texts(_ key: String) throws(EffectError) -> [String] {
        guard let items = value(key)?.listValue else { throw missing(key, "a list of text") }
        return try items.map { item throws(EffectError) in
            guard let text = item.stringValue else {
                throw EffectError("effect '\(kind)': '\(key)' must list text only, not \(item.displayText)")
            }
            return text
        }
    }
}

/// One fact the flows' conditions and fields may read, as the product's code declares it: its
/// name, its kind, the value when nothing provides it, and where it comes from.
public struct ContextKey: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case flag, number, text

        /// The value `text` means for this kind, or nil when it does not fit.
        public func value(_ text: String) -> TourValue? {
            switch self {
            case .flag:
                switch text.lowercased() {
                case "true", "yes", "1", "on": return .bool(true)
                case "false", "no", "0", "off": return .bool(false)
                default: return nil
                }
            case .number: return Int(text).map(TourValue.int)
            case .text: return text.isEmpty ? nil : .string(text)
            }
        }

        /// `value` as it is written on a command line.
        public func text(_ value: TourValue) -> String {
            if case .bool(let flag) = value { return flag ? "true" : "false" }
            return value.displayText
        }

        /// What a value of the kind looks like, for messages.
        public var example: String {
            switch self {
            case .flag: "true or false"
            case .number: "a whole number"
            case .text: "some text"
            }
        }

        /// The kind as a payload or field names it.
        public var valueKind: ValueKind {
            switch self {
            case .flag: .flag
            case .number: .number
            case .text: .text
            }
        }
    }

    public enum Source: String, Sendable, Equatable, CaseIterable {
        /// Computed by the product's handler from its own state and the time (`hasPhases`).
        case productState = "product state"
        /// A fact about the device the app reports (network, headphones). The CLI takes it as
        /// `--context KEY=VALUE`; unreported, it has its default.
        case device
    }

    public var name: String
    public var kind: Kind
    public var defaultValue: TourValue
    public var source: Source
    /// What the key means, for help and the docs; not part of the catalog document.
    public var summary: String
    /// For a device fact: whether the install remembers what the app reported until it reports
    /// otherwise (a watch paired, a setting), or it holds for the moment it is reported only (the
    /// network now). Not part of the catalog document.
    public var remembered = true
    /// For a number: the values the app can report (a device has 0 to 4 paired watches), so the
    /// CLI refuses others, the explorer tries the bounds and the check knows a threshold beyond
    /// them is never met. Nil: any whole number. Not part of the catalog document.
    public var range: ClosedRange<Int>?
    /// For text: the values the app can report (an enumeration, such as the text size categories),
    /// so the CLI refuses others. Nil: any text. Not part of the catalog document.
    public var allowed: [String]?

    /// What a value of this key looks like, for messages and help: its kind, narrowed by its range
    /// or its allowed values.
    public var example: String {
        if let allowed { return "one of \(allowed.joined(separator: ", "))" }
        if let range { return "a whole number from \(range.lowerBound) to \(range.upperBound)" }
        return kind.example
    }

    public init(
        _ name: String, _ kind: Kind, default defaultValue: TourValue, source: Source, _ summary: String
    ) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.source = source
        self.summary = summary
    }

    /// A key the handler computes from the product's state.
    public static func computed(_ name: String, _ kind: Kind, default value: TourValue, _ summary: String)
        -> ContextKey
    {
        ContextKey(name, kind, default: value, source: .productState, summary)
    }

    /// A fact the app reports about the device; remembered for the install until reported
    /// otherwise, unless `remembered` is false (it holds for the moment it is reported).
    public static func device(
        _ name: String, _ kind: Kind, default value: TourValue, remembered: Bool = true,
        range: ClosedRange<Int>? = nil, allowed: [String]? = nil, _ summary: String
    ) -> ContextKey {
        var key = ContextKey(name, kind, default: value, source: .device, summary)
        key.remembered = remembered
        key.range = range
        key.allowed = allowed
        return key
    }
}

/// What the code half of a product declares, for the catalog's references to be checked against:
/// the context keys it provides, the kinds of product effect it applies with their payloads, the
/// requests it performs. A catalog document carries the part of it the catalog uses, so a document
/// can be checked against a binary without compiling it.
public struct CatalogDeclarations: Sendable, Equatable {
    public var context: [ContextKey]
    public var effects: [EffectKind]
    public var requests: Set<String>

    public init(context: [ContextKey] = [], effects: [EffectKind] = [], requests: Set<String> = []) {
        self.context = context
        self.effects = effects
        self.requests = requests
    }

    public var contextKeys: Set<String> { Set(context.map(\.name)) }
    public var effectNames: [String] { effects.map(\.name) }
    public func effect(_ name: String) -> EffectKind? { effects.first { $0.name == name } }
    public func contextKey(_ name: String) -> ContextKey? { context.first { $0.name == name } }

    /// The device facts the app reports (and the CLI takes as `--context`).
    public var deviceKeys: [ContextKey] { context.filter { $0.source == .device } }

    /// Reads `KEY=VALUE` device facts against the declarations.
    /// - Throws: a message naming what is allowed when a key is unknown, computed, or its value
    ///   does not fit its kind.
    public func deviceFacts(_ given: [(key: String, value: String)], product: String = "this product")
        throws(DeclarationError) -> [String: TourValue]
    {
        var facts: [String: TourValue] = [:]
        let device = deviceKeys
        let allowed = device.map { "\($0.name) (\($0.example))" }
        let listing =
            allowed.isEmpty
            ? "\(product) reads no device facts" : "device facts: \(allowed.joined(separator: ", "))"
        for (key, text) in given {
            guard let declared = context.first(where: { $0.name == key }) else {
                let near = NameSuggestion.nearest(to: key, in: device.map(\.name))
                throw DeclarationError(
                    """
                    unknown context key '\(key.quotable)'\(near.map { " (did you mean '\($0)'?)" } ?? ""); \
                    \(listing)
                    """
                )
            }
            guard declared.source == .device else {
                throw DeclarationError(
                    "'\(key)' is computed from the product's state and cannot be set; \(listing)")
            }
            guard let value = declared.kind.value(text) else {
                throw DeclarationError("'\(key)' takes \(declared.kind.example), not '\(text.quotable)'")
            }
            if let range = declared.range, let number = value.intValue, !range.contains(number) {
                throw DeclarationError("'\(key)' takes \(declared.example), not \(number)")
            }
            if let allowed = declared.allowed, let text = value.stringValue, !allowed.contains(text) {
                let near = NameSuggestion.nearest(to: text, in: allowed)
                throw DeclarationError(
                    """
                    '\(key)' takes \(declared.example), not '\(text.quotable)'\
                    \(near.map { " (did you mean '\($0)'?)" } ?? "")
                    """
                )
            }
            facts[key] = value
        }
        return facts
    }
}

/// A `--context` value that does not fit the declarations.
public struct DeclarationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
