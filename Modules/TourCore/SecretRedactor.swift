/// Masks the values of a product's secret fields wherever typed input is quoted back: in an echoed
/// script line, a refusal, a parse error, a usage message, a JSON document.
///
/// Every `KEY=VALUE` (or `KEY:VALUE`) whose key names a secret field, in any letter case and
/// wherever it stands in the text (inside quotes, after other text, with spaces around the
/// separator, doubled separators), has its value replaced by ``Secret/redactedText``. A quoted value
/// is masked to its closing quote, or to the end when the quote is never closed; an unquoted one to
/// the next whitespace. Masking too much is harmless; masking too little leaks a password.
public struct SecretRedactor: Sendable, Equatable {
    /// The secret field names, lowercased.
    public let keys: Set<String>
    /// The same names as scalars, longest first, built once: the scan compares them at every
    /// position of every text the CLI prints.
    private let keyScalars: [[Unicode.Scalar]]
    /// The scalars a key can begin with (lowercase, as keys are compared): at nearly every position
    /// of a text none of them stands, and the keys need not be compared there at all. Nil when a
    /// key is empty (it starts everywhere).
    private let firstScalars: Set<Unicode.Scalar>?

    public init<Names: Sequence>(secretFields: Names) where Names.Element == String {
        keys = Set(secretFields.map { $0.lowercased() })
        keyScalars = keys.sorted { ($0.count, $0) > ($1.count, $1) }.map { Array($0.unicodeScalars) }
        firstScalars = keyScalars.contains(where: \.isEmpty) ? nil : Set(keyScalars.compactMap(\.first))
    }

    /// No secrets: every text is returned as it is.
    public static let none = SecretRedactor(secretFields: [String]())

    /// Text as a person reads it.
    public func redact(_ text: String) -> String {
        keys.isEmpty ? text : mask(text, json: false, input: false)
    }

    /// A JSON document: the same rule applied inside its string values, whose quotes, backslashes and
    /// whitespace are escaped. The document stays valid JSON.
    public func redactJSON(_ json: String) -> String {
        keys.isEmpty ? json : mask(json, json: true, input: false)
    }

    /// Text that quotes typed input back (an echoed line, a refusal, a usage error), as text or as a
    /// JSON document. Stricter than ``redact(_:)``: a word that begins with a secret field's name and
    /// goes on without a separator (`passwordhunter2`, `password'hunter2'`, a key such as
    /// `passwordX=...` the action does not take) is a value typed without its `=`, and everything
    /// after the name is masked to the end of the word. What follows the name only as prose
    /// punctuation (`password.`, `'password'`) is left, so "its parameters: username, password." reads
    /// as it should.
    public func redactInput(_ text: String, json: Bool = false) -> String {
        keys.isEmpty ? text : mask(text, json: json, input: true)
    }

