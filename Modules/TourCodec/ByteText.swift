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

    /// The bytes of base64url text (padding optional), or nil when it is not base64url.
    public static func data(base64URL text: some StringProtocol) -> Data? {
        var bytes = Data(capacity: text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-"): bytes.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): bytes.append(UInt8(ascii: "/"))
            default: bytes.append(byte)
            }
        }
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (4 - bytes.count % 4) % 4))
        return Data(base64Encoded: bytes)
    }
}
