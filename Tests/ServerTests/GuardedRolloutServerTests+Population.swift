import AccountSync
import Foundation
import OnboardingServer
import ServerTokens
import Testing
import TourCodec
import TourCore
import TourFixtures

extension GuardedRolloutServerTests {
    /// New subjects, each running a flow on the version its device would take and pushing its
    /// facts as its account's device.
    struct Population {
        /// Where the subjects push (another server after a failover, when the first did not follow).
        var server: ServerProcess
        let signer: TokenSigner
        let app: String
        /// The guarded publication's version and the version it replaces, each with its engine.
        let candidate: Int
        let engines: [Int: TourEngine]
        var random: SplitMix64
        var next = 0
        var pushed = (candidates: 0, baselines: 0)

        init(
            _ server: ServerProcess, seed: UInt64, app: String = "trial", candidate: Int = 2,
            engines: [Int: TourEngine]? = nil
        ) throws {
            self.server = server
            signer = try TokenSigner(secret: ServerProcess.secret)
            random = SplitMix64(seed: seed)
            self.app = app
            self.candidate = candidate
            self.engines =
                engines ?? [
                    1: TourEngine(catalog: ExperimentFixture.catalog(version: 1, experiment: nil)),
                    2: TourEngine(catalog: ExperimentFixture.catalog(version: 2, experiment: nil)),
                ]
        }

        /// The guarded version's live rollout (0 once withdrawn).
        func rollout() throws -> Int {
            let row = try server.sql(
                """
                SELECT CASE WHEN withdrawn_at IS NULL THEN rollout ELSE 0 END FROM catalogs WHERE app = \
                '\(app)' AND version = \(candidate)
                """
            )
            return Int(row.first ?? "") ?? 0
        }

        /// Subjects arrive until `candidates` took the guarded version (its rollout's bucket
        /// includes them) and `baselines` the other (as many as there can be); each completes the
        /// flow with its version's chance and skips it otherwise, as its device's engine runs it
        /// (a delayed start is waited for). Only the first `baselines` outside the rollout push:
        /// the comparison needs rates, not the whole population.
        mutating func arrive(candidates: Int, baselines: Int, completion: [Int: Double]) async throws {
            let percent = try rollout()
            // Nobody can take the guarded version once it is withdrawn, nor the other once it is at 100%.
            var wanted = (candidates: percent > 0 ? candidates : 0, baselines: percent < 100 ? baselines : 0)
            let expires = Int64(Date().timeIntervalSince1970) + 3_600
            let baseline = try #require(engines.keys.first { $0 != candidate })
            while wanted.candidates > 0 || wanted.baselines > 0 {
                next += 1
                let account = "guarded\(next)"
                let subject = "account:\(account)"
                let inRollout = Rollout.includes(
                    subject: subject, salt: Rollout.catalogSalt(app: app, version: candidate),
                    percent: percent)
                let version = inRollout ? candidate : baseline
                if inRollout ? wanted.candidates == 0 : wanted.baselines == 0 { continue }
                let completes = Double.random(in: 0..<1, using: &random) < (try #require(completion[version]))
                let engine = try #require(engines[version])
                var state = TourState()
                var items: [PushItem] = []
                var now = Date()
                func send(_ event: TourEvent) throws {
                    let transition = try engine.reduce(
                        state, event, at: now,
                        subjects: ExperimentSubjects(install: "install:\(account)", account: subject))
                    state = transition.state
                    items.append(
                        PushItem(
                            seq: Int64(items.count + 1), time: now.timeIntervalSince1970, event: "event",
                            catalogVersion: version,
                            facts: transition.record.facts.map(\.tourValue), records: [:]))
                    now = now.addingTimeInterval(0.001)
                }
                try send(.appLaunched(version: "1.0"))
                for _ in 0..<50 {
                    if state.presentingFlow != nil {
                        try send(.actionPerformed(completes ? "next" : "skip", parameters: [:]))
                    } else if let due = state.flows.values.compactMap({ $0.pendingStart ?? $0.deadline })
                        .min()
                    {
                        now = max(now, due)
                        try send(.clockAdvanced)
                    } else {
                        break
                    }
                }
                let token = await signer.sign(
                    TokenClaims(subject: account, scope: .account, app: app, expires: expires))
                let answer = try await HTTP.post(
                    server.url.appendingPathComponent("v1/apps/\(app)/accounts/\(account)/push"),
                    token: token,
                    body: Data(try PushBatch(device: "device-\(account)", items: items).tourValue.jsonUTF8()))
                guard answer.status == 200 else {
                    throw HarnessFailure("push \(account): \(String(decoding: answer.body, as: UTF8.self))")
                }
                if inRollout {
                    wanted.candidates -= 1
                    pushed.candidates += 1
                } else {
                    wanted.baselines -= 1
                    pushed.baselines += 1
                }
            }
        }

        /// Waits until the rollout is no longer at `stage` percent, by time (the guard reads what the
        /// insights job counted, which a machine busy with the whole suite delays for tens of
        /// seconds), and returns where it is.
        func untilRollout(leaves stage: Int, seconds: Double = 60) throws -> Int {
            let deadline = Date().addingTimeInterval(seconds)
            var now = try rollout()
            while now == stage, Date() < deadline {
                usleep(100_000)
                now = try rollout()
            }
            return now
        }

        /// Waits until the guard looked at every subject pushed so far (or acted on fewer), give
        /// or take `besides` subjects the test's own devices pushed.
        func untilLooked(seconds: Double = 60, besides: Int = 0) throws -> (status: String, rollout: Int) {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let row =
                    try server.sql(
                        """
                        SELECT g.status, coalesce((SELECT candidate_trials FROM guarded_rollout_looks l
                            WHERE l.app = g.app AND l.version = g.version ORDER BY at DESC LIMIT 1), -1)
                        FROM guarded_rollouts g WHERE g.app = '\(app)' AND g.version = \(candidate)
                        """
                    ).first?.split(separator: "|").map(String.init) ?? []
                if row.count == 2,
                    row[0] != "running"
                        || (Int(row[1]) ?? -1) >= pushed.candidates
                            && (Int(row[1]) ?? -1) <= pushed.candidates + besides
                {
                    return (row[0], try rollout())
                }
                usleep(100_000)
            }
            throw HarnessFailure(
                "the rollout guard did not look at \(pushed.candidates) candidates within \(seconds) s")
        }
    }
}
