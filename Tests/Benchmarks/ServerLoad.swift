import AccountSync
import Foundation
import Logging
import NIOCore
import OnboardingServer
import PostgresNIO
import ServerSyncAPI
import ServerTokens
import TourCodec
import TourCore
import TourRuntime

/// The account server's load generator: many devices across many accounts, each pushing its
/// product's flow (the five journeys' real facts and account records, one event per request, as
/// an online device does) against a running `onboarding-server`; and the floor, the same rows
/// inserted straight into PostgreSQL in one transaction per batch through the same driver and the
/// same SQL (`AccountStore.push`), without HTTP, JSON, tokens or validation.
struct ServerLoad {
    let server: URL
    let database: DatabaseURL
    let signer: TokenSigner
    /// How long each measurement runs.
    let duration: Double

    struct Figures {
        var eventsPerSecond: Double
        var p50: Double
        var p99: Double
        var failures: Int
        /// Events the devices had due before the end (paced), or sent (saturation).
        var offered: Int = 0
        var accepted: Int = 0
        /// Paced: p99 of how long after its slot a push went out (ms), not in `p99`.
        var lagP99: Double = 0
        /// p99 of the accepted pushes alone (ms), and the pushes answered 503 (shed).
        var acceptedP99: Double = 0
        var shed: Int = 0
    }

    /// `count` devices offering `eventsPerSecond` together, paced; then the rows the server stored
    /// for them, which must be exactly the pushes it acknowledged (a shed push stores nothing).
    func overload(_ count: Int, run: String, eventsPerSecond: Double) async throws -> (Figures, stored: Int) {
        let figures = try await push(
            try Self.devices(count, run: run, app: "load"), pace: Double(count) / eventsPerSecond)
        let stored = try await withClient(connections: 1) { client in
            var stored = 0
            let rows = try await client.query(
                "SELECT count(*)::bigint FROM pushes WHERE app = 'load' AND account LIKE \(run + "-%")")
            for try await count in rows.decode(Int64.self) { stored = Int(count) }
            return stored
        }
        return (figures, stored)
    }

    /// One device's run through its product's flow as push items, from the pure engine: the facts
    /// each event produced and the records of its flows (every flow kept per account, as
    /// `Journey.perUser` does, so every push merges records).
    static func items(_ journey: Journey, device: String) throws -> [PushItem] {
        let product = journey.perUser
        let start = Date(timeIntervalSince1970: 1_767_603_600)
        var known: [FlowID: AccountFlowRecord.Standing] = [:]
        return try journey.steps(engine: product.engine, from: start).enumerated().map { index, step in
            let facts = try step.transition.record.facts.map {
                try JSONDecoder().decode(TourValue.self, from: try JSONEncoder().encode($0))
            }
            var records: [String: AccountFlowRecord] = [:]
            for flow in product.catalog.flows {
                let (standing, version) = step.transition.state[flow: flow.id].accountStanding
                guard known[flow.id] != standing else { continue }
                known[flow.id] = standing
                records[flow.id.rawValue] = AccountFlowRecord(
                    epoch: 0, standing: standing, version: version, at: Int64(index), device: device)
            }
            return PushItem(
                seq: Int64(index + 1), time: step.now.timeIntervalSince1970,
                event: step.transition.record.event.name,
                catalogVersion: 1, facts: facts, records: records)
        }
    }

    /// A device's endless run: its journey's items with ever-increasing seqs.
    struct DeviceRun {
        let app: String
        let account: String
        let device: String
        let items: [PushItem]
        var next = 0

        mutating func item() -> PushItem {
            var item = items[next % items.count]
            item.seq = Int64(next + 1)
            next += 1
            return item
        }
    }

    static func devices(_ count: Int, run: String, app: String) throws -> [DeviceRun] {
        try (0..<count).map { index in
            let device = "\(run)-d\(index)"
            return DeviceRun(
                app: app, account: "\(run)-a\(index / 2)", device: device,
                items: try items(Journey.all[index % Journey.all.count], device: device))
        }
    }

    /// `count` devices pushing through the server for `duration`. Without a `pace` each device
    /// pushes its next event as soon as the last is answered (saturation: what the server accepts
    /// at most); with one, each device pushes one event every `pace` seconds from a random phase,
    /// as a user tapping through a tour does (latency under that load).
    func throughServer(_ count: Int, run: String, pace: Double? = nil) async throws -> Figures {
        try await push(try Self.devices(count, run: run, app: "load"), pace: pace)
    }

