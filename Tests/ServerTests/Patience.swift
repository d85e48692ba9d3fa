import Foundation

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
    static func untilAnswered<Answer>(_ attempt: () throws -> Answer, busy: (Answer) -> Bool) throws -> Answer {
        let giveUp = ContinuousClock.now + limit
        var answer = try attempt()
        while busy(answer), ContinuousClock.now < giveUp {
            Thread.sleep(forTimeInterval: 0.5)
            answer = try attempt()
        }
        return answer
    }
}
