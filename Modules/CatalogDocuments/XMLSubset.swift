/// The part of XML that translation files use (XLIFF 2.0), read strictly: elements, attributes,
/// text, CDATA, comments, processing instructions, the five predefined entities and character
/// references.
///
/// Written here rather than taken from Foundation's `XMLParser`: on Linux that is FoundationXML
/// over libxml2, which every product's command line would then load at start-up (its cold start
/// is a goal, Docs/Performance.md), and a translation file needs none of what libxml2 adds. A
/// document type declaration is refused, so no entity can be defined: nothing expands and nothing
/// outside the file is read.
struct XMLElement: Sendable, Equatable {
    enum Node: Sendable, Equatable {
        case element(XMLElement)
        case text(String)
    }

    /// The local name (a namespace prefix dropped: `xliff:unit` is `unit`).
    var name: String
    /// By local name; namespace declarations (`xmlns`, `xmlns:x`) by their whole name.
    var attributes: [String: String]
    var children: [Node]
    /// The line the element starts on, for messages.
    var line: Int

    /// The child elements named `name`, in order.
    func elements(_ name: String) -> [XMLElement] {
        children.compactMap {
            if case .element(let element) = $0, element.name == name { return element }
            return nil
        }
    }

    func element(_ name: String) -> XMLElement? { elements(name).first }

    /// The element's text, its children's text included.
    var text: String {
        children.map {
            switch $0 {
            case .text(let text): text
            case .element(let element): element.text
            }
        }.joined()
    }

    /// Whether any child is an element (inline markup, which a translation's text must not have).
    var hasChildElements: Bool {
        children.contains {
            if case .element = $0 { return true }
            return false
        }
    }
}

struct XMLSubsetError: Error, Equatable, CustomStringConvertible {
    var line: Int
    var message: String
    var description: String { "line \(line): \(message)" }
}

/// Reads one document (``XMLElement``).
struct XMLSubsetReader {
    /// How deep elements may nest: XLIFF needs five levels; a deeper file is not a translation file.
    static let maximumDepth = 32

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1

    static func document(_ text: String) throws(XMLSubsetError) -> XMLElement {
        var reader = XMLSubsetReader(bytes: Array(text.utf8))
        return try reader.document()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    private mutating func document() throws(XMLSubsetError) -> XMLElement {
        try skipMisc()
        guard peek() == UInt8(ascii: "<") else { throw fail("expected the root element, found text") }
        let root = try element(depth: 1)
        try skipMisc()
        guard index == bytes.count else { throw fail("there is more after the root element") }
        return root
    }

    /// Whitespace, comments and processing instructions (before and after the root element).
    private mutating func skipMisc() throws(XMLSubsetError) {
        while true {
            skipWhitespace()
            if starts("<?") {
                try skip(past: "?>", what: "a processing instruction")
            } else if starts("<!--") {
                try skip(past: "-->", what: "a comment")
            } else if starts("<!") {
                throw fail("a document type declaration is not read (it could define entities); remove it")
            } else {
                return
            }
        }
    }

    private mutating func element(depth: Int) throws(XMLSubsetError) -> XMLElement {
        guard depth <= Self.maximumDepth else {
            throw fail("elements nest deeper than \(Self.maximumDepth) levels")
        }
        let startLine = line
        index += 1  // "<"
        let qualified = try name()
        var attributes: [String: String] = [:]
        while true {
            let hadSpace = skipWhitespace()
            if starts("/>") {
                index += 2
                return XMLElement(
                    name: Self.local(qualified), attributes: attributes, children: [], line: startLine)
            }
            if peek() == UInt8(ascii: ">") {
                index += 1
                break
            }
            guard hadSpace else { throw fail("expected a space, '>' or '/>' after <\(qualified)") }
            let attribute = try name()
            skipWhitespace()
            guard peek() == UInt8(ascii: "=") else {
                throw fail("attribute \(attribute) has no '=' and value")
            }
            index += 1
            skipWhitespace()
            guard let quote = peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw fail("the value of attribute \(attribute) is not in quotes")
            }
            index += 1
            let start = index
            while let byte = peek(), byte != quote {
                guard byte != UInt8(ascii: "<") else {
                    throw fail("'<' inside the value of attribute \(attribute)")
                }
                advance()
            }
            guard peek() == quote else { throw fail("the value of attribute \(attribute) is not closed") }
            let value = try decode(start..<index, attribute: true)
            index += 1
            let key = attribute.hasPrefix("xmlns") ? attribute : Self.local(attribute)
            guard attributes.updateValue(value, forKey: key) == nil else {
                throw fail("attribute \(attribute) is given twice on <\(qualified)>")
            }
        }
        var children: [XMLElement.Node] = []
        while true {
            guard index < bytes.count else {
                throw fail("<\(qualified)> (line \(startLine)) is never closed")
            }
            if starts("</") {
                index += 2
                let closing = try name()
                skipWhitespace()
                guard closing == qualified, peek() == UInt8(ascii: ">") else {
                    throw fail("</\(closing)> closes <\(qualified)> (line \(startLine))")
                }
                index += 1
                return XMLElement(
                    name: Self.local(qualified), attributes: attributes, children: children, line: startLine)
            } else if starts("<!--") {
                try skip(past: "-->", what: "a comment")
            } else if starts("<![CDATA[") {
                index += 9
                let start = index
                try skip(past: "]]>", what: "a CDATA section")
                children.append(
                    .text(Self.normalizedLines(String(decoding: bytes[start..<(index - 3)], as: UTF8.self))))
            } else if starts("<?") {
                try skip(past: "?>", what: "a processing instruction")
            } else if peek() == UInt8(ascii: "<") {
                children.append(.element(try element(depth: depth + 1)))
            } else {
                let start = index
                while let byte = peek(), byte != UInt8(ascii: "<") { advance() }
                children.append(.text(try decode(start..<index, attribute: false)))
            }
        }
    }

