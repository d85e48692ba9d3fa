import AccountSync
import Foundation
import Synchronization
import Testing

/// Devices pushing in loops, as phones do: each its own account and device, pushing its next
/// journal row (one item with a fact and a record) and, on any answer but 200, the same row again
/// after `retry`. Every answer is kept with when it came, so a test can say what the server
/// answered during a fault, how long each push waited, and when it took pushes again; ``verify``
/// checks the database against what was acknowledged.
final class PushLoad: Sendable {
    struct Answer: Sendable {
        var loop: Int
        var seq: Int64
        var sent: ContinuousClock.Instant
        var answered: ContinuousClock.Instant
        /// The HTTP status, or nil when nothing answered (the client gave up after 10 s).
        var status: Int?
        var code: String?
        var seconds: Double { (answered - sent).seconds }
    }

    private struct State {
        var answers: [Answer] = []
        var stopped = false
    }

    let server: ServerProcess
    let accounts: [String]
    let tokens: [String]
    let retry: Duration
    let pace: Duration
    private let state = Mutex(State())
    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// `loops` devices of accounts named `prefix0`, `prefix1`, ...; each pushes again `pace` after
    /// an acknowledgement and `retry` after anything else.
    init(
        _ server: ServerProcess, loops: Int, prefix: String = "loop", retry: Duration = .milliseconds(100),
        pace: Duration = .milliseconds(20)
    )
        throws
    {
        self.server = server
        accounts = (0..<loops).map { "\(prefix)\($0)" }
        tokens = try accounts.map { try server.token(account: $0) }
        self.retry = retry
        self.pace = pace
    }

    func start() {
        let started = accounts.indices.map { loop in
            Task.detached { [self] in await run(loop) }
        }
        tasks.withLock { $0 = started }
    }

    /// Stops the loops after their push in flight, and waits for them.
    func stop() async {
        state.withLock { $0.stopped = true }
        for task in tasks.withLock({ $0 }) { await task.value }
    }

    var answers: [Answer] { state.withLock { $0.answers } }

    private func run(_ loop: Int) async {
        var seq: Int64 = 1
        let device = "dev-\(accounts[loop])"
        while !state.withLock({ $0.stopped }) {
            let sent = ContinuousClock.now
            var answer = Answer(loop: loop, seq: seq, sent: sent, answered: sent, status: nil, code: nil)
            do {
                let body = try PushBatch(
                    device: device,
                    items: [
                        PushBatchingTests.item(
                            seq, flow: "tour", standing: seq % 2 == 0 ? .completed : .skipped, device: device)
                    ]
                ).tourValue.jsonUTF8()
                let reply = try await HTTP.post(
                    server.url.appendingPathComponent("v1/apps/growth/accounts/\(accounts[loop])/push"),
                    token: tokens[loop],
                    body: Data(body))
                answer.status = reply.status
                answer.code = reply.errorCode
            } catch {
                answer.code = "\(error)"
            }
            answer.answered = ContinuousClock.now
            state.withLock { $0.answers.append(answer) }
            if answer.status == 200 {
                seq += 1
                try? await Task.sleep(for: pace)
            } else {
                try? await Task.sleep(for: retry)
            }
        }
    }

    /// The longest any push waited for its answer (nothing answered counts as forever).
    var longestWait: Double { answers.map { $0.status == nil ? .infinity : $0.seconds }.max() ?? 0 }

    /// Pushes whose answer took longer than `seconds`, or never came.
    func late(_ seconds: Double) -> [Answer] { answers.filter { $0.status == nil || $0.seconds > seconds } }

    /// The first acknowledgement of a push sent at or after `instant`.
    func firstAccepted(after instant: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        answers.filter { $0.status == 200 && $0.answered >= instant }.map(\.answered).min()
    }

    /// The answers from `instant` on, each as `sent+answered status code` in seconds from it (a
    /// failed test's account of what the server said).
    func trail(from instant: ContinuousClock.Instant, limit: Int = 40) -> String {
        answers.filter { $0.answered >= instant }.sorted { $0.answered < $1.answered }.prefix(limit).map {
            answer in
            String(
                format: "%.2f+%.2f %@ %@", (answer.sent - instant).seconds, answer.seconds,
                "\(answer.status ?? 0)", answer.code ?? "")
        }.joined(separator: "; ")
    }

    /// What the database holds against what was acknowledged: every acknowledged row is stored
    /// once with its one fact, and nothing else is but, per loop, the last row sent (answered
    /// 503 while its commit was unconfirmed, and never sent again because the loop stopped).
    /// The problems, if any.
    func verify() throws -> [String] {
        var problems: [String] = []
        let answers = self.answers
        let names = accounts.map { "'\($0)'" }.joined(separator: ",")
        let rows = try server.sql(
            "SELECT account, seq, count(*) FROM pushes WHERE account IN (\(names)) GROUP BY account, seq")
        let facts = try server.sql(
            "SELECT account, seq, count(*) FROM facts WHERE account IN (\(names)) GROUP BY account, seq")
        /// `account|seq|count` rows as counts by account and seq.
        func counts(_ lines: [String]) throws -> [String: [Int64: Int]] {
            var counts: [String: [Int64: Int]] = [:]
            for line in lines {
                let parts = line.split(separator: "|")
                let seq: Int64 = try #require(Int64(parts[1]))
                let count: Int = try #require(Int(parts[2]))
                counts[String(parts[0]), default: [:]][seq] = count
            }
            return counts
        }
        let stored = try counts(rows)
        let factCounts = try counts(facts)
        for (loop, account) in accounts.enumerated() {
            let mine = answers.filter { $0.loop == loop }
            let acknowledged = Set(mine.filter { $0.status == 200 }.map(\.seq))
            let last = mine.map(\.seq).max()
            let have = stored[account] ?? [:]
            for seq in acknowledged where have[seq] != 1 {
                problems.append("\(account) seq \(seq) acknowledged, stored \(have[seq] ?? 0) times")
            }
            for seq in acknowledged where factCounts[account]?[seq] != 1 {
                problems.append("\(account) seq \(seq): \(factCounts[account]?[seq] ?? 0) facts, not 1")
            }
            for seq in have.keys where !acknowledged.contains(seq) && seq != last {
                problems.append("\(account) seq \(seq) stored but never acknowledged")
            }
        }
        return problems
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
