import Crypto
import Foundation
import Testing
import TourFixtures

@Suite("SHA-256")
struct SHA256Tests {
    /// FIPS 180-4's examples (and NIST's one-block and two-block messages).
    @Test func theStandardsExamples() {
        #expect(
            SHA256Hasher.hex(Array("".utf8))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256Hasher.hex(Array("abc".utf8))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256Hasher.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256Hasher.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Every byte handed over, however the bytes arrive: whole, in pieces of every size (a block
    /// begun by one update and finished by the next, several blocks at once), and as a sequence
    /// with no contiguous storage, which is copied first.
    @Test func piecesAndSequencesGiveTheSameDigest() {
        var random = SplitMix64(seed: 0x5_4A25_7)
        for length in [0, 1, 55, 56, 63, 64, 65, 127, 128, 129, 300, 1_000, 5_000] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let theirs = Crypto.SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            var pieces = SHA256Hasher()
            var start = 0
            while start < length {
                let end = min(length, start + Int.random(in: 0...150, using: &random))
                pieces.update(Array(bytes[start..<end]))
                start = end
            }
            let digest = pieces.finalize().map { String(format: "%02x", $0) }.joined()
            #expect(SHA256Hasher.hex(bytes) == theirs, "length \(length)")
            #expect(digest == theirs, "length \(length), in pieces")
            #expect(SHA256Hasher.hex(bytes.lazy.map { $0 }) == theirs, "length \(length), as a lazy sequence")
        }
    }
}
