/// JSON text for ``TourValue``, written and read directly: the stored rows, the journal and the
/// CLI's `--json` documents are made and read here, without Foundation's `JSONEncoder` and
/// `JSONDecoder`, whose generic paths make a dynamic cast (and on first use a scan of every
/// protocol conformance in the binary) per value type.
///
/// The text is the same as `JSONEncoder` with `.sortedKeys` writes (`JSONTextTests` compares them
/// over random values): keys sorted by their UTF-8 bytes, no spaces, whole doubles without ".0"
/// (`2.0` is `2`), control characters escaped as `JSONEncoder` escapes them, `/` escaped unless
/// `escapingSlashes` is false. Reading follows `JSONDecoder` into a `TourValue`: a number that is a
/// whole value within `Int` (`2`, `2.0`, `1e2`) is `.int`, any other number `.double`.
extension TourValue {
    /// The value as compact JSON text with sorted keys.
    ///
    /// - Throws: ``JSONTextError`` for a double that is not finite (JSON has no infinity or NaN).
    public func jsonText(escapingSlashes: Bool = false) throws(JSONTextError) -> String {
        var writer = JSONTextWriter(escapingSlashes: escapingSlashes)
        try writer.write(self)
        return writer.text
    }

    /// Reads one JSON document (surrounding whitespace allowed).
    public init(jsonText text: String) throws(JSONTextError) {
        var copy = text
        let parsed: Result<TourValue, JSONTextError> = copy.withUTF8 { bytes in
            var reader = JSONTextReader(bytes: bytes)
            return Result { () throws(JSONTextError) in try reader.document() }
        }
        self = try parsed.get()
    }

    /// Reads one JSON document from UTF-8 bytes.
    public init(jsonBytes bytes: UnsafeBufferPointer<UInt8>) throws(JSONTextError) {
        var reader = JSONTextReader(bytes: bytes)
        self = try reader.document()
    }

    /// Reads one JSON document from bytes that came over a wire: refused unless they are UTF-8
    /// (a stored or typed text is a `String`, valid by construction).
    public init(jsonUTF8 bytes: some Collection<UInt8>) throws(JSONTextError) {
        guard var text = String(validating: bytes, as: UTF8.self) else {
            throw JSONTextError("the text is not UTF-8")
        }
        let parsed: Result<TourValue, JSONTextError> = text.withUTF8 { bytes in
            var reader = JSONTextReader(bytes: bytes)
            return Result { () throws(JSONTextError) in try reader.document() }
        }
        self = try parsed.get()
    }

    /// The value as compact JSON text with sorted keys, as UTF-8 bytes (a wire body).
    public func jsonUTF8(escapingSlashes: Bool = false) throws(JSONTextError) -> [UInt8] {
        var writer = JSONTextWriter(escapingSlashes: escapingSlashes)
        try writer.write(self)
        return writer.bytes
    }

    /// The members of a JSON object, each value left as text (checked as strictly as
    /// `init(jsonText:)` reads it, nothing made of it): for folding many stored objects and reading
    /// only the last of each.
    public static func members(ofObject bytes: UnsafeBufferPointer<UInt8>) throws(JSONTextError) -> [(
        key: String, json: String
    )] {
        var reader = JSONTextReader(bytes: bytes)
        return try reader.rawMembers()
    }

    /// Calls `visit` with each member of a JSON object: its key, and its value as text bytes
    /// (checked as ``members(ofObject:)`` checks them), valid only during the call. Nothing is
    /// made of a value the caller does not keep.
    public static func forEachMember(
        ofObject bytes: UnsafeBufferPointer<UInt8>, _ visit: (String, UnsafeBufferPointer<UInt8>) -> Void
    ) throws(JSONTextError) {
        var reader = JSONTextReader(bytes: bytes)
        try reader.forEachRawMember(visit)
    }

    /// ``forEachMember(ofObject:_:)`` with each key as its UTF-8 bytes (escapes decoded), valid
    /// only during the call: no String is made of a key the caller has met before.
    public static func forEachMemberBytes(
        ofObject bytes: UnsafeBufferPointer<UInt8>,
        _ visit: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void
    ) throws(JSONTextError) {
        var reader = JSONTextReader(bytes: bytes)
        try reader.forEachRawMemberBytes(visit)
    }
}

/// Why JSON text could not be read or written.
public struct JSONTextError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}

/// Appends JSON text for values to a byte buffer.
public struct JSONTextWriter {
    public private(set) var bytes: [UInt8] = []
    let escapingSlashes: Bool

