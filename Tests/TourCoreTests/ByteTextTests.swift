import Foundation
import Testing
import TourCodec

/// Bytes as text, written one way everywhere (``ByteText``): RFC 4648's test vectors for base64url
/// without padding, its two characters that differ from base64, and hexadecimal.
@Suite struct ByteTextTests {
    @Test func base64URLIsRFC4648WithoutPadding() {
        let vectors = [
            "": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE",
            "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in vectors {
            #expect(ByteText.base64URL(Array(plain.utf8)) == encoded, "\(plain)")
            #expect(ByteText.data(base64URL: encoded) == Data(plain.utf8), "\(encoded)")
            // Padding is optional when reading.
            let padded = encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)
            #expect(ByteText.data(base64URL: padded) == Data(plain.utf8), "\(padded)")
        }
        // The two characters base64url changes: 62 and 63.
        #expect(ByteText.base64URL([0xFB, 0xFF]) == "-_8")
        #expect(ByteText.data(base64URL: "-_8") == Data([0xFB, 0xFF]))
        #expect(ByteText.data(base64URL: "@@@@") == nil)
    }

    @Test func randomBytesComeBackAndMatchFoundationsBase64() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = ByteText.base64URL(bytes)
            #expect(ByteText.data(base64URL: text) == Data(bytes))
            let standard = Data(bytes).base64EncodedString()
            #expect(
                text
                    == standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(
                        of: "/", with: "_"
                    )
                    .replacingOccurrences(of: "=", with: ""))
            #expect(ByteText.hex(bytes) == bytes.map { String(format: "%02x", $0) }.joined())
        }
        #expect(ByteText.hex([0x00, 0x0F, 0xA0, 0xFF]) == "000fa0ff")
    }
}
