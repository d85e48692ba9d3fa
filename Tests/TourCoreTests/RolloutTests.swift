import Crypto
import Foundation
import Testing
import TourCore

/// Who a rollout reaches: a deterministic bucket per subject and salt.
@Suite("Rollout")
struct RolloutTests {
    static let installs = (0..<1_000).map { "install-\($0)" }
    static let salt = Rollout.catalogSalt(app: "lockedin", version: 2)

    static func reached(_ percent: Int, salt: String = salt) -> Set<String> {
        Set(installs.filter { Rollout.includes(subject: $0, salt: salt, percent: percent) })
    }

    @Test func twentyPercentReachesAboutAFifthTheSameOnesEveryTime() {
        let first = Self.reached(20)
        #expect((150...250).contains(first.count), "\(first.count)")
        #expect(Self.reached(20) == first)
    }

    @Test func raisingTheRolloutKeepsEveryoneAndAddsOthers() {
        let twenty = Self.reached(20)
        let fifty = Self.reached(50)
        #expect(twenty.isSubset(of: fifty))
        #expect((450...550).contains(fifty.count), "\(fifty.count)")
        #expect(Self.reached(0).isEmpty)
        #expect(Self.reached(100).count == Self.installs.count)
    }

    @Test func anotherVersionDrawsIndependently() {
        let other = Self.reached(50, salt: Rollout.catalogSalt(app: "lockedin", version: 3))
        let overlap = other.intersection(Self.reached(50)).count
        // Independent halves overlap on about a quarter.
        #expect((180...320).contains(overlap), "\(overlap)")
    }

    /// The bucket is SHA-256(salt, NUL, subject)'s first eight bytes, big-endian, mod 10,000,
    /// computed here with another SHA-256: every device and release must agree on it.
    @Test func theBucketIsTheDocumentedHash() {
        for subject in Self.installs.prefix(50) {
            let digest = Array(SHA256.hash(data: Data((Self.salt + "\u{0}" + subject).utf8)))
            let prefix = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(Rollout.bucket(subject: subject, salt: Self.salt) == Int(prefix % 10_000))
        }
    }
}
