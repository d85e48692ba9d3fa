import Metrics
import ServerDatabase
import ServerKit
import ServerPushQueue

/// The push queue's numbers (Docs/Operating.md, "Metrics").
package enum PushMetrics {
    /// Pushes answered, by outcome: `committed`, or the reason they were not
    /// (``PushQueue/Reason``), `refused`, `failed`, `cancelled`.
    static func answered(_ answer: PushQueue.Answer, waited: Duration) {
        switch answer {
        case .committed: committed.increment()
        case .unavailable(let reason): shed[reason]?.increment()
        case .refused: refused.increment()
        case .failed: failed.increment()
        case .cancelled: cancelled.increment()
        }
        answerTime.recordNanoseconds(waited.nanoseconds)
    }

    static let committed = Counter(label: "onboarding_pushes_total", dimensions: [("outcome", "committed")])
    static let refused = Counter(label: "onboarding_pushes_total", dimensions: [("outcome", "refused")])
    static let failed = Counter(label: "onboarding_pushes_total", dimensions: [("outcome", "failed")])
    static let cancelled = Counter(label: "onboarding_pushes_total", dimensions: [("outcome", "cancelled")])
    /// Pushes answered 503, by reason.
    static let shed: [PushQueue.Reason: Counter] = Dictionary(
        uniqueKeysWithValues: [
            PushQueue.Reason.queueFull, .waitedForWriter, .noConnection, .rolledBack, .connectionLost,
            .deadline,
            .shuttingDown,
        ]
        .map { ($0, Counter(label: "onboarding_pushes_shed_total", dimensions: [("reason", "\($0)")])) })
    /// Batches given up at their deadline (their connection closed).
    static let abandoned = Counter(label: "onboarding_push_batches_abandoned_total")
    /// Pushes per transaction the writers run.
    static let batchSize = Recorder(label: "onboarding_push_batch_size", aggregate: true)
    /// From a push's arrival to its answer.
    static let answerTime = Timer(label: "onboarding_push_answer_seconds", preferredDisplayUnit: .seconds)
    /// Pushes waiting for a writer now, and batches holding a writer.
    static let queued = Recorder(label: "onboarding_push_queue_length", aggregate: false)
    static let writersBusy = Recorder(label: "onboarding_push_writers_busy", aggregate: false)

    /// Makes every series exist at 0 from the start (a dashboard finds it before the first event).
    package static func touch() {
        for counter in [committed, refused, failed, cancelled, abandoned] + Array(shed.values) {
            counter.increment(by: 0)
        }
        queued.record(0)
        writersBusy.record(0)
    }
}
