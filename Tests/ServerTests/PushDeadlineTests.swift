import AccountSync
import Dispatch
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import Synchronization
import TestThreads
import Testing
import TourFixtures

@testable import OnboardingServer
@testable import ServerKit
@testable import ServerSyncAPI

/// A push's wait for a writer is a promise to the device (answered 503 at it, nothing stored), so
/// it must hold while the server's threads are busy: a sweeper that slept as a task on Swift's
/// cooperative pool waited for a free thread of that pool, and in a loaded CI run a push stayed
/// unanswered ten seconds past its 0.3 s.
@Suite("A push's deadline", .ownThread)
struct PushDeadlineTests {
    @Test func aPushIsAnsweredAtItsWaitWhileSwiftsPoolIsBusy() async throws {
        var logger = Logger(label: "push-deadline")
        logger.logLevel = .critical
        // The writer never gets a connection (nothing listens there): only the deadline answers.
        let nowhere = try DatabaseURL("postgres://onboarding@127.0.0.1:1/nowhere")
        let writers = PostgresClient(
            configuration: nowhere.clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
        let batcher = PushBatcher(
            writer: PushWriter(client: writers, logger: logger), writers: 1, maximumWait: .milliseconds(300))
        let item = PushBatchingTests.item(1, flow: "tour", standing: .completed, device: "d")
        let request = PushRequest(app: "growth", account: "ann", batch: PushBatch(device: "d", items: [item]))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await writers.run() }
            // Every thread of the pool held for up to three seconds (released as soon as the push is
            // answered).
            let pool = PoolHolder(for: .seconds(3))
            try #require(
                pool.holdsEveryThread(within: .seconds(30)), "the pool's threads were never all free to hold")
            let asked = ContinuousClock.now
            // A child task runs on this test's own thread, so only the push's deadline is measured.
            async let answer = Self.answer(batcher.push(request))
            let answered = await answer
            let waited = ContinuousClock.now - asked
            pool.release()
            #expect(answered == "unavailable")
            // 0.3 s and a sweep of 0.1 s; a sweeper on the pool answered only once it was released (3 s).
            #expect(waited < .milliseconds(1_500), "answered after \(waited), while the pool was held")
            group.cancelAll()
        }
    }

    static func answer(_ push: @autoclosure () async throws -> PushAck?) async -> String {
        do {
            _ = try await push()
            return "stored"
        } catch is DatabaseUnavailable {
            return "unavailable"
        } catch {
            return "\(error)"
        }
    }
}

/// Holds every thread of Swift's cooperative pool (one a core) with a task blocked on a semaphore,
/// as a machine whose pool is busy with other work would.
private final class PoolHolder: @unchecked Sendable {
    private let width = ProcessInfo.processInfo.activeProcessorCount
    private let holding = Atomic<Int>(0)
    private let gate = DispatchSemaphore(value: 0)

    init(for limit: Duration) {
        let seconds = Double(limit.components.seconds)
        for _ in 0..<width {
            Task.detached { [self] in
                holding.add(1, ordering: .sequentiallyConsistent)
                _ = gate.wait(timeout: .now() + seconds)
            }
        }
    }

    /// Whether every holder is running (each on a thread of its own of the pool) within `wait`.
    func holdsEveryThread(within wait: Duration) -> Bool {
        let until = ContinuousClock.now + wait
        while holding.load(ordering: .sequentiallyConsistent) < width, ContinuousClock.now < until {
            usleep(1_000)
        }
        return holding.load(ordering: .sequentiallyConsistent) == width
    }

    func release() {
        for _ in 0..<width { gate.signal() }
    }
}
