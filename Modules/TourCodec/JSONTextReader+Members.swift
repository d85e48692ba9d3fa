/// Reading an object's members without building their values: the journal's fold reads a
/// million recorded states and keeps only the last form of each flow.
extension JSONTextReader {
    /// The members of the document, an object, with each value's text.
    mutating func rawMembers() throws(JSONTextError) -> [(key: String, json: String)] {
        var members: [(key: String, json: String)] = []
        try forEachRawMember { key, json in
            members.append((key, String(decoding: json, as: UTF8.self)))
        }
        return members
    }

    /// Calls `visit` with each member's key and its value's bytes (checked, nothing made of them),
    /// in order; the bytes are valid only during the call.
    mutating func forEachRawMember(_ visit: (String, UnsafeBufferPointer<UInt8>) -> Void)
        throws(JSONTextError)
    {
        try forEachRawMemberBytes { key, json in visit(String(decoding: key, as: UTF8.self), json) }
    }

    /// ``forEachRawMember(_:)`` with each key as its UTF-8 bytes (escapes decoded), no String made
    /// of it: a fold over a million objects compares keys it has met before as bytes.
    mutating func forEachRawMemberBytes(
        _ visit: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void
    ) throws(JSONTextError) {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else { throw failure("expected an object") }
        index += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw failure("expected a key in quotes") }
                // A key without escapes (nearly every one) is its own bytes between the quotes.
                let quote = index
                try skipString()
                var decoded: [UInt8]? = nil
                if bytes[quote + 1..<index - 1].contains(UInt8(ascii: "\\")) {
                    index = quote
                    decoded = Array(try string().utf8)
                }
                let keyRange = quote + 1..<index - 1
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { throw failure("expected ':' after a key") }
                index += 1
                skipWhitespace()
                let start = index
                try skipValue()
                let json = UnsafeBufferPointer(rebasing: bytes[start..<index])
                if let decoded {
                    decoded.withUnsafeBufferPointer { visit($0, json) }
                } else {
                    visit(UnsafeBufferPointer(rebasing: bytes[keyRange]), json)
                }
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard peek() == UInt8(ascii: "}") else { throw failure("expected ',' or '}' in an object") }
                index += 1
                break
            }
        }
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected text after the JSON value") }
    }

    /// Moves past one value, checking it as strictly as ``value()`` reads it (brackets matched,
    /// commas and colons where they belong, strings, numbers and literals spelled right) but
    /// building nothing of it.
    private mutating func skipValue() throws(JSONTextError) {
        skipWhitespace()
        guard let byte = peek() else { throw failure("unexpected end of the JSON text") }
        switch byte {
        case UInt8(ascii: "{"):
            try enter()
            index += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return
            }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw failure("expected a key in quotes") }
                // Checked like any string, no text made of it (a rebuild skips millions of keys).
                try skipString()
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { throw failure("expected ':' after a key") }
                index += 1
                try skipValue()
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    depth -= 1
                    return
                default: throw failure("expected ',' or '}' in an object")
                }
            }
        case UInt8(ascii: "["):
            try enter()
            index += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return
            }
            while true {
                try skipValue()
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    depth -= 1
                    return
                default: throw failure("expected ',' or ']' in an array")
                }
            }
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try skipNumber()
        default:
            // A literal: small, read as `value()` reads it.
            _ = try value()
        }
    }

    /// Moves past a number. A whole one of up to 18 digits (nearly all: positions, versions,
    /// activations) is checked by its grammar alone, which is all `number()` checks of it, since
    /// it always fits an `Int`; any other is read by `number()` itself (its range, its errors).
    private mutating func skipNumber() throws(JSONTextError) {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        let firstDigit = index
        if let first = peek(), first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") {
            index += 1
            if first != UInt8(ascii: "0") { skipDigits() }
            let continues = peek().map {
                $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E")
            }
            if continues != true, index - firstDigit <= 18 { return }
        }
        index = start
        _ = try value()
    }

    /// Moves past a quoted string (`index` at its opening quote), checked as ``string()`` checks
    /// it; one without escapes (nearly all) is only scanned, no text made of it.
    private mutating func skipString() throws(JSONTextError) {
        let quote = index
        index += 1
        let count = bytes.count
        while true {
            // Eight bytes at a time while none of them can end the string, escape or be a control
            // character (a word test that may stop early, never late); then byte by byte.
            if let base = bytes.baseAddress {
                while index &+ 8 <= count {
                    let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                    if Self.mayStopAString(word) { break }
                    index &+= 8
                }
            }
            let end = min(count, index &+ 8)
            while index < end {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return
                }
                if byte == UInt8(ascii: "\\") {
                    // Escapes are checked where they are decoded.
                    index = quote
                    _ = try string()
                    return
                }
                guard byte >= 0x20 else { throw failure("a control character in a string") }
                index += 1
            }
            guard index < count else { throw failure("a string without its closing quote") }
        }
    }

    /// Whether one of the eight bytes of `word` may be a quote, a backslash or below 0x20 (true for
    /// every word that has one; rarely for one that has not).
    @inline(__always)
    static func mayStopAString(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
        return hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C))
            || (word &- ones &* 0x20) & ~word & highs != 0
    }
}
