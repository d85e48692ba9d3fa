/// A type whose stored form is written by hand as a ``TourValue``: the one definition of how it is
/// stored (the journal, the flow rows) and printed (`--json`). Its `Codable` conformance goes through
/// it, so Foundation's coders and ``TourValueEncoder`` write the same JSON.
///
/// Why by hand and not through `Codable` alone: `Codable` instantiates a generic keyed container per
/// coding-key type at run time, and each first instantiation checks the key type's conformance to
/// `CodingKey` by scanning every conformance record in the binary. A one-shot command reading and
/// printing a few values paid for dozens of such scans; the durable path paid the generic calls on
/// every event.
public protocol TourValueConvertible: TourValueRepresentable {
    init(tourValue: TourValue) throws
}

/// A type whose JSON form (for output, not read back) is written by hand as a ``TourValue``.
public protocol TourValueRepresentable {
    var tourValue: TourValue { get }
}

extension TourValueRepresentable {
    /// The value as compact JSON text with sorted keys.
    public func jsonText() throws -> String { try tourValue.jsonText() }
}

extension TourValueConvertible {
    /// Reads the value from JSON text.
    public init(jsonText text: String) throws { try self.init(tourValue: TourValue(jsonText: text)) }

    /// Reads the value from a wire body (UTF-8 JSON).
    public init(jsonUTF8 bytes: some Collection<UInt8>) throws {
        try self.init(tourValue: TourValue(jsonUTF8: bytes))
    }
}

/// A ``TourValueRepresentable`` type that encoders (``TourValueEncoder``, Foundation's) write through
/// its one hand-written form; it has no `Encodable` code of its own.
public protocol TourValueEncodable: TourValueRepresentable, Encodable {}

extension TourValueEncodable {
    public func encode(to encoder: any Encoder) throws { try tourValue.encode(to: encoder) }
}

/// A ``TourValueConvertible`` type that Foundation's coders (and ``TourValueEncoder``) can also
/// write, through its one hand-written form: adopting this is all it takes, with no `Codable`
/// code of its own, so the two can never disagree.
public protocol TourValueCodable: TourValueConvertible, TourValueEncodable, Codable {}

extension TourValueCodable {
    public init(from decoder: any Decoder) throws { try self.init(tourValue: TourValue(from: decoder)) }
}

extension Array where Element: TourValueConvertible {
    public var tourValue: TourValue { .list(map { $0.tourValue }) }

    public init(tourValue: TourValue) throws {
        guard case .list(let items) = tourValue else {
            throw TourValueReader.mismatch("a list", tourValue, path: [])
        }
        self = try items.map(Element.init(tourValue:))
    }
}

/// The members of one stored object, read with errors that name the type and the key (as
/// `DecodingError`s, which is what Foundation's coders report too).
public struct TourValueReader {
    public let object: [String: TourValue]
    private let type: String

    public init(_ value: TourValue, as type: String) throws {
        guard case .object(let object) = value else {
            throw Self.mismatch("\(type) as an object", value, path: [])
        }
        self.object = object
        self.type = type
    }

    /// The member, or nil when it is missing or null.
    public func value(_ key: String) -> TourValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    public func contains(_ key: String) -> Bool { object[key] != nil }

    private func required(_ key: String) throws -> TourValue {
        guard let value = object[key] else {
            throw DecodingError.keyNotFound(
                MemberKey(key), .init(codingPath: [], debugDescription: "\(type) has no '\(key)'"))
        }
        guard value != .null else {
            throw DecodingError.valueNotFound(
                TourValue.self,
                .init(codingPath: [MemberKey(key)], debugDescription: "\(type): '\(key)' is null"))
        }
        return value
    }

    private func expect(_ what: String, _ key: String, _ value: TourValue) -> DecodingError {
        Self.mismatch("\(type): '\(key)' as \(what)", value, path: [MemberKey(key)])
    }

    public func string(_ key: String) throws -> String {
        let value = try required(key)
        guard case .string(let text) = value else { throw expect("text", key, value) }
        return text
    }

