import Testing
import TourFixtures

@testable import OnboardingServer
@testable import ServerKit
@testable import ServerPushQueue

/// The push queue's state machine (``PushQueue``) without PostgreSQL, threads or a clock: every
/// reachable state of a small queue against every input, thousands of random runs of a larger one,
/// and the faults an operator met, step by step. ``PushQueueWorld`` checks the promises after
/// every input: every push answered exactly once and by its deadline, acknowledged only when
/// committed, "nothing stored" only when nothing was, no writer lost, one batch per account,
/// shutdown always completing.
@Suite("The push queue's state machine")
struct PushQueueTests {
    static let small = PushQueue.Configuration(
        writers: 2, maximumBatch: 2, maximumQueued: 2, maximumWait: .seconds(2), statementLimit: .seconds(2))

    /// Every state a small queue reaches within `depth` inputs (two writers, batches of two, a
    /// queue of two, three accounts, steps of a second against a 2 s wait and a 2 s statement),
    /// each against every input that can happen in it. States are told apart by the whole machine
    /// and world, so each is explored once.
    @Test func everyReachableStateAgainstEveryInput() async {
        let started = ContinuousClock.now
        defer { print("push queue: explored in \(ContinuousClock.now - started)") }
        let depth = Soak.isFull ? 7 : 6
        var seen: Set<PushQueueWorld> = []
        var frontier = [PushQueueWorld(Self.small)]
        var transitions = 0
        var broken: [String] = []
        for _ in 0..<depth where broken.isEmpty {
            var next: [PushQueueWorld] = []
            for (index, world) in frontier.enumerated() {
                // Other tests share the two threads of Swift's pool: give them a turn now and then.
                if index % 500 == 0 { await Task.yield() }
                for input in world.inputs(
                    accounts: world.pushes.count < 4 ? 3 : 0, steps: [.seconds(1)],
                    outcomes: [.committed, .rolledBack, .connectionLost, .refusedData, .failed])
                {
                    var after = world
                    transitions += 1
                    if let problem = after.apply(input) {
                        broken.append("\(input) broke: \(problem)")
                        continue
                    }
                    if seen.insert(after).inserted { next.append(after) }
                }
            }
            frontier = next
        }
        #expect(broken.isEmpty, "\(broken.prefix(5))")
        print("push queue: \(seen.count) states, \(transitions) transitions within \(depth) inputs")
        // It explored something worth the name (a regression that froze the machine would not).
        #expect(seen.count > 2_000, "\(seen.count) states")
        #expect(transitions > 20_000, "\(transitions) transitions")
        // And from every state found, the rest of the story keeps the promises.
        var unfinished: [String] = []
        for (index, world) in seen.shuffled().prefix(Soak.isFull ? 20_000 : 3_000).enumerated() {
            if index % 500 == 0 { await Task.yield() }
            var drained = world
            if let problem = drained.drain() { unfinished.append(problem) }
        }
        #expect(unfinished.isEmpty, "\(unfinished.prefix(5))")
    }

