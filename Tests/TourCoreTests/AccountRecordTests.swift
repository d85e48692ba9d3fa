import Foundation
import Testing
import TourCore
import TourFixtures

/// The account record's merge is a join: commutative, associative, idempotent, so every order of
/// every device's pushes, with duplicates, ends at one record.
@Suite("Account record merge")
struct AccountRecordTests {

    static func record(_ random: inout SplitMix64, devices: [String]) -> AccountFlowRecord {
        let standing = AccountFlowRecord.Standing.allCases.anyElement(using: &random)
        let versions = ["1.0", "1.2", "2.0", "2.0.1", "10.0"]
        return AccountFlowRecord(
            epoch: Int.random(in: 0...2, using: &random), standing: standing,
            version: standing.ending == nil ? nil : versions.randomElement(using: &random),
            at: Int64.random(in: 1_000...1_010, using: &random),
            device: devices.anyElement(using: &random))
    }

    @Test func theMergeIsCommutativeAssociativeAndIdempotent() {
        var random = SplitMix64(seed: 14)
        let devices = ["a", "b", "c"]
        for _ in 0..<5_000 {
            let x = Self.record(&random, devices: devices)
            let y = Self.record(&random, devices: devices)
            let z = Self.record(&random, devices: devices)
            #expect(x.merged(with: y) == y.merged(with: x))
            #expect(x.merged(with: y).merged(with: z) == x.merged(with: y.merged(with: z)))
            #expect(x.merged(with: x) == x)
            #expect(x.merged(with: .nothing) == x)
        }
    }

    @Test func theOrderKeyIsATotalOrderThatTellsEveryTwoRecordsApart() {
        var random = SplitMix64(seed: 15)
        var byKey: [String: AccountFlowRecord] = [:]
        for _ in 0..<5_000 {
            let record = Self.record(&random, devices: ["a", "b", "c", "d e"])
            if let other = byKey[record.orderKey] {
                #expect(other == record, "two records share \(record.orderKey)")
            }
            byKey[record.orderKey] = record
        }
    }

    /// Many devices each push a run of records (what their events reached); the server receives
    /// them interleaved, reordered and duplicated. Every order ends at the same record.
    @Test func everyInterleavingOfManyDevicesPushesConverges() {
        var random = SplitMix64(seed: 16)
        for _ in 0..<300 {
            let devices = (0..<Int.random(in: 2...6, using: &random)).map { "device-\($0)" }
            var pushes: [AccountFlowRecord] = []
            for device in devices {
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    pushes.append(Self.record(&random, devices: [device]))
                }
            }
            let expected = pushes.reduce(AccountFlowRecord.nothing) { $0.merged(with: $1) }
            for _ in 0..<20 {
                var delivered = pushes.shuffled(using: &random)
                for _ in 0..<Int.random(in: 0...pushes.count, using: &random) {
                    delivered.insert(
                        pushes.anyElement(using: &random),
                        at: Int.random(in: 0...delivered.count, using: &random))
                }
                // Each side merges what it gets in whatever groups it gets them.
                var merged = AccountFlowRecord.nothing
                var batch: [AccountFlowRecord] = []
                for record in delivered {
                    batch.append(record)
                    if Bool.random(using: &random) {
                        merged = merged.merged(with: batch.reduce(.nothing) { $0.merged(with: $1) })
                        batch = []
                    }
                }
                merged = batch.reduce(merged) { $0.merged(with: $1) }
                #expect(merged == expected)
            }
        }
    }

    @Test func completedOutranksSkippedAndANewerEpochOutranksBoth() {
        let skipped = AccountFlowRecord(epoch: 0, standing: .skipped, version: "2.0", at: 9, device: "b")
        let completed = AccountFlowRecord(epoch: 0, standing: .completed, version: "1.0", at: 1, device: "a")
        #expect(skipped.merged(with: completed) == completed)
        let reset = AccountFlowRecord(epoch: 1, standing: .notStarted, at: 0, device: "c")
        #expect(completed.merged(with: reset) == reset)
        let shown = AccountFlowRecord(epoch: 0, standing: .shown, at: 5, device: "a")
        #expect(shown.merged(with: skipped) == skipped)
        let newer = AccountFlowRecord(epoch: 0, standing: .completed, version: "1.0.1", at: 0, device: "z")
        #expect(completed.merged(with: newer) == newer)
        let tenth = AccountFlowRecord(epoch: 0, standing: .completed, version: "10.0", at: 0, device: "z")
        let ninth = AccountFlowRecord(epoch: 0, standing: .completed, version: "9.9", at: 0, device: "z")
        #expect(ninth.merged(with: tenth) == tenth)
    }

    @Test func aMalformedRecordSaysWhatIsWrong() {
        #expect(
            AccountFlowRecord(epoch: 0, standing: .shown, version: "1.0", at: 0, device: "a").problem != nil)
        #expect(
            AccountFlowRecord(epoch: 0, standing: .completed, version: "1.x", at: 0, device: "a").problem
                != nil)
        #expect(AccountFlowRecord(epoch: -1, standing: .completed, at: 0, device: "a").problem != nil)
        // Bounded far from Int.max: a device adds one to the epoch on a reset.
        #expect(AccountFlowRecord(epoch: Int.max, standing: .completed, at: 0, device: "a").problem != nil)
        #expect(
            AccountFlowRecord(
                epoch: AccountFlowRecord.maximumEpoch + 1, standing: .completed, at: 0, device: "a"
            ).problem
                != nil)
        #expect(
            AccountFlowRecord(epoch: AccountFlowRecord.maximumEpoch, standing: .completed, at: 0, device: "a")
                .problem
                == nil)
        #expect(AccountFlowRecord(epoch: 0, standing: .completed, at: .max, device: "a").problem != nil)
        #expect(
            AccountFlowRecord(epoch: 0, standing: .completed, version: "1.0", at: 0, device: "a").problem
                == nil)
    }
}
