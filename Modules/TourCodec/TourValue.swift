/// A JSON-shaped value: what contexts, form fields, effect payloads and domain state are made of.
///
/// It encodes as plain JSON (`"x"`, `3`, `true`, `[..]`, `{..}`, `null`) so journal rows and
/// `--json` output stay readable.
public enum TourValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case list([TourValue])
    case object([String: TourValue])

    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    public var intValue: Int? {
        switch self {
        case .int(let value): value
        case .double(let value) where value == value.rounded(): Int(exactly: value)
        case .string(let value): Int(value)
        default: nil
        }
    }
    public var listValue: [TourValue]? { if case .list(let value) = self { value } else { nil } }
    public var objectValue: [String: TourValue]? { if case .object(let value) = self { value } else { nil } }

    /// How many items a list holds; 0 for null, 1 for any other single value.
    public var count: Int {
        switch self {
        case .null: 0
        case .list(let items): items.count
        case .string(let text): text.isEmpty ? 0 : 1
        default: 1
        }
    }

    /// Text for a person: lists are joined with ", ".
    public var displayText: String {
        switch self {
        case .null: ""
        case .bool(let value): value ? "yes" : "no"
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): value
        case .list(let items): items.map({ $0.displayText }).joined(separator: ", ")
        case .object(let object):
            object.keys.sorted().map { "\($0)=\(object[$0]?.displayText ?? "")" }.joined(separator: ", ")
        }
    }
}

extension TourValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([TourValue].self) {
            self = .list(value)
        } else {
            self = .object(try container.decode([String: TourValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if let ours = encoder as? NodeEncoder {
            ours.node.value = self
            return
        }
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .list(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension TourValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: TourValue...) { self = .list(elements) }
    public init(dictionaryLiteral elements: (String, TourValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
