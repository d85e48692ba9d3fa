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

/// Random values of the stored forms, from the shared SplitMix64 (`TourFixtures`).
extension SplitMix64 {
    /// Text with the characters JSON escapes, slashes, non-ASCII and emoji.
    mutating func text() -> String {
        let pieces = [
            "", "a", "next", "Week 1", "/", "\\", "\"", "\n", "\t", "\r", "\u{8}", "\u{c}", "\u{1}", "\u{1f}",
            "\u{7f}",
            "é", "日本", "😀", "‹redacted›", "{name}", "a/b", " ",
        ]
        return (0..<Int.random(in: 0...4, using: &self)).map { _ in pick(pieces) }.joined()
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<6, using: &self) {
        case 0: return Double(Int.random(in: -1_000...1_000, using: &self))
        case 1: return Double.random(in: -1...1, using: &self)
        case 2: return 1_767_603_600 + Double(Int.random(in: 0..<1_000, using: &self)) / 4
        case 3: return pick([1e20, 1e-7, 2.5e-5, 1e16, 1e15, 123456789012345680.0, 0.1, 1.0 / 3])
        case 4: return Double(bitPattern: next() & 0x7FEF_FFFF_FFFF_FFFF)
        default: return Double.random(in: -1e9...1e9, using: &self)
        }
    }

    mutating func value(depth: Int) -> TourValue {
        switch Int.random(in: 0..<(depth > 0 ? 7 : 5), using: &self) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &self))
        case 2:
            return .int(pick([0, 1, -1, Int.max, Int.min, Int.random(in: -100_000...100_000, using: &self)]))
        case 3: return .double(double())
        case 4: return .string(text())
        case 5: return .list((0..<Int.random(in: 0...4, using: &self)).map { _ in value(depth: depth - 1) })
        default:
            var object: [String: TourValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &self) { object[text()] = value(depth: depth - 1) }
            return .object(object)
        }
    }

    mutating func context() -> [String: TourValue] {
        var object: [String: TourValue] = [:]
        for _ in 0..<Int.random(in: 0...4, using: &self) { object[text()] = value(depth: 1) }
        return object
    }

    mutating func maybe<T>(_ make: (inout SplitMix64) -> T) -> T? {
        Bool.random(using: &self) ? make(&self) : nil
    }

    mutating func flow() -> FlowID {
        FlowID(rawValue: pick(["walkthrough", "onboarding", "app_tour", "w/x", "é"]))
    }
    mutating func step() -> StepID { StepID(rawValue: pick(["welcome", "markWeek", "activation", "s\"1"])) }
    mutating func version() -> String? { maybe { $0.pick(["1.0", "2.5", "2.5.1"]) } }

    mutating func record() -> FlowRecord {
        FlowRecord(Bool.random(using: &self) ? .completed : .skipped, version: version())
    }

    mutating func flowState() -> FlowState {
        switch Int.random(in: 0..<3, using: &self) {
        case 0: return .notStarted(pendingStart: maybe { Date(timeIntervalSince1970: $0.double()) })
        case 1: return .finished(record())
        default:
            let plan = (0..<Int.random(in: 1...5, using: &self)).map { _ in step() }
            return .active(
                FlowRun(
                    plan: plan, position: Int.random(in: 0..<plan.count, using: &self),
                    fields: context(),
                    gates: Bool.random(using: &self) ? ["screenTime": .granted, "x": .denied] : [:],
                    performed: Bool.random(using: &self) ? ["longPressWeek"] : [],
                    deadline: maybe { Date(timeIntervalSince1970: $0.double()) },
                    activation: Int.random(in: 0...9, using: &self),
                    catalogVersion: Int.random(in: 1...3, using: &self),
                    replayOf: maybe {
                        $0.maybe { $0.record() }.map(FlowRecord.Before.finished) ?? .notStarted
                    }))
        }
    }

    mutating func accountRecord() -> AccountFlowRecord {
        AccountFlowRecord(
            epoch: Int.random(in: 0...3, using: &self), standing: pick(AccountFlowRecord.Standing.allCases),
            version: version(), at: Int64.random(in: 0...2_000_000_000_000, using: &self), device: text())
    }

    mutating func event() -> TourEvent {
        switch Int.random(in: 0..<10, using: &self) {
        case 0: return .appLaunched(version: version())
        case 1: return .signal(text())
        case 2: return .featureVisited(text())
        case 3: return .actionPerformed(text(), parameters: [text(): text(), "password": "‹redacted›"])
        case 4: return .gateAnswered(text(), pick(GateStatus.allCases))
        case 5: return .clockAdvanced
        case 6: return .domainEvent(text(), payload: context())
        case 7: return .replayRequested(maybe { $0.flow() })
        case 8: return .resetRequested(maybe { $0.flow() })
        default: return .accountRecordLearned(flow(), accountRecord())
        }
    }

    mutating func effects() -> [TourEffect] {
        (0..<Int.random(in: 0...4, using: &self)).map { _ in
            switch Int.random(in: 0..<9, using: &self) {
            case 0: return .haptic(pick(HapticFeedback.allCases))
            case 1: return .celebration(flow: flow(), step: step())
            case 2: return .analytics(AnalyticsEvent(name: text(), properties: context()))
            case 3: return .checkPermission(gate: text(), PermissionName(rawValue: text()))
            case 4: return .requestPermission(gate: text(), PermissionName(rawValue: text()))
            case 5: return .request(gate: text(), name: text(), payload: context(), secrets: [:])
            case 6: return .product(ProductEffect(name: text(), payload: context()))
            case 7: return .presented(flow())
            default: return .dismissed(flow())
            }
        }
    }

    mutating func facts() -> [TourFact] {
        (0..<Int.random(in: 0...4, using: &self)).map { _ in
            switch Int.random(in: 0..<7, using: &self) {
            case 0:
                return .flowStarted(
                    flow: flow(), plan: [step(), step()], catalogVersion: Int.random(in: 1...3, using: &self),
                    replay: Bool.random(using: &self))
            case 1:
                return .stepEntered(flow: flow(), step: step(), index: Int.random(in: 1...9, using: &self))
            case 2: return .stepCompleted(flow: flow(), step: step())
            case 3:
                return .gateAnswered(
                    flow: flow(), step: step(), gate: text(), answer: pick(GateStatus.allCases))
            case 4:
                return .flowEnded(
                    flow: flow(), ending: pick(TourFact.Ending.allCases), recorded: pick(FlowStatus.allCases),
                    version: version())
            case 5: return .flowReset(flow: flow())
            default:
                return .runMigrated(
                    flow: flow(), fromVersion: 1, toVersion: 2, fromStep: maybe { $0.step() },
                    toStep: maybe { $0.step() },
                    plan: [step()], outcome: pick([.moved, .restarted, .finished, .dropped]),
                    undeclared: Bool.random(using: &self))
            }
        }
    }
}
