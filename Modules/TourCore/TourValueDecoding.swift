#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The decoding side of ``TourValueDecoder``: a `Decoder` over a ``TourValue`` (see TourValueCoding.swift).
struct ValueDecoder: Decoder {
    let value: TourValue
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func decode<T: Decodable>(_ type: T.Type, from value: TourValue, codingPath: [any CodingKey]) throws -> T {
        if T.self == TourValue.self { return value as! T }
        if T.self == String.self { return try string(value, codingPath) as! T }
        if T.self == Int.self { return try integer(Int.self, value, codingPath) as! T }
        if T.self == Double.self { return try double(value, codingPath) as! T }
        if T.self == Bool.self { return try bool(value, codingPath) as! T }
        if T.self == Date.self { return Date(timeIntervalSince1970: try double(value, codingPath)) as! T }
        return try T(from: ValueDecoder(value: value, codingPath: codingPath))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else { throw mismatch([String: TourValue].self, value, codingPath) }
        return KeyedDecodingContainer(KeyedValueContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .list(let items) = value else { throw mismatch([TourValue].self, value, codingPath) }
        return UnkeyedValueContainer(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(value: value, codingPath: codingPath)
    }

    static func string(_ value: TourValue, _ path: [any CodingKey]) throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, value, path) }
        return text
    }

    static func bool(_ value: TourValue, _ path: [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, value, path) }
        return flag
    }

    static func double(_ value: TourValue, _ path: [any CodingKey]) throws -> Double {
        switch value {
        case .double(let number): return number
        case .int(let number): return Double(number)
        default: throw mismatch(Double.self, value, path)
        }
    }

    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ value: TourValue, _ path: [any CodingKey]) throws -> T {
        let result: T?
        switch value {
        case .int(let number): result = T(exactly: number)
        case .double(let number): result = T(exactly: number)
        default: result = nil
        }
        guard let result else { throw mismatch(T.self, value, path) }
        return result
    }
}

private func mismatch(_ type: Any.Type, _ value: TourValue, _ path: [any CodingKey]) -> DecodingError {
    if value == .null {
        return .valueNotFound(type, .init(codingPath: path, debugDescription: "expected \(type) but found null"))
    }
    return .typeMismatch(type, .init(codingPath: path, debugDescription: "expected \(type) but found \(value)"))
}

private struct KeyedValueContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: TourValue]
    var codingPath: [any CodingKey]
    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func value(_ key: Key) throws -> TourValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "no value for the key '\(key.stringValue)'"))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try ValueDecoder.decode(type, from: value(key), codingPath: codingPath + [key])
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = object[key.stringValue], value != .null else { return nil }
        return try ValueDecoder.decode(type, from: value, codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try ValueDecoder(value: value(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: value(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: object["super"] ?? .null, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedValueContainer: UnkeyedDecodingContainer {
    let items: [TourValue]
    var codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    init(items: [TourValue], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    private mutating func next() throws -> (TourValue, [any CodingKey]) {
        let path = codingPath + [IndexKey(currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                TourValue.self, .init(codingPath: path, debugDescription: "the array has no more values"))
        }
        defer { currentIndex += 1 }
        return (items[currentIndex], path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next()
        return try ValueDecoder.decode(type, from: value, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let (value, path) = try next()
        return try ValueDecoder(value: value, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next()
        return try ValueDecoder(value: value, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next()
        return ValueDecoder(value: value, codingPath: path)
    }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
    let value: TourValue
    var codingPath: [any CodingKey]

    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try ValueDecoder.bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try ValueDecoder.string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try ValueDecoder.double(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try ValueDecoder.double(value, codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try ValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try ValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try ValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try ValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try ValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try ValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try ValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try ValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try ValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try ValueDecoder.integer(type, value, codingPath) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueDecoder.decode(type, from: value, codingPath: codingPath)
    }
}
