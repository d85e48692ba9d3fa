import Foundation
import Testing
import TourCodec
import TourCore
import TourFixtures

/// The stored forms as 0.7.0 wrote them (with Foundation's `JSONEncoder` over each type's `Codable`
/// conformance), frozen in `StoredForms/corpus.jsonl`: 1,500 random flow states, events, effect
/// lists, fact lists and account records. Every later build reads each line and writes it back
/// byte for byte, so a change to how a type is written cannot slip through unnoticed.
///
/// The corpus is written once (`RECORD_STORED_FORMS=1 swift test --filter StoredFormCorpusTests`)
/// and changes only with a deliberate, documented format change.
@Suite("Stored forms of 0.7.0, read and written back")
struct StoredFormCorpusTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("StoredForms/corpus.jsonl")

    @Test func everyLineIsReadAndWrittenBackByteForByte() throws {
        if ProcessInfo.processInfo.environment["RECORD_STORED_FORMS"] == "1" { try Self.record() }
        let lines = try String(contentsOf: Self.file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1_500)
        var kinds: [String: Int] = [:]
        for line in lines {
            let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
            let (kind, text) = (parts[0], parts[1])
            kinds[kind, default: 0] += 1
            switch kind {
            case "FlowState": try Self.roundTrip(FlowState.self, text)
            case "TourEvent": try Self.roundTrip(TourEvent.self, text)
            case "TourEffects":
                try Self.roundTrip(codable: [TourEffect].self, text)
                #expect(try [TourEffect](tourValue: TourValue(jsonText: text)).tourValue.jsonText() == text)
            case "TourFacts":
                try Self.roundTrip(codable: [TourFact].self, text)
                #expect(try [TourFact](tourValue: TourValue(jsonText: text)).tourValue.jsonText() == text)
            case "AccountFlowRecord": try Self.roundTrip(AccountFlowRecord.self, text)
            default: Issue.record("unknown kind \(kind)")
            }
        }
        #expect(kinds.values.allSatisfy { $0 == 300 }, "\(kinds)")
    }

    /// Through the hand-written form, then through the `Codable` bridge with Foundation's coders.
    static func roundTrip<T: Codable & Equatable & TourValueConvertible>(_ type: T.Type, _ text: String)
        throws
    {
        let direct = try T(jsonText: text)
        #expect(try direct.jsonText() == text, "\(T.self): \(text)")
        try roundTrip(codable: type, text)
        #expect(try JSONDecoder().decode(T.self, from: Data(text.utf8)) == direct)
    }

    static func roundTrip<T: Codable & Equatable>(codable type: T.Type, _ text: String) throws {
        let value = try JSONDecoder().decode(T.self, from: Data(text.utf8))
        #expect(try TourValueEncoder().jsonText(value) == text, "\(T.self): \(text)")
        #expect(try JSONTextTests.foundation(value) == text, "\(T.self): \(text)")
    }

    /// A damaged or hand-made row whose counts the engine would add one to (a position past its
    /// plan, an activation or a fact's step index out of range) is refused when read, so the command
    /// reading it fails with a database error instead of overflowing later.
    @Test(arguments: [
        #"""
        {"format":2,"status":"active","run":{"activation":1,"catalogVersion":1,"plan":["welcome"],"posit\#
        ion":9223372036854775807}}
        """#,
        #"""
        {"format":2,"status":"active","run":{"activation":1,"catalogVersion":1,"plan":["welcome"],"posit\#
        ion":-1}}
        """#,
        #"""
        {"format":2,"status":"active","run":{"activation":1,"catalogVersion":1,"plan":["welcome"],"posit\#
        ion":2}}
        """#,
        #"""
        {"format":2,"status":"active","run":{"activation":9223372036854775807,"catalogVersion":1,"plan":\#
        ["welcome"],"position":0}}
        """#,
        #"""
        {"format":2,"status":"active","run":{"activation":-1,"catalogVersion":1,"plan":["welcome"],"posi\#
        tion":0}}
        """#,
    ])
    func aStoredRunWithCountsOutOfRangeIsRefused(_ text: String) throws {
        #expect(throws: DecodingError.self) { try FlowState(jsonText: text) }
        // The same row within range reads.
        let fixed = text.replacingOccurrences(of: #""position":9223372036854775807"#, with: #""position":0"#)
            .replacingOccurrences(of: #""position":-1"#, with: #""position":1"#)
            .replacingOccurrences(of: #""position":2"#, with: #""position":0"#)
            .replacingOccurrences(of: #""activation":9223372036854775807"#, with: #""activation":1"#)
            .replacingOccurrences(of: #""activation":-1"#, with: #""activation":0"#)
        #expect(try FlowState(jsonText: fixed).run != nil, "\(fixed)")
    }

    @Test func aFactWithAStepIndexOutOfRangeIsRefused() throws {
        let fact = #"[{"fact":"stepEntered","flow":"walkthrough","index":INDEX,"step":"markWeek"}]"#
        #expect(throws: DecodingError.self) {
            try [TourFact](
                tourValue: TourValue(
                    jsonText: fact.replacingOccurrences(of: "INDEX", with: "-9223372036854775808")))
        }
        #expect(
            try [TourFact](tourValue: TourValue(jsonText: fact.replacingOccurrences(of: "INDEX", with: "6")))
                .count == 1)
    }

    /// Random values in their canonical form: one that Foundation's own coders write back as read
    /// (a whole double such as 1e+16 in a free-form value reads back as an integer and is written
    /// as 10000000000000000, in every release).
    static func record() throws {
        var random = SplitMix64(seed: 70)
        func canonical<T: Codable>(_ make: () -> T) throws -> String {
            while true {
                let text = try JSONTextTests.foundation(make())
                let again = try JSONTextTests.foundation(
                    try JSONDecoder().decode(T.self, from: Data(text.utf8)))
                if again == text { return text }
            }
        }
        var lines: [String] = []
        for _ in 0..<300 {
            lines.append("FlowState\t" + (try canonical { random.flowState() }))
            lines.append("TourEvent\t" + (try canonical { random.event() }))
            lines.append("TourEffects\t" + (try canonical { random.effects() }))
            lines.append("TourFacts\t" + (try canonical { random.facts() }))
            lines.append("AccountFlowRecord\t" + (try canonical { random.accountRecord() }))
        }
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
    }
}
