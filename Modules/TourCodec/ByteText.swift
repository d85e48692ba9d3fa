#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Bytes written as text, one way each everywhere: lowercase hexadecimal (digests, fingerprints,
/// pseudonyms) and base64url without padding (RFC 4648 §5: tokens, cookies, PKCE, JWT parts).
public enum ByteText {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Two lowercase hexadecimal digits a byte.
    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// base64url without padding, by bytes (no string replacing: every request verifies a token).
    public static func base64URL<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text = Array(Data(bytes).base64EncodedData())
        while text.last == UInt8(ascii: "=") { text.removeLast() }
        for index in text.indices {
            switch text[index] {
            case UInt8(ascii: "+"): text[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): text[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of base64url text, or nil when it is not base64url. One spelling per value, as a
    /// token's text is its identity (checked signatures are remembered by it): only the URL
    /// alphabet (no `+` or `/`), padding only at the end and only as much as base64 has, and the
    /// unused low bits of the last character zero (RFC 4648 §3.5), so no second text decodes to the
    /// same bytes. Padding stays optional.
    public static func data(base64URL text: some StringProtocol) -> Data? {
        var characters = Array(text.utf8)
        var padding = 0
        while characters.last == UInt8(ascii: "=") {
            characters.removeLast()
            padding += 1
        }
        guard padding == 0 || (padding <= 2 && (characters.count + padding) % 4 == 0) else { return nil }
        // Six bits a character, a byte out whenever eight are in hand.
        var bytes = Data(capacity: characters.count * 3 / 4)
        var held: UInt32 = 0
        var bits: UInt32 = 0
        for character in characters {
            guard let value = sextet(character) else { return nil }
            held = (held << 6 | UInt32(value)) & 0xFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: held >> bits))
            }
        }
        // Left over: none, or the unused 2 or 4 bits of the last character, which must be zero; 6
        // (a lone last character) are no byte.
        guard bits < 6, held & ((1 << bits) - 1) == 0 else { return nil }
        return bytes
    }

    /// The six bits a base64url character stands for.
    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
