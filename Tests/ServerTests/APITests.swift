import AccountSync
import Foundation
import OnboardingServer
import ServerTokens
import TestThreads
import Testing
import TourCore

/// The `/v1` API: privacy, validation, idempotency, convergence. A test of what a route answers
/// runs the routes in process (``InProcessServer``); one that needs the process (its shutdown,
/// its background jobs, its command line) starts it.
@Suite("Account server API", .ownThread)
struct APITests {
    static func push(_ server: ServerProcess, account: String, token: String, _ batch: PushBatch) async throws
        -> HTTP.Answer
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/\(account)/push"), token: token,
            body: try encoder.encode(batch))
    }

    static func push(
        _ server: InProcessServer, account: String, token: String, _ batch: PushBatch,
        untilAnswered: Bool = false
    ) async throws -> HTTP.Answer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let path = "/v1/apps/growth/accounts/\(account)/push"
        let body = try encoder.encode(batch)
        return try await untilAnswered
            ? server.sendUntilAnswered(.post, path, token: token, body: body)
            : server.send(.post, path, token: token, body: body)
    }

    static func item(_ seq: Int64, _ standing: AccountFlowRecord.Standing, device: String, epoch: Int = 0)
        -> PushItem
    {
        PushItem(
            seq: seq, time: 1_767_603_600 + Double(seq), event: "next", catalogVersion: 1,
            facts: [.object(["fact": "stepEntered", "flow": "app_tour", "step": "dashboard", "index": 1])],
            records: [
                "app_tour": AccountFlowRecord(
                    epoch: epoch, standing: standing, version: standing.ending == nil ? nil : "1.0", at: seq,
                    device: device)
            ])
    }

    @Test func aTokenForOneAccountNeitherReadsNorWritesAnothers() async throws {
        let server = try ServerProcess()
        let ann = try server.token(account: "ann")
        let bob = try server.token(account: "bob")
        #expect(
            try await Self.push(
                server, account: "bob", token: bob,
                PushBatch(device: "d1", items: [Self.item(1, .completed, device: "d1")])
            ).status == 200)
        let read = try await HTTP.get(
            server.url.appendingPathComponent("v1/apps/growth/accounts/bob/flows"), token: ann)
        #expect(read.status == 403)
        #expect(read.errorCode == "forbidden")
        #expect(!String(decoding: read.body, as: UTF8.self).contains("completed"))
        let write = try await Self.push(
            server, account: "bob", token: ann,
            PushBatch(device: "d2", items: [Self.item(2, .skipped, device: "d2")]))
        #expect(write.status == 403)
        #expect(try server.sql("SELECT count(*) FROM pushes WHERE account = 'bob'") == ["1"])
        #expect(try server.sql("SELECT standing FROM account_flows WHERE account = 'bob'") == ["completed"])
        // No token, a forged one, an admin one on an account's records, an account one on reports.
        let path = server.url.appendingPathComponent("v1/apps/growth/accounts/ann/flows")
        #expect(try await HTTP.get(path).status == 401)
        #expect(try await HTTP.get(path, token: ann.dropLast(2) + "xx").status == 401)
        #expect(try await HTTP.get(path, token: try server.operatorCredential()).status == 403)
        let report = server.url.appendingPathComponent("v1/apps/growth/report")
        #expect(try await HTTP.get(report, token: ann).status == 403)
        let admin = try await HTTP.counted(report, token: try server.operatorCredential())
        #expect(admin.status == 200)
        #expect(admin.json["accounts"] as? Int == 1)
    }

    /// In process (``InProcessServer``): readiness is a commit on the probe's own connection, and
    /// the probe runs as a service beside the routes, so its connection is closed when they stop
    /// (a probe freed with its connection open is PostgresNIO's assertion failure).
    ///
    /// The services run in a group that handles no signal: the test process's SIGINT and SIGTERM
    /// are as they were after it (a group that ignored them ignored them for every process the
    /// suite starts after, and the tests that stop one with them waited in vain).
    @Test func readinessInProcessCommitsAndClosesItsConnection() async throws {
        func dispositions() -> [UInt] {
            [SIGINT, SIGTERM].map { signal in
                var old = sigaction()
                sigaction(signal, nil, &old)
                return unsafeBitCast(old.__sigaction_handler.sa_handler, to: UInt.self)
            }
        }
        let before = dispositions()
        try await InProcessServer.with { server in
            let ready = try await server.sendUntilAnswered(.get, "/v1/ready")
            #expect(
                ready.status == 200 && ready.json["status"] as? String == "ready",
                "\(ready.status) \(ready.json)")
            let probed = try server.sql("SELECT count(*) FROM readiness_probe").first
            #expect(probed == "1", "the probe's row: \(probed ?? "none")")
        }
        #expect(dispositions() == before, "SIGINT's and SIGTERM's handlers changed by the in-process server")
    }

    /// In process (``InProcessServer``): the answer is the subject, not the process.
    @Test func anExpiredTokenIsRefusedAndSaysSo() async throws {
        try await InProcessServer.with { server in
            let path = "/v1/apps/growth/accounts/ann/flows"
            let expired = await server.signer.sign(
                TokenClaims(subject: "ann", scope: .account, app: "growth", expires: 1_000))
            let answer = try await server.send(.get, path, token: expired)
            #expect(answer.status == 401)
            #expect(answer.errorCode == "token_expired")
            let otherSecret = try TokenSigner(secret: String(repeating: "x", count: 40))
            let forged = await otherSecret.sign(
                TokenClaims(subject: "ann", scope: .account, app: "growth", expires: 9_999_999_999))
            #expect(try await server.send(.get, path, token: forged).errorCode == "unauthorized")
            // The same account's good token is taken: the refusals above are the tokens'.
            #expect(
                try await server.sendUntilAnswered(.get, path, token: await server.token(account: "ann"))
                    .status == 200)
            // A person's credential that has expired is told so in a person's words, on an app's
            // route as on one of every app: what its holder needs is a new one from an owner.
            let lapsed = await server.signer.sign(
                TokenClaims(subject: "vera", scope: .person, app: nil, expires: 1_000, credential: "c1"))
            for route in ["/v1/apps/growth/report", "/v1/apps/growth/keys", "/v1/audit"] {
                let answer = try await server.send(.get, route, token: lapsed)
                let message = (answer.json["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(
                    answer.status == 401 && answer.errorCode == "token_expired"
                        && message.contains("ask an owner"),
                    "\(route): \(answer.status) \(message)")
            }
        }
    }

    /// In process (``InProcessServer``): every refusal's status, JSON and message, and nothing
    /// stored.
    @Test func badInputGetsA4xxJSONErrorAndChangesNothing() async throws {
        try await InProcessServer.with { server in try await Self.refusesBadInput(server) }
    }

    static func refusesBadInput(_ server: InProcessServer) async throws {
        let ann = await server.token(account: "ann")
        let path = "/v1/apps/growth/accounts/ann/push"
        let cases: [(String, Data, Int)] = [
            ("not JSON", Data("{".utf8), 400),
            ("no items", Data(#"{"device":"d1","items":[]}"#.utf8), 400),
            ("a bad device", Data(#"{"device":"d 1","items":[]}"#.utf8), 400),
            (
                "a shown record with a version",
                try JSONEncoder().encode(
                    PushBatch(
                        device: "d1",
                        items: [
                            PushItem(
                                seq: 1, time: 1, event: "next", catalogVersion: 1, facts: [],
                                records: [
                                    "app_tour": AccountFlowRecord(
                                        epoch: 0, standing: .shown, version: "1.0", at: 1, device: "d1")
                                ])
                        ])), 400
            ),
            (
                "a malformed fact after a good item",
                try JSONEncoder().encode(
                    PushBatch(
                        device: "d1",
                        items: [
                            Self.item(1, .completed, device: "d1"),
                            PushItem(
                                seq: 2, time: 1, event: "next", catalogVersion: 1,
                                facts: [.object(["fact": "stepEntered", "flow": "app_tour"])], records: [:]),
                        ])), 400
            ),
            (
                "a record of another device",
                try JSONEncoder().encode(
                    PushBatch(device: "d1", items: [Self.item(1, .completed, device: "d2")])), 400
            ),
            (
                // Stored, every device of the account would overflow adding the next epoch on a reset.
                "an epoch at Int.max",
                try JSONEncoder().encode(
                    PushBatch(device: "d1", items: [Self.item(1, .completed, device: "d1", epoch: Int.max)])),
                400
            ),
            (
                // PostgreSQL's text cannot hold it: the device's mistake, a 400, not a failure of the server.
                "a NUL character in a fact",
                try JSONEncoder().encode(
                    PushBatch(
                        device: "d1",
                        items: [
                            PushItem(
                                seq: 1, time: 1, event: "next", catalogVersion: 1,
                                facts: [.object(["fact": "custom", "flow": "app_tour", "note": "a\u{0}b"])],
                                records: [:])
                        ])), 400
            ),
            ("too large", Data(repeating: UInt8(ascii: " "), count: SyncAPI.maxBodyBytes + 10), 413),
        ]
        for (name, body, status) in cases {
            let answer = try await server.send(.post, path, token: ann, body: body)
            #expect(answer.status == status, "\(name): \(answer.status)")
            #expect(answer.errorCode != nil, "\(name): no JSON error")
            #expect((answer.json["error"] as? [String: Any])?["message"] as? String != nil)
        }
        let tooMany = PushBatch(
            device: "d1",
            items: (1...Int64(SyncAPI.maxItemsPerPush + 1)).map { Self.item($0, .shown, device: "d1") })
        #expect(
            try await server.send(.post, path, token: ann, body: JSONEncoder().encode(tooMany)).status == 400)
        #expect(try server.sql("SELECT count(*) FROM pushes") == ["0"])
        #expect(try server.sql("SELECT count(*) FROM account_flows") == ["0"])
        let badName = try await server.send(.get, "/v1/apps/gr%20owth/accounts/ann/flows", token: ann)
        #expect(badName.status == 400)
        #expect(try await server.send(.get, "/v2/anything").status == 404)
        // A good push on the same route is stored: the refusals above are the bodies'.
        let good = try JSONEncoder().encode(
            PushBatch(device: "d1", items: [Self.item(1, .completed, device: "d1")]))
        #expect(try await server.send(.post, path, token: ann, body: good).status == 200)
        #expect(try server.sql("SELECT count(*) FROM pushes") == ["1"])
    }

    /// In process (``InProcessServer``): each route reads no more than its largest honest request
    /// (`BodyLimit`), the public enrollment route included, and a body over it changes nothing.
    @Test func eachRouteReadsNoMoreThanItsLargestHonestBody() async throws {
        try await InProcessServer.with { server in
            let ann = await server.token(account: "ann")
            func padded(_ bytes: Int, then text: String = "") -> Data {
                Data(repeating: UInt8(ascii: " "), count: bytes) + Data(text.utf8)
            }
            let account = "/v1/apps/growth/accounts/ann"
            // (route, token, body, whether it is over the route's limit)
            let cases: [(String, String?, Data, Bool)] = [
                ("/v1/apps/growth/installs", nil, padded(16 << 10, then: "{}"), true),
                ("/v1/apps/growth/installs", nil, padded(8 << 10, then: "{}"), false),
                ("\(account)/sign-out", ann, padded(16 << 10, then: "{}"), true),
                ("\(account)/budget", ann, padded(64 << 10, then: "{}"), true),
                ("\(account)/budget", ann, padded(20 << 10, then: "{}"), false),
                ("\(account)/push", ann, padded(64 << 10, then: "{}"), false),
            ]
            for (route, token, body, over) in cases {
                let answer = try await server.sendUntilAnswered(.post, route, token: token, body: body)
                let message = (answer.json["error"] as? [String: Any])?["message"] as? String ?? ""
                if over {
                    #expect(
                        answer.status == 413, "\(route) with \(body.count) bytes: \(answer.status) \(message)"
                    )
                    #expect(message.contains("at most"), "\(route): \(message)")
                } else {
                    // Read, and refused for what it says (an empty object), not for its size.
                    #expect(
                        answer.status != 413 && answer.status >= 400,
                        "\(route) with \(body.count) bytes: \(answer.status) \(message)")
                }
            }
            // Nothing was stored, and the sign-out over its limit signed no one out.
            #expect(try server.sql("SELECT count(*) FROM pushes") == ["0"])
            #expect(try server.sql("SELECT count(*) FROM token_cutoffs") == ["0"])
            #expect(try await server.sendUntilAnswered(.get, "\(account)/flows", token: ann).status == 200)
        }
    }

    /// In process (``InProcessServer``).
    @Test func aRetriedBatchChangesNothing() async throws {
        try await InProcessServer.with { server in
            let ann = await server.token(account: "ann")
            let batch = PushBatch(
                device: "d1",
                items: [Self.item(1, .shown, device: "d1"), Self.item(2, .completed, device: "d1")])
            let first = try await Self.push(server, account: "ann", token: ann, batch)
            #expect(first.json["applied"] as? Int == 2)
            let facts = try server.sql("SELECT count(*) FROM facts")
            #expect(facts == ["2"])
            let again = try await Self.push(server, account: "ann", token: ann, batch)
            #expect(again.json["applied"] as? Int == 0)
            #expect(again.json["duplicates"] as? Int == 2)
            #expect(try server.sql("SELECT count(*) FROM facts") == facts)
            #expect(try server.sql("SELECT count(*) FROM pushes") == ["2"])
        }
    }

    /// The SQL merge is the same join: random pushes of many devices, sent in random orders with
    /// duplicates to separate accounts, leave every account with the record the Swift fold gives.
    /// In process (``InProcessServer``).
    @Test func everyOrderOfPushesConvergesOnTheServer() async throws {
        try await InProcessServer.with { server in try await Self.convergesInEveryOrder(server) }
    }

    static func convergesInEveryOrder(_ server: InProcessServer) async throws {
        var random = SystemRandomNumberGenerator()
        let devices = ["d1", "d2", "d3", "d4"]
        var pushes: [PushItem] = []
        var seq: Int64 = 0
        for device in devices {
            for _ in 0..<4 {
                seq += 1
                let standing = AccountFlowRecord.Standing.allCases.anyElement(using: &random)
                pushes.append(
                    Self.item(seq, standing, device: device, epoch: Int.random(in: 0...1, using: &random)))
            }
        }
        let expected = pushes.flatMap(\.records.values).reduce(AccountFlowRecord.nothing) {
            $0.merged(with: $1)
        }
        for order in 0..<6 {
            let account = "order\(order)"
            let token = await server.token(account: account)
            var delivered = pushes.shuffled(using: &random)
            delivered += delivered.prefix(5)
            var held = AccountFlowRecord.nothing
            for item in delivered {
                let record = try #require(item.records["app_tour"])
                let device = record.device
                // Sent again while the suite's load makes the server shed.
                let answer = try await Self.push(
                    server, account: account, token: token, PushBatch(device: device, items: [item]),
                    untilAnswered: true)
                try #require(
                    answer.status == 200, "order \(order): \(String(decoding: answer.body, as: UTF8.self))")
                // The answer carries the account's record after this push's join, whether or not
                // the pushed record won it.
                held = held.merged(with: record)
                let ack = try JSONDecoder().decode(PushAck.self, from: answer.body)
                #expect(ack.records["app_tour"] == held, "order \(order)")
            }
            let records = try await server.sendUntilAnswered(
                .get, "/v1/apps/growth/accounts/\(account)/flows", token: token)
            try #require(
                records.status == 200, "order \(order): \(String(decoding: records.body, as: UTF8.self))")
            let decoded = try JSONDecoder().decode(AccountRecords.self, from: records.body)
            #expect(decoded.flows["app_tour"] == expected, "order \(order)")
        }
    }

    /// Pushes of one account's devices at the same moment: each answer holds at least the record
    /// it pushed (the join of it and whatever won before), and the account ends with the fold.
    @Test func concurrentPushesOfOneAccountEachAnswerTheirRecordJoinedWithTheAccounts() async throws {
        let server = try ServerProcess()
        let token = try server.token(account: "crowd")
        let pushes = (1...24).map { seq in
            Self.item(
                Int64(seq),
                AccountFlowRecord.Standing.allCases[seq % AccountFlowRecord.Standing.allCases.count],
                device: "d\(seq % 6)", epoch: seq % 5 == 0 ? 1 : 0)
        }
        let acks = try await withThrowingTaskGroup(of: (PushItem, PushAck).self) { group in
            for item in pushes {
                group.addTask {
                    let device = item.records["app_tour"]!.device
                    let answer = try await Self.push(
                        server, account: "crowd", token: token, PushBatch(device: device, items: [item]))
                    #expect(answer.status == 200)
                    return (item, try JSONDecoder().decode(PushAck.self, from: answer.body))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(acks.count == pushes.count)
        for (item, ack) in acks {
            let answered = try #require(ack.records["app_tour"])
            #expect(answered.merged(with: item.records["app_tour"]!) == answered, "push \(item.seq)")
        }
        let expected = pushes.flatMap(\.records.values).reduce(AccountFlowRecord.nothing) {
            $0.merged(with: $1)
        }
        let records = try await HTTP.get(
            server.url.appendingPathComponent("v1/apps/growth/accounts/crowd/flows"), token: token)
        #expect(
            try JSONDecoder().decode(AccountRecords.self, from: records.body).flows["app_tour"] == expected)
    }

    @Test func readinessFollowsTheDatabaseAndHealthDoesNot() async throws {
        let server = try ServerProcess()
        #expect(try await HTTP.get(server.url.appendingPathComponent("v1/ready")).status == 200)
        #expect(
            try await HTTP.get(server.url.appendingPathComponent("v1/health")).json["status"] as? String
                == "ok")
    }

    /// SIGTERM: the server finishes and exits cleanly (swift-service-lifecycle's graceful shutdown).
    @Test func sigtermShutsTheServerDownGracefully() async throws {
        let server = try ServerProcess()
        server.stop(signal: SIGTERM)
        #expect(server.exitStatus == 0, "\(server.logText)")
    }
}
