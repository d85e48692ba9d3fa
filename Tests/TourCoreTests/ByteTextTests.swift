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

    /// A value has one spelling: base64's own characters, misplaced or extra padding, a lone
    /// character and unused bits set in the last character are each refused, so no second text
    /// of a token decodes to its bytes.
    @Test func onlyTheOneSpellingOfAValueIsRead() {
        #expect(ByteText.data(base64URL: "-_8") == Data([0xFB, 0xFF]))
        let refused = [
            "+/8",  // base64's characters 62 and 63
            "Zh",  // "f" with the unused low bits of its last character set ("Zg" is the spelling)
            "Zm9", "Zm+", "Zm8=x", "Zm=8",  // unused bits; '+'; padding in the middle
            "Zg=", "Zm9v=", "Zg===",  // padding that does not make a multiple of four
            "Z", "Zm9vY",  // one character left over (six bits are no byte)
            "Zm 9v", "Zm9v\n",  // whitespace
        ]
        for text in refused {
            #expect(ByteText.data(base64URL: text) == nil, "\(text)")
        }
        // Each of the 64 possible last characters after "Zm": only those with the low two bits
        // clear are a spelling of two bytes.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for (value, character) in alphabet.enumerated() {
            #expect(ByteText.data(base64URL: "Zm9" + String(character)) != nil, "Zm9\(character)")
            let two = ByteText.data(base64URL: "Zm" + String(character))
            #expect((two != nil) == (value & 0x03 == 0), "Zm\(character)")
            let three = ByteText.data(base64URL: "Zm9" + String(character) + "Yg")
            #expect(three != nil)
            if let two { #expect(ByteText.base64URL(two) == "Zm" + String(character)) }
        }
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
