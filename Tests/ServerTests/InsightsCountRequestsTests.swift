import Testing

@testable import ServerInsights

/// The catch-up job's pause between runs (`InsightsCountRequests`): the interval when nobody asks,
/// cut short by an ask (one made before the pause included), never shorter than the gap, and
/// ended by cancellation. The interval is a minute, so a pause that was not cut short fails the
/// test's bound rather than passing by luck.
@Suite("Asking the insights job for a run")
struct InsightsCountRequestsTests {
    static let minute: Duration = .seconds(60)

    /// How long `body` takes, by the continuous clock.
    static func timed(_ body: () async -> Void) async -> Duration {
        let start = ContinuousClock.now
        await body()
        return ContinuousClock.now - start
    }

    @Test func anAskDuringThePauseEndsItAfterTheGap() async {
        let requests = InsightsCountRequests()
        let asker = Task {
            try? await Task.sleep(for: .milliseconds(200))
            requests.ask()
        }
        let took = await Self.timed { await requests.pause(for: Self.minute, atLeast: .milliseconds(50)) }
        await asker.value
        #expect(took >= .milliseconds(200))
        #expect(took < .seconds(30), "the pause ran \(took) after the ask")
    }

    @Test func anAskBeforeThePauseIsNotLostAndTheGapIsKept() async {
        let requests = InsightsCountRequests()
        requests.ask()
        requests.ask()
        let took = await Self.timed { await requests.pause(for: Self.minute, atLeast: .milliseconds(300)) }
        #expect(took >= .milliseconds(300), "the gap between runs was not kept: \(took)")
        #expect(took < .seconds(30))
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

    @Test func cancellingThePausingTaskEndsThePause() async {
        let requests = InsightsCountRequests()
        let pausing = Task { await Self.timed { await requests.pause(for: Self.minute, atLeast: .zero) } }
        try? await Task.sleep(for: .milliseconds(100))
        pausing.cancel()
        let took = await pausing.value
        #expect(took < .seconds(30), "a cancelled pause ran \(took)")
    }
}
