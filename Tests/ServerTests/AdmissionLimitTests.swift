import Logging
import NIOCore
import Testing
import TourFixtures

@testable import OnboardingServer

/// ``AdmissionLimit``: the limit of requests answered at once falls to `steady` only when `steady`
/// or more have been answered at every look for the interval on end (an overload), and rises back
/// only when fewer have at every look for the interval on end; a burst or a dip shorter than the
/// interval changes nothing. Driven with made-up counts and times, no server and no threads.
@Suite("The limit of requests under an overload")
struct AdmissionLimitTests {
    static let interval: Int64 = 100

    @Test func aBurstShorterThanTheIntervalKeepsTheLimitForBursts() {
        var limit = AdmissionLimit(steady: 3, burst: 8, interval: Self.interval)
        #expect(limit.look(count: 7, now: 0) == 8)
        #expect(limit.look(count: 5, now: 99) == 8)
        // One look under steady: the burst is over, and the next one starts its interval afresh.
        #expect(limit.look(count: 2, now: 100) == 8)
        #expect(limit.look(count: 3, now: 150) == 8)
        #expect(limit.look(count: 3, now: 249) == 8)
        #expect(!limit.overloaded)
    }

    @Test func steadyOrMoreForTheWholeIntervalIsAnOverloadUntilFewerForTheWholeInterval() {
        var limit = AdmissionLimit(steady: 3, burst: 8, interval: Self.interval)
        #expect(limit.look(count: 3, now: 0) == 8)
        #expect(limit.look(count: 8, now: 60) == 8)
        #expect(limit.look(count: 4, now: 100) == 3)
        #expect(limit.overloaded)
        // Dips under steady shorter than the interval: still an overload.
        #expect(limit.look(count: 2, now: 120) == 3)
        #expect(limit.look(count: 3, now: 219) == 3)
        #expect(limit.look(count: 0, now: 230) == 3)
        #expect(limit.look(count: 2, now: 329) == 3)
        // Fewer for the whole interval: over.
        #expect(limit.look(count: 1, now: 330) == 8)
        #expect(!limit.overloaded)
    }

    /// The server's count of requests held, looked at by each request's head: two held are taken
    /// while the limit is three, until two have been held for the interval; then the limit is one
    /// until fewer than one have been held for the interval.
    @Test func theServersCountFollowsTheLimitOfTheMoment() {
        var logger = Logger(label: "admission-limit")
        logger.logLevel = .critical
        let requests = RequestsInFlight(limit: 3, steady: 1, logger: logger)
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        let milliseconds = { (value: Int64) in start + .milliseconds(value) }
        requests.take()
        requests.take()
        #expect(requests.admits(now: start))
        #expect(requests.admits(now: milliseconds(99)))
        #expect(!requests.admits(now: milliseconds(100)))
        #expect(requests.currentLimit == 1)
        requests.giveBack()
        requests.giveBack()
        #expect(requests.admits(now: milliseconds(150)))
        #expect(requests.currentLimit == 1)
        #expect(requests.admits(now: milliseconds(250)))
        #expect(requests.currentLimit == 3)
        #expect(requests.limit == 3)
    }

    @Test func theLimitsAreOrderedAndPositive() {
        let inverted = AdmissionLimit(steady: 10, burst: 4)
        #expect(inverted.steady == 4 && inverted.burst == 4)
        let zero = AdmissionLimit(steady: 0, burst: 0)
        #expect(zero.steady == 1 && zero.burst == 1)
        #expect(AdmissionLimit(steady: 24, burst: 128).limit == 128)
    }

    /// Every sequence of looks of four counts (0 to 3, steady 2) at four gaps (0, the interval
    /// less one, the interval, twice it), up to four looks long: the limit each look returns is the
    /// reference's, which reads the whole history afresh at each look.
    @Test func everyShortSequenceOfLooksGivesTheReferencesLimit() {
        let counts = 0...3
        let gaps: [Int64] = [0, Self.interval - 1, Self.interval, 2 * Self.interval]
        var sequences: [[(count: Int, gap: Int64)]] = [[]]
        var checked = 0
        for _ in 1...4 {
            var longer: [[(count: Int, gap: Int64)]] = []
            for sequence in sequences {
                for count in counts {
                    for gap in gaps { longer.append(sequence + [(count, gap)]) }
                }
            }
            sequences = longer
            for sequence in sequences {
                checked += 1
                Self.check(sequence, steady: 2, burst: 3)
            }
        }
        #expect(checked == 16 + 256 + 4_096 + 65_536)
    }

    @Test(arguments: 0..<20) func randomLooksGiveTheReferencesLimit(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let steady = Int.random(in: 1...10, using: &random)
        let burst = steady + Int.random(in: 0...10, using: &random)
        // 300 looks span about 50 intervals; the reference reads the history afresh at each look.
        let sequence = (0..<300).map { _ in
            (
                count: Int.random(in: 0...(burst + 2), using: &random),
                gap: Int64.random(in: 0...(Self.interval / 3), using: &random)
            )
        }
        Self.check(sequence, steady: steady, burst: burst)
    }

    /// Drives an ``AdmissionLimit`` through `looks` (each a count and the time since the last) and
    /// compares each answer with ``reference(_:steady:burst:)``.
    static func check(_ looks: [(count: Int, gap: Int64)], steady: Int, burst: Int) {
        var limit = AdmissionLimit(steady: steady, burst: burst, interval: interval)
        var now: Int64 = 0
        var history: [(count: Int, at: Int64)] = []
        for look in looks {
            now += look.gap
            history.append((look.count, now))
            let answered = limit.look(count: look.count, now: now)
            let expected = reference(history, steady: steady, burst: burst)
            guard answered == expected else {
                Issue.record("looks \(history): answered \(answered), the reference \(expected)")
                return
            }
        }
    }

    /// The limit after `history`, read afresh: walking the looks, the state flips at a look when
    /// every look of the run of looks pointing away from it, up to this one, spans the interval.
    static func reference(_ history: [(count: Int, at: Int64)], steady: Int, burst: Int) -> Int {
        var overloaded = false
        var runStart: Int?
        for (index, look) in history.enumerated() {
            let away = overloaded ? look.count < steady : look.count >= steady
            if !away {
                runStart = nil
                continue
            }
            let start = runStart ?? index
            if look.at - history[start].at >= interval {
                overloaded.toggle()
                runStart = nil
            } else {
                runStart = start
            }
        }
        return overloaded ? steady : burst
    }
}
