/// Reads JSON text (RFC 8259) into ``TourValue``s.
struct JSONTextReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0
    /// Containers nested deeper than this are refused, as `JSONDecoder` refuses them.
    private static let maximumDepth = 512

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The one value of the text; anything but whitespace after it is an error.
    mutating func document() throws(JSONTextError) -> TourValue {
        let value = try self.value()
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected text after the JSON value") }
        return value
    }

    mutating func value() throws(JSONTextError) -> TourValue {
        skipWhitespace()
        guard index < bytes.count else { throw failure("unexpected end of the JSON text") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try list()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character")
        }
    }

    private mutating func object() throws(JSONTextError) -> TourValue {
        try enter()
        index += 1
        var object: [String: TourValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw failure("expected a key in quotes") }
            let key = try string()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw failure("expected ':' after a key") }
            index += 1
            let value = try value()
            // A repeated key keeps its first value, as `JSONDecoder` does.
            if object[key] == nil { object[key] = value }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(object)
            default: throw failure("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func list() throws(JSONTextError) -> TourValue {
        try enter()
        index += 1
        var items: [TourValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .list(items)
        }
        while true {
            items.append(try value())
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .list(items)
            default: throw failure("expected ',' or ']' in an array")
            }
        }
    }

    mutating func enter() throws(JSONTextError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw failure("too many nested arrays or objects") }
    }

    /// A quoted string; `index` is at its opening quote.
    mutating func string() throws(JSONTextError) -> String {
        index += 1
        let start = index
        // The common case: no escapes, read in one piece.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(
                    decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("a control character in a string") }
            index += 1
        }
        var text = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { break }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hexQuad()
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A high surrogate must be followed by a low one: together, one scalar.
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw failure("a lone surrogate in a \\u escape") }
                        index += 2
                        let low = try hexQuad()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw failure("a lone surrogate in a \\u escape")
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw failure("an invalid \\u escape") }
                    text.append(contentsOf: String(Character(unicode)).utf8)
                default: throw failure("an invalid escape in a string")
                }
            default:
                guard byte >= 0x20 else { throw failure("a control character in a string") }
                text.append(byte)
            }
        }
        throw failure("a string without its closing quote")
    }

    private mutating func hexQuad() throws(JSONTextError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("an incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("an invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// A number as RFC 8259 spells it: whole numbers within `Int` are `.int`, others `.double`.
    private mutating func number() throws(JSONTextError) -> TourValue {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            throw failure("a number without digits")
        }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        var whole = true
        if peek() == UInt8(ascii: ".") {
            whole = false
            index += 1
            guard try digits() > 0 else { throw failure("a number without digits after '.'") }
        }
        if let exponent = peek(), exponent == UInt8(ascii: "e") || exponent == UInt8(ascii: "E") {
            whole = false
            index += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
            guard try digits() > 0 else { throw failure("a number without digits in its exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if whole, let integer = Int(text) { return .int(integer) }
        guard let double = Double(text), double.isFinite else { throw failure("a number out of range") }
        if !whole, let integer = Self.exactInteger(UnsafeBufferPointer(rebasing: bytes[start..<index])) {
            return .int(integer)
        }
        return .double(double)
    }

    /// The integer a number with a fraction or an exponent spells, when it is a whole number within
    /// `Int` (`2.0`, `1e2`, `4.3090457851577103e+18`), computed from its decimal digits as
    /// `JSONDecoder` does, not from the nearest double.
    static func exactInteger(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        var digits: [UInt8] = []
        var scale = 0
        var negative = false
        var exponent = 0
        var exponentNegative = false
        var part = 0  // 0: whole digits, 1: fraction, 2: exponent
        for byte in text {
            switch byte {
            case UInt8(ascii: "-") where part == 0: negative = true
            case UInt8(ascii: "-"): exponentNegative = true
            case UInt8(ascii: "+"): break
            case UInt8(ascii: "."): part = 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"): part = 2
            default:
                let digit = Int(byte - UInt8(ascii: "0"))
                if part == 2 {
                    guard exponent < 10_000 else { return nil }
                    exponent = exponent * 10 + digit
                } else {
                    digits.append(UInt8(digit))
                    if part == 1 { scale -= 1 }
                }
            }
        }
        scale += exponentNegative ? -exponent : exponent
        while scale < 0, digits.last == 0 {
            digits.removeLast()
            scale += 1
        }
        // Leading zeros dropped in one move (one at a time is quadratic in a long run of them).
        digits.removeFirst(digits.firstIndex { $0 != 0 } ?? digits.count)
        if digits.isEmpty { return 0 }
        guard scale >= 0, digits.count + scale <= 19 else { return nil }
        var magnitude: UInt64 = 0
        for digit in digits { magnitude = magnitude * 10 + UInt64(digit) }
        for _ in 0..<scale {
            let (product, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            magnitude = product
        }
        if negative {
            guard magnitude <= UInt64(Int.max) + 1 else { return nil }
            return magnitude == UInt64(Int.max) + 1 ? Int.min : -Int(magnitude)
        }
        guard magnitude <= UInt64(Int.max) else { return nil }
        return Int(magnitude)
    }

    private mutating func digits() throws(JSONTextError) -> Int {
        let start = index
        skipDigits()
        return index - start
    }

    mutating func skipDigits() {
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            index += 1
        }
    }

    private mutating func literal(_ word: StaticString, _ value: TourValue) throws(JSONTextError) -> TourValue
    {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("unexpected end of the JSON text") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw failure("unexpected character")
        }
        index += count
        return value
    }

    @inline(__always)
    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    func failure(_ what: String) -> JSONTextError {
        JSONTextError("the JSON text is not valid: \(what) at byte \(index)")
    }
}
