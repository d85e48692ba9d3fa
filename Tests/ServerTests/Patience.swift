import Foundation
import Testing

/// How long a test's set-up tries again while the server answers 503 ("try again": a read or a
/// write missed its deadline on a machine busy with the whole suite, CI running every suite at
/// once). By time, not by a number of tries: ten tries half a second apart were 35 s, which one CI
/// run's busiest minute outlasted. For requests whose answer is the subject, not its time; a
/// test of deadlines never goes through here.
enum Patience {
    static let limit: Duration = .seconds(120)
    /// Between tries (half a second).
    static let pause: Duration = .milliseconds(500)

    /// `attempt` again, after a pause, while `busy` says its answer is a 503 and the patience lasts;
    /// the last answer.
    static func untilAnswered<Answer>(
        _ attempt: () async throws -> Answer, busy: (Answer) -> Bool
    ) async throws -> Answer {
        let giveUp = ContinuousClock.now + limit
        var answer = try await attempt()
        while busy(answer), ContinuousClock.now < giveUp {
            try await Task.sleep(for: pause)
            answer = try await attempt()
        }
        return answer
    }

    /// The same, for a test that waits synchronously.
    static func untilAnswered<Answer>(_ attempt: () throws -> Answer, busy: (Answer) -> Bool) throws -> Answer
    {
        let giveUp = ContinuousClock.now + limit
        var answer = try attempt()
        while busy(answer), ContinuousClock.now < giveUp {
            Thread.sleep(forTimeInterval: 0.5)
            answer = try attempt()
        }
        return answer
    }
}

/// `work` for each of `items`, at most `width` at once, its results in the items' order: for a
/// test's independent devices or pushes, which one at a time left the machine idle while each
/// waited on its process or its answer.
func concurrently<Item: Sendable, Result: Sendable>(
    _ items: [Item], width: Int = 8, _ work: @escaping @Sendable (Item) async throws -> Result
) async throws -> [Result] {
    try await withThrowingTaskGroup(of: (Int, Result).self) { group in
        var results = [Result?](repeating: nil, count: items.count)
        var next = 0
        func startNext() {
            guard next < items.count else { return }
            let (index, item) = (next, items[next])
            next += 1
            group.addTask { (index, try await work(item)) }
        }
        for _ in 0..<max(1, width) { startNext() }
        while let (index, result) = try await group.next() {
            results[index] = result
            startNext()
        }
        return results.compactMap { $0 }
    }
}

extension HTTP {
    /// An app's `/report` once its figures count every push answered before it: asked again while
    /// the server says they are short (`Onboarding-Stale-Seconds`: the count had not reached the
    /// request within the report's wait, as on a machine busy with the whole suite) or answers 503,
    /// for as long as the patience lasts. For tests that compare the report's numbers with what
    /// they pushed; the tests of staleness itself read `/report` directly.
    static func counted(
        _ url: URL, token: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Answer {
        var tries = 0
        var first: Answer?
        let answer = try await Patience.untilAnswered(
            {
                tries += 1
                let answer = try await HTTP.get(url, token: token)
                if first == nil { first = answer }
                return answer
            }, busy: { $0.status == 503 || $0.staleSeconds != nil })
        if tries > 1, let first {
            // Said in the run's output: how far behind the count was (the insights job's lag).
            print(
                "\(url.path): asked \(tries) times; the first answer was \(first.status)"
                    + (first.staleSeconds.map { ", counted until \($0) s before" } ?? ""))
        }
        #expect(
            answer.staleSeconds == nil,
            """
            the report still counted pushes only until \(answer.staleSeconds ?? "") s ago \
            after \(Patience.limit)
            """,
            sourceLocation: sourceLocation)
        return answer
    }
}