    /// A name: up to whitespace, `=`, `/`, `>` or a quote; it may not be empty or start with a digit.
    private mutating func name() throws(XMLSubsetError) -> String {
        let start = index
        while let byte = peek(),
            !Self.isWhitespace(byte), !"=/>\"'<".utf8.contains(byte)
        {
            index += 1
        }
        guard index > start, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[start]),
            bytes[start] != UInt8(ascii: "-"), bytes[start] != UInt8(ascii: ".")
        else { throw fail("expected a name") }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Text or an attribute's value with its references replaced and its line ends made `\n`
    /// (an attribute's whitespace becomes spaces, as XML says).
    private func decode(_ range: Range<Int>, attribute: Bool) throws(XMLSubsetError) -> String {
        let raw = Self.normalizedLines(String(decoding: bytes[range], as: UTF8.self))
        let literal = attribute ? String(raw.map { $0 == "\n" || $0 == "\t" ? " " : $0 }) : raw
        guard literal.contains("&") else {
            guard !literal.contains("]]>") else { throw fail("']]>' is not allowed in text") }
            return literal
        }
        var result = ""
        var rest = Substring(literal)
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";"),
                rest.distance(from: amp, to: semicolon) <= 10
            else {
                throw fail("'&' that starts no reference: write &amp;")
            }
            let reference = rest[rest.index(after: amp)..<semicolon]
            switch reference {
            case "lt": result += "<"
            case "gt": result += ">"
            case "amp": result += "&"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                guard reference.hasPrefix("#"), let scalar = Self.scalar(reference.dropFirst()) else {
                    throw fail(
                        "&\(reference); is not read: only &lt; &gt; &amp; &quot; &apos; and &#…; are")
                }
                result.unicodeScalars.append(scalar)
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }

    private static func scalar(_ digits: Substring) -> Unicode.Scalar? {
        let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
        guard let value, let scalar = Unicode.Scalar(value), XMLText.isAllowed(scalar) else { return nil }
        return scalar
    }

    private static func normalizedLines(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "\r")) else { return text }
        return text.replacingCharacters("\r\n", with: "\n").replacingCharacters("\r", with: "\n")
    }

    private static func local(_ name: String) -> String {
        name.lastIndex(of: ":").map { String(name[name.index(after: $0)...]) } ?? name
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private func starts(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return text.withUTF8Buffer { bytes[index..<(index + count)].elementsEqual($0) }
    }

    private mutating func advance() {
        if bytes[index] == 0x0A { line += 1 }
        index += 1
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = index
        while let byte = peek(), Self.isWhitespace(byte) { advance() }
        return index > start
    }

    private mutating func skip(past end: StaticString, what: String) throws(XMLSubsetError) {
        let startLine = line
        while index < bytes.count {
            if starts(end) {
                index += end.utf8CodeUnitCount
                return
            }
            advance()
        }
        line = startLine
        throw fail("\(what) is never closed")
    }

    private func fail(_ message: String) -> XMLSubsetError { XMLSubsetError(line: line, message: message) }
}

/// Writing text into XML.
enum XMLText {
    /// Whether XML 1.0 can carry `scalar` at all (not most control characters, not U+FFFE/U+FFFF).
    static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    /// `text` escaped for an element's content or (with `attribute`) a quoted attribute value; line
    /// ends and tabs a reader would change are written as references so they come back as they were.
    static func escaped(_ text: String, attribute: Bool = false) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"" where attribute: result += "&quot;"
            case "\r": result += "&#13;"
            case "\n" where attribute: result += "&#10;"
            case "\t" where attribute: result += "&#9;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

extension String {
    fileprivate func replacingCharacters(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
