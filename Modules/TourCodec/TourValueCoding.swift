#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `Encodable` values to ``TourValue`` (and so, with ``TourValue/jsonText(escapingSlashes:)``, to JSON
/// text) without Foundation's JSON coders: how the CLI prints its `Encodable` documents (reports,
/// forecasts, funnels). Stored and wire types are read through their one hand-written form
/// (``TourValueConvertible``), so there is no decoder here.
///
/// A type's `Encodable` conformance is either synthesized (output-only documents) or derived from
/// its one hand-written form (``TourValueEncodable``); this is only a faster way through it. It
/// makes no dynamic cast on the way: `JSONEncoder` asks every value whether it is a `Date`, `Data`,
/// `URL`, `Decimal` or a string-keyed dictionary, and each first such question of a type scans
/// every protocol conformance of the binary, which a one-shot command pays at start-up. Dates are
/// seconds since 1970, as the stores have always written them.
public struct TourValueEncoder: Sendable {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> TourValue {
        try EncodingNode.encode(value, codingPath: [])
    }

    /// The value as compact JSON text with sorted keys (the form rows and documents are stored in).
    public func jsonText<T: Encodable>(_ value: T, escapingSlashes: Bool = false) throws -> String {
        try encode(value).jsonText(escapingSlashes: escapingSlashes)
    }
}

// MARK: - Encoding

/// What one `encode(to:)` call made: a plain value, or a container still being filled.
final class EncodingNode {
    var value: TourValue?
    var object: [String: EncodingNode.Child]?
    var list: [EncodingNode.Child]?

    enum Child {
        case value(TourValue)
        case node(EncodingNode)

        var finished: TourValue {
            switch self {
            case .value(let value): value
            case .node(let node): node.finished
            }
        }
    }

    var finished: TourValue {
        if let object { return .object(object.mapValues({ $0.finished })) }
        if let list { return .list(list.map({ $0.finished })) }
        return value ?? .object([:])
    }

    /// `value` as a child: plain values stay inline, anything with containers gets a node.
    static func child<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> Child {
        if let plain = plain(value) { return .value(plain) }
        let encoder = NodeEncoder(node: EncodingNode(), codingPath: codingPath)
        try value.encode(to: encoder)
        if encoder.node.object == nil, encoder.node.list == nil {
            return .value(encoder.node.value ?? .object([:]))
        }
        return .node(encoder.node)
    }

    static func encode<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> TourValue {
        try child(value, codingPath: codingPath).finished
    }

    /// The types whose form is fixed here rather than by their own `encode(to:)`: found by comparing
    /// metadata, not by casting.
    static func plain<T: Encodable>(_ value: T) -> TourValue? {
        if T.self == TourValue.self, let value = value as? TourValue { return value }
        if T.self == String.self, let text = value as? String { return .string(text) }
        if T.self == Int.self, let number = value as? Int { return .int(number) }
        if T.self == Double.self, let number = value as? Double { return .double(number) }
        if T.self == Bool.self, let flag = value as? Bool { return .bool(flag) }
        if T.self == Date.self, let date = value as? Date { return .double(date.timeIntervalSince1970) }
        return nil
    }
}

struct NodeEncoder: Encoder {
    let node: EncodingNode
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.object == nil { node.object = [:] }
        return KeyedEncodingContainer(KeyedNodeContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.list == nil { node.list = [] }
        return UnkeyedNodeContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleNodeContainer(node: node, codingPath: codingPath)
    }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    var codingPath: [any CodingKey]

    /// (The container made `node.object`; it is never nil here.)
    private func set(_ child: EncodingNode.Child, _ key: Key) { node.object?[key.stringValue] = child }

