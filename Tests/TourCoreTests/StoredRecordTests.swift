import Foundation
import Testing
import TourCore

/// The stored form of a flow's state (`FlowState+Codable.swift`): explicit keys and a format
/// number, the rows of every earlier release readable, and a key added by a later release not a
/// breaking change in either direction.
@Suite("Stored flow records")
struct StoredRecordTests {
    static func decode(_ json: String) throws -> FlowState {
        try JSONDecoder().decode(FlowState.self, from: Data(json.utf8))
    }

    static func encode(_ state: FlowState) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(state), as: UTF8.self)
    }

    static let run = FlowRun(
        plan: ["welcome", "connect", "done"], position: 1, fields: ["service": "qrz"],
        gates: ["qrz": .denied],
        performed: ["open"], deadline: Date(timeIntervalSince1970: 1_767_603_700), activation: 4,
        catalogVersion: 3,
        replayOf: .finished(FlowRecord(.completed, version: "2.5")))

    /// Rows exactly as release 0.5.0 wrote them (copied from `Tests/CLITests/Releases/0.5.0`).
    @Test func rowsOfRelease050ReadAsCatalogVersion1() throws {
        let active = try Self.decode(
            #"""
            {"activation":1,"fields":{"apps":["Instagram","TikTok"],"difficulty":"medium"},"gates":{},"p\#
            erformed":[],"plan":["welcome","appSelection","difficulty","permissions","activation"],"posi\#
            tion":2,"status":"active"}
            """#
        )
        let run = try #require(active.run)
        #expect(run.currentStep == "difficulty")
        #expect(run.catalogVersion == 1)
        #expect(run.fields["difficulty"] == .string("medium"))
        #expect(run.replayOf == nil)

        let finished = try Self.decode(
            #"""
            {"activation":1,"fields":{},"gates":{},"performed":[],"plan":[],"position":0,"status":"compl\#
            eted","finishedInVersion":"1.0"}
            """#
        )
        #expect(finished == .record(status: .completed, version: "1.0"))

        let waiting = try Self.decode(
            #"""
            {"activation":0,"fields":{},"gates":{},"performed":[],"plan":[],"position":0,"status":"notSt\#
            arted","pendingStart":1767603600}
            """#
        )
        #expect(waiting == .notStarted(pendingStart: Date(timeIntervalSince1970: 1_767_603_600)))

        let replaying = try Self.decode(
            #"""
            {"activation":2,"fields":{},"gates":{},"performed":[],"plan":["a","b"],"position":0,"status"\#
            :"active","replayOf":{"status":"skipped","finishedInVersion":"2.0","activation":0,"fields":{\#
            },"gates":{},"performed":[],"plan":[],"position":0}}
            """#
        )
        #expect(replaying.run?.replayOf == .finished(FlowRecord(.skipped, version: "2.0")))
    }

    @Test(arguments: [
        FlowState(), .notStarted(pendingStart: Date(timeIntervalSince1970: 1_767_603_600)), .active(run),
        .record(status: .completed, version: "2.5"), .record(status: .skipped, version: nil),
    ])
    func everyShapeRoundTripsWithItsFormatNumber(_ state: FlowState) throws {
        let json = try Self.encode(state)
        #expect(json.contains(#""format":\#(FlowState.storedFormat)"#))
        #expect(try Self.decode(json) == state)
    }

    /// Only what each status means is stored: no run keys on a finished record, no pending start
    /// on a run.
    @Test func theStoredFormHoldsNoImpossibleCombination() throws {
        let finished = try Self.encode(.record(status: .completed, version: "2.5"))
        #expect(finished == #"{"format":2,"status":"completed","version":"2.5"}"#)
        let active = try Self.encode(.active(Self.run))
        #expect(!active.contains("pendingStart"))
        // A hand-edited row that claims a pending start on an active run reads as the run alone.
        let edited = active.replacingOccurrences(of: #""format":2"#, with: #""format":2,"pendingStart":1"#)
        #expect(try Self.decode(edited) == .active(Self.run))
    }

    /// A later release adds a key (here `hintsShown` on the run, `syncedAt` on the record): rows it
    /// writes still load in this build, and this build's rows load in it with the key's default.
    @Test func aKeyAddedByALaterReleaseIsNotABreakingChange() throws {
        // The later release's reader: today's record plus the new key, read with a default.
        struct NextReleaseRun: Decodable {
            var run: FlowRun
            var hintsShown: Int
            enum Key: String, CodingKey { case hintsShown }
            init(from decoder: any Decoder) throws {
                run = try FlowRun(from: decoder)
                hintsShown =
                    try decoder.container(keyedBy: Key.self).decodeIfPresent(Int.self, forKey: .hintsShown)
                    ?? 0
            }
        }
        let written = try JSONEncoder().encode(Self.run)
        let read = try JSONDecoder().decode(NextReleaseRun.self, from: written)
        #expect(read.run == Self.run)
        #expect(read.hintsShown == 0)

        // What the later release writes, read by this build.
        var object = try #require(
            try JSONSerialization.jsonObject(with: Data(try Self.encode(.active(Self.run)).utf8))
                as? [String: Any])
        var run = try #require(object["run"] as? [String: Any])
        run["hintsShown"] = 3
        object["run"] = run
        object["syncedAt"] = 1_767_700_000
        let later = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        #expect(try Self.decode(later) == .active(Self.run))
    }

    /// A row of a format this build does not know (written by a newer build, then the app was
    /// downgraded) is refused with a message naming both formats, never misread.
    @Test func aNewerFormatIsRefusedByName() throws {
        do {
            _ = try Self.decode(
                #"{"format":3,"status":"active","run":{"plan":[],"position":0,"activation":1}}"#)
            Issue.record("format 3 was read")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription.contains("format 3 is newer than this build reads (2)"))
        }
    }
}