    /// Thousands of random runs of a bigger queue: random arrivals over 12 accounts, leases that
    /// come late or fail, writes that commit, roll back, lose their connection (having committed or
    /// not), hang past every deadline, refuse a push's data, pushes whose callers go away, and a
    /// shutdown somewhere; each run drained at the end.
    @Test func randomRunsKeepEveryPromise() async {
        var generator = SeededGenerator(seed: 60)
        let runs = Soak.isFull ? 10_000 : 4_000
        var broken: [String] = []
        var answers: [String: Int] = [:]
        for run in 0..<runs where broken.count < 3 {
            if run % 100 == 0 { await Task.yield() }
            let configuration = PushQueue.Configuration(
                writers: Int.random(in: 1...3, using: &generator),
                maximumBatch: Int.random(in: 1...5, using: &generator),
                maximumQueued: Int.random(in: 1...12, using: &generator), maximumWait: .milliseconds(1500),
                statementLimit: .milliseconds(2500),
                targetQueueDelay: Bool.random(using: &generator)
                    ? .milliseconds(Int.random(in: 5...400, using: &generator)) : nil)
            var world = PushQueueWorld(configuration)
            world.badPushes = Set(
                (0..<60).filter { _ in Int.random(in: 0..<15, using: &generator) == 0 }.map(UInt64.init))
            var trail: [String] = []
            for _ in 0..<Int.random(in: 20...200, using: &generator) {
                let inputs = world.inputs(
                    accounts: 12,
                    steps: [.milliseconds(10), .milliseconds(300), .milliseconds(1600), .seconds(3)],
                    outcomes: [
                        .committed, .committed, .committed, .rolledBack, .connectionLost, .refusedData,
                        .failed,
                    ])
                // Arrivals and time come often; a shutdown rarely.
                var input = inputs.anyElement(using: &generator)
                if input == .shutdown, Int.random(in: 0..<20, using: &generator) != 0 {
                    input = .advance(by: .milliseconds(50))
                }
                // Some pushes reach the queue late (their plan was read first), a few past their wait.
                if case .arrive(let account, _) = input, Int.random(in: 0..<4, using: &generator) == 0 {
                    input = .arrive(
                        account: account, late: .milliseconds(Int.random(in: 1...1600, using: &generator)))
                }
                trail.append("\(input)")
                if let problem = world.apply(input) {
                    broken.append("run \(run): \(problem) after \(trail.suffix(12))")
                    break
                }
            }
            if broken.isEmpty, let problem = world.drain(outcome: { _ in .committed }) {
                broken.append("run \(run), draining: \(problem) after \(trail.suffix(12))")
            }
            for push in world.pushes.values {
                answers[push.answer.map { "\($0)" } ?? "unanswered", default: 0] += 1
            }
        }
        #expect(broken.isEmpty, "\(broken)")
        // The runs reached every kind of answer.
        let reasons: [PushQueue.Reason] = [
            .waitedForWriter, .rolledBack, .connectionLost, .deadline, .queueFull, .shuttingDown,
            .noConnection,
        ]
        for answer in ["committed", "refused", "failed", "cancelled"] + reasons.map({ "unavailable(\($0))" })
        {
            #expect(answers[answer, default: 0] > 0, "no run answered \(answer): \(answers)")
        }
    }