    mutating func encodeNil(forKey key: Key) throws { set(.value(.null), key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.value(.bool(value)), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.value(.string(value)), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.value(.double(value)), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.value(.double(Double(value))), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.value(.int(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.value(.int(Int(value))), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.value(.int(Int(value))), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.value(.int(Int(value))), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.value(.int(Int(value))), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.value(try integer(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.value(.int(Int(value))), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.value(.int(Int(value))), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.value(.int(Int(value))), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.value(try integer(value)), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try EncodingNode.child(value, codingPath: codingPath + [key]), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = EncodingNode()
        set(.node(child), key)
        return NodeEncoder(node: child, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        set(.node(child), key)
        return NodeEncoder(node: child, codingPath: codingPath + [key]).unkeyedContainer()
    }

    /// Under `super`, as Foundation's encoders put it, whether or not `Key` has such a case.
    mutating func superEncoder() -> any Encoder {
        let child = EncodingNode()
        node.object?["super"] = .node(child)
        return NodeEncoder(node: child, codingPath: codingPath + [MemberKey("super")])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let child = EncodingNode()
        set(.node(child), key)
        return NodeEncoder(node: child, codingPath: codingPath + [key])
    }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let node: EncodingNode
    var codingPath: [any CodingKey]
    /// (The container made `node.list`; it is never nil here.)
    var count: Int { node.list?.count ?? 0 }

    private func append(_ child: EncodingNode.Child) { node.list?.append(child) }

    mutating func encodeNil() throws { append(.value(.null)) }
    mutating func encode(_ value: Bool) throws { append(.value(.bool(value))) }
    mutating func encode(_ value: String) throws { append(.value(.string(value))) }
    mutating func encode(_ value: Double) throws { append(.value(.double(value))) }
    mutating func encode(_ value: Int) throws { append(.value(.int(value))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        append(try EncodingNode.child(value, codingPath: codingPath + [IndexKey(count)]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = EncodingNode()
        let path = codingPath + [IndexKey(count)]
        append(.node(child))
        return NodeEncoder(node: child, codingPath: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        let path = codingPath + [IndexKey(count)]
        append(.node(child))
        return NodeEncoder(node: child, codingPath: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let child = EncodingNode()
        let path = codingPath + [IndexKey(count)]
        append(.node(child))
        return NodeEncoder(node: child, codingPath: path)
    }
}

private struct SingleNodeContainer: SingleValueEncodingContainer {
    let node: EncodingNode
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.value = .null }
    mutating func encode(_ value: Bool) throws { node.value = .bool(value) }
    mutating func encode(_ value: String) throws { node.value = .string(value) }
    mutating func encode(_ value: Double) throws { node.value = .double(value) }
    mutating func encode(_ value: Float) throws { node.value = .double(Double(value)) }
    mutating func encode(_ value: Int) throws { node.value = .int(value) }
    mutating func encode(_ value: Int8) throws { node.value = .int(Int(value)) }
    mutating func encode(_ value: Int16) throws { node.value = .int(Int(value)) }
    mutating func encode(_ value: Int32) throws { node.value = .int(Int(value)) }
    mutating func encode(_ value: Int64) throws { node.value = .int(Int(value)) }
    mutating func encode(_ value: UInt) throws { node.value = try integer(value) }
    mutating func encode(_ value: UInt8) throws { node.value = .int(Int(value)) }
    mutating func encode(_ value: UInt16) throws { node.value = .int(Int(value)) }
    mutating func encode(_ value: UInt32) throws { node.value = .int(Int(value)) }
    mutating func encode(_ value: UInt64) throws { node.value = try integer(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let child = try EncodingNode.child(value, codingPath: codingPath)
        switch child {
        case .value(let value): node.value = value
        case .node(let inner):
            node.object = inner.object
            node.list = inner.list
            node.value = inner.value
        }
    }
}

private func integer<T: BinaryInteger>(_ value: T) throws -> TourValue {
    guard let int = Int(exactly: value) else {
        throw EncodingError.invalidValue(
            value, .init(codingPath: [], debugDescription: "\(value) does not fit in Int"))
    }
    return .int(int)
}

/// An array position as a coding key (for coding paths).
/// The coding key of a list element (shared with the decoding side, TourValueDecoding.swift).
struct IndexKey: CodingKey {
    var stringValue: String { "Index \(intValue ?? 0)" }
    var intValue: Int?

    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}
