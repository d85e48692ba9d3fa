import ServerDatabase
import Testing

/// When reads go to a replica: after an answer, for ``ReplicaHealth/silence``; at first, only
/// when the replica may be assumed to be one (a `target_session_attrs=standby` host may be a
/// primary until its follower has seen it in recovery).
@Suite struct ReplicaHealthTests {
    @Test func anAnswerCountsForTheSilenceAndTheStartOnlyWhenAssumed() {
        let start = ContinuousClock.now
        let assumed = ReplicaHealth(now: start)
        let unproven = ReplicaHealth(now: start, answeringAtFirst: false)
        #expect(assumed.isAnswering(at: start + .seconds(1)))
        #expect(!assumed.isAnswering(at: start + ReplicaHealth.silence))
        #expect(!unproven.isAnswering(at: start))
        unproven.noteAnswer(at: start + .seconds(10))
        #expect(unproven.isAnswering(at: start + .seconds(12)))
        #expect(!unproven.isAnswering(at: start + .seconds(10) + ReplicaHealth.silence))
    }
}
