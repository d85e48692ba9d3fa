import Foundation
import Testing
import TourCodec
import TourCore
import TourFixtures

/// The member scan a rebuild folds a million recorded states with: as strict as the value reader,
/// and its keys as bytes the same keys.
extension JSONTextTests {
    /// The member scan refuses exactly what the value reader refuses: objects with one byte
    /// changed (to a quote, a backslash, a control character, a digit, a sign, a dot, an exponent,
    /// a bracket), long strings and numbers among them, read both ways.
    @Test func theMemberScanRefusesWhatTheReaderRefuses() throws {
        var random = SplitMix64(seed: 19)
        let replacements: [UInt8] = Array("\"\\\u{1}\n0123456789-+.eE{}[],:ntf ".utf8)
        var compared = 0
        for round in 0..<3_000 {
            var object = random.context()
            object["long\(round)"] = .string(String(repeating: "abcdefgh", count: round % 5) + "ü")
            object["n\(round)"] =
                round % 2 == 0 ? .int(Int(random.next() >> 1)) : .double(Double(round) + 0.5)
            var bytes = Array(try TourValue.object(object).jsonText().utf8)
            let position = Int(random.next() % UInt64(bytes.count))
            bytes[position] = replacements[Int(random.next() % UInt64(replacements.count))]
            let text = String(decoding: bytes, as: UTF8.self)
            guard text.utf8.elementsEqual(bytes) else { continue }
            let read = try? TourValue(jsonText: text)
            if case .object? = read {} else if read != nil { continue }
            let scanned = try? Self.members(text)
            #expect((scanned != nil) == (read != nil), "\(text)")
            compared += 1
        }
        #expect(compared > 2_000)
    }

    /// Keys as bytes (what a rebuild compares) are the keys' text: escapes decoded, the same
    /// members in the same order, with the same values, for random objects and escaped keys.
    @Test func keysAsBytesAreTheKeysText() throws {
        var random = SplitMix64(seed: 18)
        var texts = [#"{"a\"b":1,"\u00e9t\u00e9":[2],"plain":{"k":"v"},"tab\there":null,"\\":"x"}"#]
        for _ in 0..<300 { texts.append(try TourValue.object(random.context()).jsonText()) }
        for text in texts {
            var bytes = Array(text.utf8)
            let members = try Self.members(text)
            var viaBytes: [(key: String, json: String)] = []
            try bytes.withUnsafeMutableBufferPointer { buffer in
                try TourValue.forEachMemberBytes(ofObject: UnsafeBufferPointer(buffer)) { key, json in
                    viaBytes.append(
                        (String(decoding: key, as: UTF8.self), String(decoding: json, as: UTF8.self)))
                }
            }
            #expect(viaBytes.map(\.key) == members.map(\.key), "\(text)")
            #expect(viaBytes.map(\.json) == members.map(\.json), "\(text)")
        }
        #expect(try Self.members(texts[0]).map(\.key) == ["a\"b", "été", "plain", "tab\there", "\\"])
    }
}