    public func optionalString(_ key: String) throws -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw expect("text", key, value) }
        return text
    }

    public func int(_ key: String) throws -> Int {
        let value = try required(key)
        guard let number = Self.integer(value) else { throw expect("a whole number", key, value) }
        return number
    }

    public func optionalInt(_ key: String) throws -> Int? {
        guard let value = value(key) else { return nil }
        guard let number = Self.integer(value) else { throw expect("a whole number", key, value) }
        return number
    }

    /// A whole number within `range`: counts and positions the engine adds one to, so that a
    /// damaged or hand-made row is refused when read rather than overflowing later.
    public func int(_ key: String, in range: ClosedRange<Int>) throws -> Int {
        try checked(int(key), key, range)
    }

    public func optionalInt(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        try optionalInt(key).map { try checked($0, key, range) }
    }

    private func checked(_ number: Int, _ key: String, _ range: ClosedRange<Int>) throws -> Int {
        guard range.contains(number) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [MemberKey(key)],
                    debugDescription:
                        "\(type): '\(key)' is \(number), not \(range.lowerBound) to \(range.upperBound)"))
        }
        return number
    }

    public func double(_ key: String) throws -> Double {
        let value = try required(key)
        guard let number = Self.number(value) else { throw expect("a number", key, value) }
        return number
    }

    public func optionalDouble(_ key: String) throws -> Double? {
        guard let value = value(key) else { return nil }
        guard let number = Self.number(value) else { throw expect("a number", key, value) }
        return number
    }

    public func optionalBool(_ key: String) throws -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw expect("true or false", key, value) }
        return flag
    }

    /// A string member made into a `RawRepresentable` (an enum, an identifier).
    public func raw<T: RawRepresentable>(_ key: String, _ type: T.Type = T.self) throws -> T
    where T.RawValue == String {
        let text = try string(key)
        guard let value = T(rawValue: text) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [MemberKey(key)],
                    debugDescription: "\(self.type): '\(key)' cannot be '\(text)'"))
        }
        return value
    }

    public func optionalRaw<T: RawRepresentable>(_ key: String, _ type: T.Type = T.self) throws -> T?
    where T.RawValue == String {
        guard value(key) != nil else { return nil }
        return try raw(key, type)
    }

    public func strings(_ key: String) throws -> [String] {
        let value = try required(key)
        guard case .list(let items) = value else { throw expect("a list of text", key, value) }
        return try items.map { item in
            guard case .string(let text) = item else { throw expect("a list of text", key, value) }
            return text
        }
    }

    public func optionalStrings(_ key: String) throws -> [String]? {
        guard value(key) != nil else { return nil }
        return try strings(key)
    }

    /// An object member with values of any shape (fields, payloads, properties).
    public func object(_ key: String) throws -> [String: TourValue] {
        let value = try required(key)
        guard case .object(let object) = value else { throw expect("an object", key, value) }
        return object
    }

    public func optionalObject(_ key: String) throws -> [String: TourValue]? {
        guard value(key) != nil else { return nil }
        return try object(key)
    }

    public func decode<T: TourValueConvertible>(_ key: String, _ type: T.Type = T.self) throws -> T {
        try T(tourValue: required(key))
    }

    /// A list member, each item read as `T`.
    public func list<T: TourValueConvertible>(_ key: String, of type: T.Type = T.self) throws -> [T] {
        let value = try required(key)
        guard case .list(let items) = value else { throw expect("a list", key, value) }
        return try items.map(T.init(tourValue:))
    }

    /// A list member of values of any shape.
    public func values(_ key: String) throws -> [TourValue] {
        let value = try required(key)
        guard case .list(let items) = value else { throw expect("a list", key, value) }
        return items
    }

    /// An object member, each value read as `T`.
    public func map<T: TourValueConvertible>(_ key: String, of type: T.Type = T.self) throws -> [String: T] {
        let value = try required(key)
        guard case .object(let object) = value else { throw expect("an object", key, value) }
        return try object.mapValues(T.init(tourValue:))
    }

    public func optionalDecode<T: TourValueConvertible>(_ key: String, _ type: T.Type = T.self) throws -> T? {
        guard let value = value(key) else { return nil }
        return try T(tourValue: value)
    }

    /// A whole number: an integer, or a double with no fraction (as `JSONDecoder` reads one).
    static func integer(_ value: TourValue) -> Int? {
        switch value {
        case .int(let number): number
        case .double(let number): Int(exactly: number)
        default: nil
        }
    }

    static func number(_ value: TourValue) -> Double? {
        switch value {
        case .int(let number): Double(number)
        case .double(let number): number
        default: nil
        }
    }

    public static func mismatch(_ what: String, _ value: TourValue, path: [any CodingKey]) -> DecodingError {
        .typeMismatch(
            TourValue.self, .init(codingPath: path, debugDescription: "expected \(what), found \(value)"))
    }
}

/// A member name as a coding key, for the coding paths of errors.
public struct MemberKey: CodingKey {
    public var stringValue: String
    public var intValue: Int? { nil }

    public init(_ name: String) { stringValue = name }
    public init?(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}

extension TourValue {
    /// An object from members, leaving out the ones that are nil (as `encodeIfPresent` does).
    public static func members(_ pairs: KeyValuePairs<String, TourValue?>) -> TourValue {
        var object: [String: TourValue] = [:]
        object.reserveCapacity(pairs.count)
        for (key, value) in pairs {
            if let value { object[key] = value }
        }
        return .object(object)
    }

    /// A string, or null.
    public static func optional(_ text: String?) -> TourValue { text.map(TourValue.string) ?? .null }

    /// A list of strings.
    public static func strings<S: Sequence>(_ items: S) -> TourValue where S.Element == String {
        .list(items.map(TourValue.string))
    }
}