    /// The operator's fault: one writer, `pushes` locked by a migration. The first push's statement
    /// is cancelled by PostgreSQL (rolled back), five more wait behind it: every push is answered
    /// by its deadline, the writer is given back, and once the lock is gone the next push commits.
    @Test func aLockedTableAnswersEveryPushByItsDeadlineAndFreesTheWriter() {
        let configuration = PushQueue.Configuration(
            writers: 1, maximumBatch: 64, maximumQueued: 8, maximumWait: .milliseconds(1500),
            statementLimit: .milliseconds(2500))
        var world = PushQueueWorld(configuration)
        #expect(world.apply(.arrive(account: 0)) == nil)
        #expect(world.apply(.leaseComes(PushQueue.BatchID(value: 0))) == nil)
        #expect(world.apply(.advance(by: .milliseconds(1600))) == nil)
        for account in 1...5 { #expect(world.apply(.arrive(account: account)) == nil) }
        #expect(world.machine.queued == 5)
        // PostgreSQL cancels the first statement at 2.5 s.
        #expect(world.apply(.advance(by: .milliseconds(900))) == nil)
        #expect(world.apply(.writeEnds(PushQueue.BatchID(value: 0), .rolledBack, commits: false)) == nil)
        #expect(world.pushes[PushQueue.PushID(value: 0)]?.answer == .unavailable(.rolledBack))
        // The five go together, and their batch hangs: each is answered at its deadline, not later.
        #expect(world.apply(.leaseComes(PushQueue.BatchID(value: 1))) == nil)
        #expect(world.apply(.advance(by: .seconds(10))) == nil)
        for push in 1...5 {
            let known = world.pushes[PushQueue.PushID(value: UInt64(push))]!
            #expect(known.answer == .unavailable(.deadline))
            #expect(known.answeredAt == known.arrived + .milliseconds(4000))
        }
        #expect(world.abandoned == [PushQueue.BatchID(value: 1)])
        #expect(world.machine.writersBusy == 0, "the writer is given back")
        // The lock is gone: the next push commits while the abandoned write still hangs.
        #expect(world.apply(.arrive(account: 6)) == nil)
        #expect(world.apply(.leaseComes(PushQueue.BatchID(value: 2))) == nil)
        #expect(world.apply(.writeEnds(PushQueue.BatchID(value: 2), .committed, commits: true)) == nil)
        #expect(world.pushes[PushQueue.PushID(value: 6)]?.answer == .committed)
        #expect(world.drain() == nil)
    }

    /// A batch PostgreSQL refuses for one push's data is written push by push, each only while its
    /// wait lasts: the others are stored, the bad one refused, and none outlives its deadline.
    @Test func aRefusedBatchIsWrittenPushByPushWithinTheirWaits() {
        let configuration = PushQueue.Configuration(
            writers: 1, maximumBatch: 8, maximumQueued: 8, maximumWait: .milliseconds(1500),
            statementLimit: .milliseconds(2500))
        var world = PushQueueWorld(configuration)
        world.badPushes = [2]
        #expect(world.apply(.arrive(account: 0)) == nil)
        for account in 1...3 { #expect(world.apply(.arrive(account: account)) == nil) }
        let first = PushQueue.BatchID(value: 0)
        #expect(world.apply(.leaseComes(first)) == nil)
        #expect(world.apply(.writeEnds(first, .committed, commits: true)) == nil)
        let second = PushQueue.BatchID(value: 1)
        #expect(world.apply(.leaseComes(second)) == nil)
        #expect(world.io[second] == .writing([1, 2, 3].map { PushQueue.PushID(value: $0) }))
        #expect(
            world.apply(.writeEnds(second, .committed, commits: true)) == nil,
            "the bad push refuses the batch")
        #expect(world.io[second] == .writing([PushQueue.PushID(value: 1)]))
        #expect(world.apply(.writeEnds(second, .committed, commits: true)) == nil)
        #expect(world.pushes[PushQueue.PushID(value: 1)]?.answer == .committed)
        // The bad one is written slowly: the last one's wait runs out before its turn.
        #expect(world.apply(.advance(by: .milliseconds(1600))) == nil)
        #expect(world.apply(.writeEnds(second, .committed, commits: true)) == nil)
        #expect(world.pushes[PushQueue.PushID(value: 2)]?.answer == .refused)
        #expect(world.pushes[PushQueue.PushID(value: 3)]?.answer == .unavailable(.waitedForWriter))
        #expect(world.pushes[PushQueue.PushID(value: 3)]?.committed == false)
        #expect(world.drain() == nil)
    }

    /// Shutdown while a batch hangs in PostgreSQL: queued pushes are answered at once, the
    /// hanging batch at its deadline, and the machine stops then, not later.
    @Test func shutdownCompletesByTheLastDeadline() {
        var world = PushQueueWorld(Self.small)
        #expect(world.apply(.arrive(account: 0)) == nil)
        #expect(world.apply(.leaseComes(PushQueue.BatchID(value: 0))) == nil)
        #expect(world.apply(.arrive(account: 0)) == nil, "same account: waits")
        #expect(world.apply(.shutdown) == nil)
        #expect(world.pushes[PushQueue.PushID(value: 1)]?.answer == .unavailable(.shuttingDown))
        #expect(world.stops == 0)
        #expect(world.apply(.arrive(account: 1)) == nil)
        #expect(world.pushes[PushQueue.PushID(value: 2)]?.answer == .unavailable(.shuttingDown))
        #expect(world.apply(.advance(by: .seconds(4))) == nil)
        #expect(world.stops == 1)
        #expect(world.pushes[PushQueue.PushID(value: 0)]?.answer == .unavailable(.deadline))
    }

    /// Shedding by the queue's delay: a burst the writers drain within the interval is taken whole;
    /// a steady overload (the oldest waiting push past the target at every arrival for the
    /// interval) is shed at arrival, and no earlier.
    @Test func aSteadyOverloadIsShedByItsDelayAndABurstIsTakenWhole() {
        let configuration = PushQueue.Configuration(
            writers: 1, maximumBatch: 4, maximumQueued: 1_000, maximumWait: .seconds(10),
            statementLimit: .seconds(10),
            targetQueueDelay: .milliseconds(20))
        var world = PushQueueWorld(configuration)
        // A burst of twelve at once: taken whole, though the writer is busy.
        for account in 0..<12 { #expect(world.apply(.arrive(account: account)) == nil) }
        #expect(world.pushes.values.allSatisfy { $0.answer == nil })
        #expect(world.apply(.leaseComes(PushQueue.BatchID(value: 0))) == nil)
        // The writer's write hangs; a push every 10 ms keeps coming.
        var firstShed: Duration?
        for step in 0..<40 {
            #expect(world.apply(.advance(by: .milliseconds(10))) == nil)
            #expect(world.apply(.arrive(account: 100 + step)) == nil)
            if firstShed == nil,
                world.pushes.values.contains(where: { $0.answer == .unavailable(.queueFull) })
            {
                firstShed = world.now
            }
        }
        // Behind from 30 ms on (the oldest past 20 ms), shed from 100 ms after that.
        #expect(
            firstShed.map { $0 >= .milliseconds(120) && $0 <= .milliseconds(150) } == true,
            "\(String(describing: firstShed))")
        #expect(world.drain() == nil)
    }
}