    /// Waits until the insights job has counted every push stored so far, so that one
    /// measurement does not pay for counting the last one's backlog (a saturation run leaves tens
    /// of thousands of pushes to count; a server at a steady pace counts each second's as it goes).
    ///
    /// Then it writes out what the last measurement left to write, a checkpoint of PostgreSQL and
    /// the kernel's dirty pages (`sync`), for the same reason: a saturation run leaves hundreds of
    /// megabytes the kernel writes back about thirty seconds later, in the middle of the next
    /// measurement, and while it does a WAL flush (every commit waits for one) took 100 to 350 ms
    /// instead of 1 (an fsync probe beside `scripts/bench --sections 5`; on an idle disk the
    /// slowest of 10,000 was 5 ms). A server at a steady pace writes back only its own pace.
    ///
    /// It also brings PostgreSQL's statistics up to date (`ANALYZE`), as autovacuum keeps them on a
    /// database in service. The bench fills a database created moments before, faster than
    /// autovacuum looks at it (once a minute): until it does, a table analysed while empty is
    /// planned as the few pages it had when first read, and a connection's cached plan for a
    /// foreign-key check scans the whole partition for every fact (Docs/Performance.md, "What was
    /// not met"): a measurement of that minute measures the young database, not the server.
    func settle() async throws {
        try await withStore(connections: 1) { store in
            try await store.catchUpInsights(waitingUpTo: .seconds(300))
        }
        try await withClient(connections: 1) { client in
            _ = try await client.query("ANALYZE").collect()
            _ = try await client.query("CHECKPOINT").collect()
        }
        sync()
    }

    /// `body` with an `AccountStore` of its own pool of `connections`.
    func withStore<Result: Sendable>(
        connections: Int, _ body: @escaping @Sendable (AccountStore) async throws -> Result
    ) async throws -> Result {
        try await withClient(connections: connections) { client in
            var logger = Logger(label: "floor")
            logger.logLevel = .error
            return try await body(AccountStore(client: client, logger: logger))
        }
    }

    /// `body` with a pool of its own of `connections`.
    func withClient<Result: Sendable>(
        connections: Int, _ body: @escaping @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        var logger = Logger(label: "floor")
        logger.logLevel = .error
        let client = PostgresClient(
            configuration: database.clientConfiguration(maximumConnections: connections),
            backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            let result = try await body(client)
            group.cancelAll()
            return result
        }
    }

    /// The floor: the same items, one transaction per batch, through postgres-nio with the same
    /// SQL and a pool of the server's size.
    func floor(_ count: Int, run: String, connections: Int) async throws -> Figures {
        try await withStore(connections: connections) { store in
            let runs = try Self.devices(count, run: run, app: "floor")
            let deadline = ContinuousClock.now + .milliseconds(Int(duration * 1000))
            return try await measure(runs) { device in
                var device = device
                var latencies: [Double] = []
                var accepted = 0
                while ContinuousClock.now < deadline {
                    let started = ContinuousClock.now
                    let ack = try await store.push(
                        app: device.app, account: device.account,
                        PushBatch(device: device.device, items: [device.item()]))
                    latencies.append(seconds(ContinuousClock.now - started))
                    accepted += ack?.applied ?? 0
                }
                return (latencies, accepted, 0, latencies.count)
            }
        }
    }

    private func measure(
        _ runs: [DeviceRun], _ body: @escaping @Sendable (DeviceRun) async throws -> ([Double], Int, Int, Int)
    ) async throws -> Figures {
        let clock = ContinuousClock()
        let started = clock.now
        let results = try await withThrowingTaskGroup(of: ([Double], Int, Int, Int).self) { group in
            for run in runs { group.addTask { try await body(run) } }
            var all: [([Double], Int, Int, Int)] = []
            for try await result in group { all.append(result) }
            return all
        }
        let elapsed = seconds(clock.now - started)
        let latencies = results.flatMap(\.0).sorted()
        return Figures(
            eventsPerSecond: Double(results.map(\.1).reduce(0, +)) / elapsed,
            p50: percentile(latencies, 0.50) * 1000, p99: percentile(latencies, 0.99) * 1000,
            failures: results.map(\.2).reduce(0, +), offered: results.map(\.3).reduce(0, +),
            accepted: results.map(\.1).reduce(0, +))
    }
}
