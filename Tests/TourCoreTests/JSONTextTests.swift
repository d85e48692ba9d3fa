import Foundation
import Testing
import TourCodec
import TourCore
import TourFixtures

/// The JSON the stores and the CLI write without Foundation's coders is the JSON Foundation's
/// coders wrote: the same bytes for the same values, the same values read back, the same texts
/// refused. Compared over random values (a fixed seed per test, so a failure repeats).
@Suite("JSON text without Foundation's coders")
struct JSONTextTests {
    static let sorted: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()

    static let sortedEscapingSlashes: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func foundation<T: Encodable>(_ value: T, _ encoder: JSONEncoder = sorted) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func randomValuesAreWrittenAsJSONEncoderWritesThem() throws {
        var random = SplitMix64(seed: 15)
        for _ in 0..<2_000 {
            let value = random.value(depth: 3)
            #expect(try value.jsonText() == Self.foundation(value), "\(value)")
            #expect(
                try value.jsonText(escapingSlashes: true)
                    == Self.foundation(value, Self.sortedEscapingSlashes),
                "\(value)")
        }
    }

    /// The forms every event writes straight to text (a flow's state, the journal's facts) are the
    /// very text of their value trees, over random states of every kind and facts of every kind.
    @Test func statesAndFactsWrittenStraightAreTheTextOfTheirValues() throws {
        var random = SplitMix64(seed: 18)
        for _ in 0..<3_000 {
            var state = random.flowState()
            if case .active(var run) = state {
                if Bool.random(using: &random) { run.catalogFingerprint = random.text() }
                run.performed = (0..<Int.random(in: 0...3, using: &random)).map { _ in random.text() }
                run.gates = Dictionary(
                    (0..<Int.random(in: 0...3, using: &random)).map { _ in
                        (random.text(), random.pick(GateStatus.allCases))
                    }
                ) { a, _ in a }
                state = .active(run)
            }
            #expect(try state.writtenJSONText() == state.tourValue.jsonText(), "\(state)")
            let arm = TourFact.ExperimentArm(
                experiment: random.text(), variant: random.text(), subject: random.text())
            let flow = random.flow()
            let facts =
                random.facts() + [
                    .assigned(flow: flow, arm), .exposed(flow: flow, arm), .goalReached(flow: flow, arm),
                    .budgetSpent(flow: flow),
                    .budgetHeld(
                        flow: flow, until: random.maybe { Date(timeIntervalSince1970: $0.double()) },
                        reason: random.text()),
                ]
            #expect(try facts.writtenJSONText() == facts.tourValue.jsonText(), "\(facts)")
        }
    }

    @Test func eventsAndEffectsWrittenStraightAreTheTextOfTheirValues() throws {
        var random = SplitMix64(seed: 19)
        for _ in 0..<2_000 {
            func object(_ random: inout SplitMix64) -> [String: TourValue] {
                Dictionary(
                    (0..<Int.random(in: 0...3, using: &random)).map { _ in
                        (random.text(), random.value(depth: 2))
                    }
                ) { a, _ in a }
            }
            let flow = random.flow()
            let events: [TourEvent] = [
                .appLaunched(version: random.maybe { $0.text() }), .signal(random.text()),
                .featureVisited(random.text()),
                .actionPerformed(
                    random.text(),
                    parameters: Dictionary(
                        (0..<Int.random(in: 0...3, using: &random)).map { _ in (random.text(), random.text())
                        }
                    ) { a, _ in a }),
                .gateAnswered(random.text(), random.pick(GateStatus.allCases)), .clockAdvanced,
                .domainEvent(random.text(), payload: object(&random)),
                .replayRequested(random.maybe { $0.flow() }),
                .resetRequested(random.maybe { $0.flow() }),
                .accountRecordLearned(
                    flow,
                    AccountFlowRecord(
                        epoch: Int.random(in: 0...9, using: &random), standing: .completed,
                        version: random.maybe { $0.text() }, at: 7, device: random.text())),
            ]
            for event in events {
                #expect(try event.writtenJSONText() == event.tourValue.jsonText(), "\(event)")
            }
            let step = StepID(rawValue: random.text())
            let effects: [TourEffect] = [
                .haptic(random.pick(HapticFeedback.allCases)),
                .celebration(flow: flow, step: step, reducedMotion: Bool.random(using: &random)),
                .analytics(AnalyticsEvent(name: random.text(), properties: object(&random))),
                .checkPermission(gate: random.text(), PermissionName(rawValue: random.text())),
                .requestPermission(gate: random.text(), PermissionName(rawValue: random.text())),
                .request(
                    gate: random.text(), name: random.text(), payload: object(&random),
                    secrets: [random.text(): Secret(random.text())]),
                .product(ProductEffect(name: random.text(), payload: object(&random))), .presented(flow),
                .dismissed(flow),
            ]
            #expect(try effects.writtenJSONText() == effects.tourValue.jsonText(), "\(effects)")
        }
    }

    @Test func randomValuesAreReadBackAsJSONDecoderReadsThem() throws {
        var random = SplitMix64(seed: 16)
        for _ in 0..<2_000 {
            let text = try Self.foundation(random.value(depth: 3))
            let ours = try TourValue(jsonText: text)
            #expect(ours == (try JSONDecoder().decode(TourValue.self, from: Data(text.utf8))), "\(text)")
        }
    }

    @Test(arguments: [
        "2.0", "1e2", "-0", "-0.0", "0.1e1", "1.5", "-12.75e-3", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "123456789012345678901234567890", "1E-7", " \n\t[1, 2 ,3]\r ",
        "\"\\u00e9\\ud83d\\ude00\"",
        "\"a\\/b\\\\c\\\"d\\b\\f\\n\\r\\t\\u0001\"", "{\"b\": 1, \"a\": [true, false, null], \"\": {}}",
        "\"é😀\"", "[]",
        "{\"a\":1,\"a\":2}",
    ])
    func editTextsAreReadAsJSONDecoderReadsThem(_ text: String) throws {
        let expected = try JSONDecoder().decode(TourValue.self, from: Data(text.utf8))
        #expect(try TourValue(jsonText: text) == expected)
    }

    @Test(arguments: [
        "", " ", "{a:1}", "[1 2]", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul", "\"abc",
        "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"a\nb\"", "[1]]", "{} {}", "1e400", "[\"\\udc00\"]", "NaN",
        "Infinity",
    ])
    func invalidTextsAreRefused(_ text: String) {
        #expect(throws: JSONTextError.self) { try TourValue(jsonText: text) }
        #expect(
            (try? JSONDecoder().decode(TourValue.self, from: Data(text.utf8))) == nil, "JSONDecoder reads it")
    }

    /// `JSONDecoder` reads a trailing comma; it is not JSON, and nothing here writes one.
    @Test(arguments: ["[1,]", "{\"a\":1,}", "[[],]"])
    func aTrailingCommaIsRefused(_ text: String) {
        #expect(throws: JSONTextError.self) { try TourValue(jsonText: text) }
    }

    static func members(_ text: String) throws -> [(key: String, json: String)] {
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBufferPointer {
            try TourValue.members(ofObject: UnsafeBufferPointer($0))
        }
    }

    /// The fold of the journal reads objects member by member without building their values: each
    /// member's text is what the value reader reads, and a value it refuses is refused there too.
    @Test func anObjectsMembersAreItsValuesAsText() throws {
        var random = SplitMix64(seed: 17)
        for _ in 0..<500 {
            let object = random.context()
            let text = try TourValue.object(object).jsonText()
            // The whole text read by the value reader (a whole double reads back as an integer).
            guard case .object(let read) = try TourValue(jsonText: text) else {
                Issue.record("not an object: \(text)")
                continue
            }
            let members = try Self.members(text)
            #expect(
                members.map(\.key) == object.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }))
            for (key, json) in members {
                #expect(try TourValue(jsonText: json) == read[key], "\(key): \(json)")
            }
        }
    }

    @Test(arguments: [
        "{\"a\":[1 2]}", "{\"a\":{]}", "{\"a\":[,,]}", "{\"a\":{\"k\" 1}}", "{\"a\":[}", "{\"a\":tru}",
        "{\"a\":[1,]}", "{\"a\":{\"k\":}}", "{\"a\":]}", "{\"a\":1 2}", "{\"a\":\"x}", "{\"a\":01}",
        // Strings inside a member are scanned, not made, yet checked the same.
        "{\"a\":\"x\\q\"}", "{\"a\":[\"\\u12\"]}", "{\"a\":{\"k\":\"a\nb\"}}", "{\"a\":[\"\\ud800\"]}",
        "{\"a\":\"x\\\"}",
    ])
    func anObjectWithAMalformedMemberIsRefused(_ text: String) {
        #expect(throws: JSONTextError.self) { try Self.members(text) }
        #expect(throws: JSONTextError.self) { try TourValue(jsonText: text) }
    }

    @Test func aMembersEscapedStringsAreKeptAsWritten() throws {
        let text = #"{"a":"q\"uote \u00e9 \\","b":["\ud83d\ude00"]}"#
        let members = try Self.members(text)
        #expect(members.map(\.key) == ["a", "b"])
        #expect(members.first?.json == #""q\"uote \u00e9 \\""#)
        #expect(try TourValue(jsonText: members[1].json) == .list([.string("😀")]))
    }

    @Test func aNumberWithAThousandLeadingZerosInItsFractionIsRead() throws {
        let text = "0." + String(repeating: "0", count: 1_000) + "1"
        #expect(try TourValue(jsonText: text) == .double(0))
        #expect(try TourValue(jsonText: "1" + String(repeating: "0", count: 1_000) + "e-1000") == .int(1))
    }

    @Test func tooDeepANestingIsRefused() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: JSONTextError.self) { try TourValue(jsonText: deep) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect((try? TourValue(jsonText: fine)) != nil)
    }

    @Test func aDoubleThatIsNotFiniteIsRefused() {
        #expect(throws: JSONTextError.self) { try TourValue.double(.infinity).jsonText() }
        #expect(throws: JSONTextError.self) { try TourValue.list([.double(.nan)]).jsonText() }
    }

    // MARK: - The stored types through the Codable bridge

    @Test func storedTypesAreWrittenAsJSONEncoderWritesThemAndReadBack() throws {
        var random = SplitMix64(seed: 17)
        for _ in 0..<500 {
            try Self.check(random.flowState(), read: FlowState.init(jsonText:))
            try Self.check(random.event(), read: TourEvent.init(jsonText:))
            try Self.check(random.effects()) { try [TourEffect](tourValue: TourValue(jsonText: $0)) }
            try Self.check(random.facts()) { try [TourFact](tourValue: TourValue(jsonText: $0)) }
            try Self.check(random.accountRecord(), read: AccountFlowRecord.init(jsonText:))
            try Self.check(random.context()) { try TourValue(jsonText: $0).objectValue ?? [:] }
        }
    }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    /// Written as `JSONEncoder` writes it, and read back by the codec's one form as `JSONDecoder`
    /// reads it through the `Codable` bridge (a whole double comes back as an int in both).
    static func check<T: Codable & Equatable>(_ value: T, read: (String) throws -> T) throws {
        let text = try TourValueEncoder().jsonText(value)
        #expect(text == (try foundation(value)), "\(value)")
        let ours = try read(text)
        let theirs = try decoder.decode(T.self, from: Data(text.utf8))
        #expect(ours == theirs, "\(text)\nours:   \(ours)\ntheirs: \(theirs)")
    }

    @Test func datesAreSecondsSince1970() throws {
        struct Stamped: Codable, Equatable {
            var at: Date
            var count: Int
        }
        let value = Stamped(at: Date(timeIntervalSince1970: 1_767_603_600.25), count: 3)
        #expect(try TourValueEncoder().jsonText(value) == (try Self.foundation(value)))
        #expect(try TourValueEncoder().encode(value) == ["at": 1_767_603_600.25, "count": 3])
    }
}

/// Bodies that come over a wire as bytes.
@Suite("JSON bytes from a wire")
struct JSONBytesTests {
    @Test func bytesThatAreNotUTF8AreRefusedAndUTF8IsRead() throws {
        #expect(throws: JSONTextError.self) { try TourValue(jsonUTF8: [0x22, 0xFF, 0xFE, 0x22]) }
        #expect(try TourValue(jsonUTF8: Array(#"{"a":["é",1]}"#.utf8)) == ["a": ["é", 1]])
        let value: TourValue = ["b": [1.5, "x/y", .null], "a": true]
        #expect(try TourValue(jsonUTF8: value.jsonUTF8()) == value)
        #expect(try value.jsonUTF8() == Array(value.jsonText().utf8))
    }
}
