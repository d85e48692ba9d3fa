import TestThreads
import Testing

@testable import ServerInsights

/// The catch-up job's pause between runs (`InsightsCountRequests`): the interval when nobody asks,
/// cut short by an ask (one made before the pause included), never shorter than the gap, and
/// ended by cancellation. The interval is two minutes, so a pause that was not cut short fails the
/// test's bound rather than passing by luck. Each test and its helpers run on threads of their own
/// (`.offThePool`, `Task.blocking`): on Swift's two-thread pool, beside the suite's waiting tests,
/// a pause's tasks once stood 38 s before they ran.
@Suite("Asking the insights job for a run", .offThePool)
struct InsightsCountRequestsTests {
    static let interval: Duration = .seconds(120)

    /// How long `body` takes, by the continuous clock.
    static func timed(_ body: () async -> Void) async -> Duration {
        let start = ContinuousClock.now
        await body()
        return ContinuousClock.now - start
    }

    @Test func anAskDuringThePauseEndsItAfterTheGap() async {
        let requests = InsightsCountRequests()
        let asker = Task.blocking("asker") {
            try? await Task.sleep(for: .milliseconds(200))
            requests.ask()
        }
        let took = await Self.timed { await requests.pause(for: Self.interval, atLeast: .milliseconds(50)) }
        try? await asker.value
        #expect(took >= .milliseconds(200))
        #expect(took < .seconds(90), "the pause ran \(took) after the ask")
    }

    @Test func anAskBeforeThePauseIsNotLostAndTheGapIsKept() async {
        let requests = InsightsCountRequests()
        requests.ask()
        requests.ask()
        let took = await Self.timed { await requests.pause(for: Self.interval, atLeast: .milliseconds(300)) }
        #expect(took >= .milliseconds(300), "the gap between runs was not kept: \(took)")
        #expect(took < .seconds(90))
        // The asks were answered by that pause: the next one waits out its interval.
        let next = await Self.timed {
            await requests.pause(for: .milliseconds(400), atLeast: .milliseconds(10))
        }
        #expect(next >= .milliseconds(400), "an answered ask ended the next pause too: \(next)")
    }

    @Test func withNoAskThePauseLastsItsInterval() async {
        let requests = InsightsCountRequests()
        let took = await Self.timed {
            await requests.pause(for: .milliseconds(500), atLeast: .milliseconds(50))
        }
        #expect(took >= .milliseconds(500))
    }

    @Test func cancellingThePausingTaskEndsThePause() async throws {
        let requests = InsightsCountRequests()
        let pausing = Task.blocking("pausing") {
            await Self.timed { await requests.pause(for: Self.interval, atLeast: .zero) }
        }
        try? await Task.sleep(for: .milliseconds(100))
        pausing.cancel()
        let took = try await pausing.value
        #expect(took < .seconds(90), "a cancelled pause ran \(took)")
    }
}