    public init(escapingSlashes: Bool = false) {
        self.escapingSlashes = escapingSlashes
        bytes.reserveCapacity(256)
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func write(_ value: TourValue) throws(JSONTextError) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .int(let number): write(number)
        case .double(let number): try write(number)
        case .string(let text): write(text)
        case .list(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                try write(item)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object): try writeObject(object)
        }
    }

    /// `{...}` of these members, keys sorted by their bytes.
    private mutating func writeObject<Members: Sequence>(_ members: Members) throws(JSONTextError)
    where Members.Element == (key: String, value: TourValue) {
        bytes.append(UInt8(ascii: "{"))
        if members.underestimatedCount <= 1 {
            // Nothing to sort (a dictionary's count is exact).
            var first = true
            for member in members {
                write(key: member.key, first: first)
                first = false
                try write(member.value)
            }
        } else {
            for (index, member) in members.sorted(by: { Self.precedes($0.key, $1.key) }).enumerated() {
                write(key: member.key, first: index == 0)
                try write(member.value)
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// A double as `JSONEncoder` writes it: Swift's shortest round-trip text without a ".0" suffix.
    public mutating func write(_ number: Double) throws(JSONTextError) {
        guard number.isFinite else { throw JSONTextError("\(number) cannot be written as JSON") }
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        append(text)
    }

    /// The key of an object's member, with the comma before it unless it is the object's first:
    /// for a type that writes its own form (``JSONTextWritable``), its members in key order.
    public mutating func write(key: String, first: Bool = false) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        write(key)
        bytes.append(UInt8(ascii: ":"))
    }

    /// A list of strings. (An array's own overload: the generic one below runs unspecialised
    /// outside this module, an iterator's witness call per element.)
    public mutating func write(strings: [String]) {
        bytes.append(UInt8(ascii: "["))
        for index in strings.indices {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            write(strings[index])
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A list of strings.
    public mutating func write<S: Sequence>(strings: S) where S.Element == String {
        bytes.append(UInt8(ascii: "["))
        var first = true
        for text in strings {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            write(text)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// An object of these members, nil ones left out, keys sorted by their bytes (as for any object).
    /// Members listed in key order are written as they come (the stored forms list theirs so);
    /// others are sorted first.
    public mutating func write(members: [(key: String, value: TourValue?)]) throws(JSONTextError) {
        var previous: String?
        for member in members where member.value != nil {
            if let previous, !Self.precedes(previous, member.key) {
                try writeObject(
                    members.compactMap { member in member.value.map { (key: member.key, value: $0) } })
                return
            }
            previous = member.key
        }
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for member in members {
            guard let value = member.value else { continue }
            write(key: member.key, first: first)
            first = false
            try write(value)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Text that is already JSON (a stored value written before), as it is.
    public mutating func writeJSON(_ json: String) { append(json) }

    /// Punctuation between values: `{`, `}`, `[`, `]`, `,`, `:`.
    public mutating func write(punctuation: Unicode.Scalar) { bytes.append(UInt8(ascii: punctuation)) }

    /// Whether `a` sorts before `b` by their UTF-8 bytes (the order of an object's keys).
    public static func precedes(_ a: String, _ b: String) -> Bool {
        let fast = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right -> Bool in
                for index in 0..<min(left.count, right.count) where left[index] != right[index] {
                    return left[index] < right[index]
                }
                return left.count < right.count
            }
        }
        if let fast = fast ?? nil { return fast }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// An integer in decimal, written straight into the buffer.
    public mutating func write(_ number: Int) {
        if number == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        // The magnitude as unsigned, so Int.min has one.
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
        }
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        withUnsafeBytes(of: &digits) { buffer in bytes.append(contentsOf: buffer[(24 - count)...]) }
    }

    /// A string, quoted and escaped.
    public mutating func write(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        // Most text needs no escape: copied whole.
        let copied = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8
            where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
                || (byte == UInt8(ascii: "/") && escapingSlashes)
            {
                return false
            }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "/") where escapingSlashes: append("\\/")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0x00..<0x20:
                append("\\u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }
}

/// A stored form that writes its JSON text straight into a writer: the very text of its
/// `tourValue.jsonText()` (the tests hold the two equal), without building the value's tree of
/// dictionaries first. For the forms every event writes (a flow's state, the journal's facts).
public protocol JSONTextWritable {
    func writeJSON(to writer: inout JSONTextWriter) throws(JSONTextError)
}

// Inlinable, so a caller's module specialises them (unspecialised, a list of facts made generic
// metadata and an enumerated iterator for every element).
extension JSONTextWritable {
    /// The value's JSON text written straight: the text of `tourValue.jsonText()`.
    @inlinable public func writtenJSONText() throws(JSONTextError) -> String {
        var writer = JSONTextWriter()
        try writeJSON(to: &writer)
        return writer.text
    }
}

extension Array: JSONTextWritable where Element: JSONTextWritable {
    @inlinable public func writeJSON(to writer: inout JSONTextWriter) throws(JSONTextError) {
        writer.write(punctuation: "[")
        var first = true
        for element in self {
            if !first { writer.write(punctuation: ",") }
            first = false
            try element.writeJSON(to: &writer)
        }
        writer.write(punctuation: "]")
    }
}