    private func mask(_ text: String, json: Bool, input: Bool) -> String {
        let scalars = Array(text.unicodeScalars)
        var output = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let lengths = keyLengths(at: index, in: scalars)
            let separated = lengths.lazy.compactMap { valueRange(after: index + $0, in: scalars, json: json) }
                .first
            let quote = input ? openingQuote(before: index, in: scalars, json: json) : nil
            let glued =
                input && separated == nil
                    && (index == 0 || quote != nil || !Self.isWordScalar(scalars[index - 1]))
                ? lengths.lazy.compactMap {
                    gluedRange(after: index + $0, in: scalars, json: json, quote: quote)
                }.first
                : nil
            if let value = separated ?? glued {
                output.append(contentsOf: scalars[index..<value.lowerBound])
                output.append(contentsOf: Secret.redactedText.unicodeScalars)
                index = value.upperBound
                continue
            }
            output.append(scalars[index])
            index += 1
        }
        return String(output)
    }

    /// One word of typed input that was meant as a parameter and is quoted back whole (a
    /// `passwordhunter2` written without its `=`, a key `passwordX` the action does not take): when
    /// it begins with a secret field's name, everything after the name is masked.
    public func redactWord(_ word: String) -> String {
        let scalars = Array(word.unicodeScalars)
        guard let length = keyLengths(at: 0, in: scalars).first, length < scalars.count else { return word }
        var output = String.UnicodeScalarView(scalars[..<length])
        output.append(contentsOf: Secret.redactedText.unicodeScalars)
        return String(output)
    }

    /// The lengths of the secret keys that start at `index`, longest first.
    private func keyLengths(at index: Int, in scalars: [Unicode.Scalar]) -> [Int] {
        if let firstScalars, index < scalars.count, !firstScalars.contains(Self.lowercased(scalars[index])) {
            return []
        }
        return keyScalars.compactMap { keyScalars -> Int? in
            guard index + keyScalars.count <= scalars.count else { return nil }
            for (offset, scalar) in keyScalars.enumerated()
            where Self.lowercased(scalars[index + offset]) != scalar {
                return nil
            }
            return keyScalars.count
        }
    }

    /// After a key: optional spaces, `=` or `:`, optional spaces, then the value's range (empty
    /// values are not masked). Nil when no separator follows the key.
    ///
    /// The value is read as the script tokenizer reads a word: it ends at whitespace outside
    /// quotes, and a quote anywhere in it (`"` or `'`) runs to its closing quote, or to the end of
    /// the text. Inside a JSON string, `\"` is the quote, `\t` `\n` `\r` are whitespace, and an
    /// unescaped `"` ends the string and the value.
    private func valueRange(after start: Int, in scalars: [Unicode.Scalar], json: Bool) -> Range<Int>? {
        var index = skipSpaces(from: start, in: scalars, json: json)
        guard index < scalars.count, scalars[index] == "=" || scalars[index] == ":" else { return nil }
        // A JSON object's own `"key": value` is structure, not typed input: the key is followed by
        // its closing quote, so it never gets here.
        index = skipSpaces(from: index + 1, in: scalars, json: json)
        let valueStart = index
        var quote: [Unicode.Scalar]?
        while index < scalars.count {
            if json && scalars[index] == "\"" { break }
            let unit = self.unit(at: index, in: scalars, json: json)
            if let open = quote {
                if unit == open { quote = nil }
            } else if unit == ["\""] || unit == ["'"] || unit == ["\\", "\""] {
                quote = unit
            } else if Self.isSpace(unit) {
                break
            }
            index += unit.count
        }
        return index > valueStart ? valueStart..<index : nil
    }

    /// The quote a key stands right after (`'password hunter2'` quoted back), if any.
    private func openingQuote(before index: Int, in scalars: [Unicode.Scalar], json: Bool) -> [Unicode
        .Scalar]?
    {
        guard index > 0 else { return nil }
        switch scalars[index - 1] {
        case "'": return ["'"]
        case "\"" where !json: return ["\""]
        case "\"" where index > 1 && scalars[index - 2] == "\\": return ["\\", "\""]
        default: return nil
        }
    }

    /// After a key, in typed input: the rest of the word (to whitespace, or the end of a JSON
    /// string), or inside quotes the rest of the quoted text, unless it is empty or only prose
    /// punctuation.
    private func gluedRange(
        after start: Int, in scalars: [Unicode.Scalar], json: Bool, quote: [Unicode.Scalar]?
    ) -> Range<Int>? {
        var index = start
        var prose = true
        while index < scalars.count {
            if json && scalars[index] == "\"" { break }
            let unit = self.unit(at: index, in: scalars, json: json)
            if let quote, unit == quote { break }
            if quote == nil && Self.isSpace(unit) { break }
            if !(unit.count == 1 && Self.prosePunctuation.contains(unit[0])) && unit != ["\\", "\""] {
                prose = false
            }
            index += unit.count
        }
        return index > start && !prose ? start..<index : nil
    }

    private static let prosePunctuation = Set(".,;!?)]}'\"`".unicodeScalars)

    private static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
    }

    /// One character as the value scan sees it: a scalar, or in JSON an escape pair (`\"`, `\n`).
    private func unit(at index: Int, in scalars: [Unicode.Scalar], json: Bool) -> [Unicode.Scalar] {
        json && scalars[index] == "\\" && index + 1 < scalars.count
            ? [scalars[index], scalars[index + 1]] : [scalars[index]]
    }

    private static func isSpace(_ unit: [Unicode.Scalar]) -> Bool {
        unit.count == 1
            ? unit[0].properties.isWhitespace : unit[0] == "\\" && "tnr".unicodeScalars.contains(unit[1])
    }

    private func skipSpaces(from start: Int, in scalars: [Unicode.Scalar], json: Bool) -> Int {
        var index = start
        while index < scalars.count {
            let unit = self.unit(at: index, in: scalars, json: json)
            guard Self.isSpace(unit) else { break }
            index += unit.count
        }
        return index
    }

    private static func lowercased(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32) ?? scalar : scalar
    }
}

extension TourCatalog {
    /// Masks this product's secret field values wherever input is quoted back.
    public var redactor: SecretRedactor { SecretRedactor(secretFields: secretFieldNames) }
}
