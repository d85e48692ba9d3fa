import AccountSync
import Foundation
import OnboardingServer
import ServerTokens
import Testing
import TourCodec
import TourCore
import TourFixtures

extension DashboardTests {
    /// A seeded population: accounts of one app going through a four-step flow under two catalog
    /// versions and two app versions, some on two devices, with what each reached known here.
    struct Population {
        static let steps = ["intro", "goals", "remind", "finish"]
        struct Account {
            var id: String
            var devices: [String]
            /// How many steps it entered (0 = never started), and how it ended.
            var reached: Int
            var ending: String?
            var catalogVersion: Int
            var appVersion: String
            var day: Double
            /// The experiment `tourLength`'s variant: by the account's number, half each.
            var variant: String { (Int(id.dropFirst(4)) ?? 0) % 2 == 0 ? "full" : "short" }
        }

        var app: String
        var accounts: [Account]

        init(app: String, count: Int, seed: UInt64) {
            var random = SplitMix64(seed: seed)
            self.app = app
            accounts = (0..<count).map { index in
                let reached = Int(random.next() % 5)
                let ending: String? =
                    reached == 4 ? "completed" : reached > 0 && random.next() % 3 == 0 ? "skipped" : nil
                return Account(
                    id: "acct\(index)",
                    devices: random.next() % 4 == 0 ? ["dev\(index)a", "dev\(index)b"] : ["dev\(index)a"],
                    reached: reached, ending: ending, catalogVersion: 1 + Int(random.next() % 2),
                    appVersion: random.next() % 2 == 0 ? "1.0" : "1.1",
                    day: 1_764_000_000 + Double(random.next() % 5) * 86_400)
            }
        }

        /// The account's pushes from one device: its facts in order, one event each.
        func items(_ account: Account, device: String) -> [PushItem] {
            guard account.reached > 0 else {
                return [
                    PushItem(
                        seq: 1, time: account.day, event: "appLaunched",
                        catalogVersion: account.catalogVersion,
                        facts: [], records: [:], appVersion: account.appVersion)
                ]
            }
            let arm: TourValue = .object([
                "fact": "assigned", "flow": "welcome", "experiment": "tourLength",
                "variant": .string(account.variant),
                "subject": .string("account:\(account.id)"),
            ])
            var facts: [[TourValue]] = [
                [
                    arm,
                    .object([
                        "fact": "flowStarted", "flow": "welcome", "plan": .strings(Self.steps),
                        "catalogVersion": .int(account.catalogVersion),
                    ]),
                    .object([
                        "fact": "stepEntered", "flow": "welcome", "step": .string(Self.steps[0]), "index": 1,
                    ]),
                ]
            ]
            for step in 1..<account.reached {
                facts.append([
                    .object([
                        "fact": "stepEntered", "flow": "welcome", "step": .string(Self.steps[step]),
                        "index": .int(step + 1),
                    ])
                ])
            }
            if let ending = account.ending {
                facts[facts.count - 1].append(
                    .object([
                        "fact": "flowEnded", "flow": "welcome", "ending": .string(ending),
                        "recorded": .string(ending),
                    ]))
                if ending == "completed" {
                    var goal = arm.objectValue ?? [:]
                    goal["fact"] = "goalReached"
                    facts[facts.count - 1].append(.object(goal))
                }
            }
            let last = facts.count - 1
            return facts.enumerated().map { index, eventFacts in
                let standing: AccountFlowRecord.Standing =
                    account.ending == "completed" && index == last ? .completed : .shown
                return PushItem(
                    seq: Int64(index + 1), time: account.day + Double(index), event: "next",
                    catalogVersion: account.catalogVersion,
                    facts: eventFacts,
                    records: [
                        "welcome": AccountFlowRecord(
                            epoch: 0, standing: standing, version: nil, at: Int64(index), device: device)
                    ],
                    appVersion: account.appVersion)
            }
        }

        /// Pushes every device's items, devices concurrently, each batch sent twice (a retry).
        func push(to server: ServerProcess) async throws {
            let signer = try TokenSignerForTests()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for account in accounts {
                    let token = await signer.token(account: account.id, app: app)
                    for device in account.devices {
                        group.addTask {
                            for item in items(account, device: device) {
                                for _ in 0..<2 {
                                    let body = try PushBatch(device: device, items: [item]).tourValue
                                        .jsonUTF8()
                                    let answer = try await HTTP.post(
                                        server.url.appendingPathComponent(
                                            "v1/apps/\(app)/accounts/\(account.id)/push"),
                                        token: token, body: Data(body))
                                    guard answer.status == 200 else {
                                        throw HarnessFailure(
                                            "push refused: \(String(decoding: answer.body, as: UTF8.self))")
                                    }
                                }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }

        /// The funnel this population should show: started, each step, completed (accounts).
        var expectedStages: [(String, Int)] {
            var stages: [(String, Int)] = [("started", accounts.filter { $0.reached > 0 }.count)]
            for (index, step) in Self.steps.enumerated() {
                stages.append(("step \(step)", accounts.filter { $0.reached > index }.count))
            }
            stages.append(("completed", accounts.filter { $0.ending == "completed" }.count))
            return stages
        }
    }
}

/// Tokens signed in process with the test server's secret (as `onboarding-server token` would).
struct TokenSignerForTests {
    let signer: TokenSigner

    init() throws { signer = try TokenSigner(secret: ServerProcess.secret) }

    func token(account: String, app: String) async -> String {
        await signer.sign(
            TokenClaims(
                subject: account, scope: .account, app: app,
                expires: Int64(Date().timeIntervalSince1970) + 3600))
    }

    /// A shared admin token of the kind releases before 0.19 minted: refused since.
    func adminToken(seconds: Int64, app: String? = nil) async -> String {
        await signer.sign(
            TokenClaims(
                subject: "test-admin", scope: .admin, app: app,
                expires: Int64(Date().timeIntervalSince1970) + seconds))
    }

    /// A person's credential for the row `credential`, expiring in `seconds` (shorter than the
    /// command's days allow, for tests of expiry).
    func personToken(_ person: String, credential: String, seconds: Int64) async -> String {
        await signer.sign(
            TokenClaims(
                subject: person, scope: .person, app: nil,
                expires: Int64(Date().timeIntervalSince1970) + seconds,
                credential: credential))
    }
}
