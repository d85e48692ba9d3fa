import CSQLite
import Foundation
import Persistence
import TourCodec
import TourCore
import TourRuntime

/// What one accepted event writes, computed by the engine beforehand: the floor's input.
struct EventWrites {
    var flows: [(flow: String, status: String, step: String?, json: String, catalogVersion: Int?)]
    var domain: [(key: String, json: String)]
    /// The app version after the event (the install's, as ours keeps it: one row for the app).
    var appVersion: String?
    /// How far the event moved the virtual clock, when it did (ours keeps the install's clock in
    /// the same row, and it runs on from user to user).
    var clockAdvance: Double?
    var journal:
        (
            time: Double, flow: String?, step: String?, event: String, outcome: String, eventJSON: String,
            contextJSON: String, effectsJSON: String, catalogVersion: Int, factsJSON: String,
            statesJSON: String,
            catalogFingerprint: String?, appVersion: String?
        )
}

extension Journey {
    func writes(from start: Date) throws -> [EventWrites] {
        let engine = perUser.engine
        var before = TourState()
        var domainBefore: [String: TourValue] = [:]
        // Ours keeps one virtual clock for the install, which moves only when time is advanced.
        var nowBefore = start
        return try steps(engine: engine, from: start).map { step in
            let after = step.transition.state
            let flows = after.flows.keys.sorted().filter { after.flows[$0] != before.flows[$0] }.map { id in
                let state = after.flows[id] ?? FlowState()
                return (
                    id.rawValue, state.status.rawValue, state.currentStep?.rawValue, (try? json(state)) ?? "",
                    state.run?.catalogVersion
                )
            }
            let domain = step.domain.keys.sorted().filter { step.domain[$0] != domainBefore[$0] }.map {
                ($0, (try? json(step.domain[$0])) ?? "null")
            }
            let record = step.transition.record
            // The journal row records the stored form of each changed flow, as the products write it.
            let states = "{" + flows.map { "\"\($0.0)\":\($0.3)" }.joined(separator: ",") + "}"
            let writes = EventWrites(
                flows: flows, domain: domain,
                appVersion: after.appVersion,
                clockAdvance: step.now > nowBefore ? step.now.timeIntervalSince(nowBefore) : nil,
                journal: (
                    step.now.timeIntervalSince1970, record.flow?.rawValue, record.step?.rawValue,
                    record.event.name,
                    record.outcome, try json(record.event), try json(step.context),
                    try json(step.transition.effects), engine.catalog.version, try json(record.facts), states,
                    perUser.fingerprint, after.appVersion
                ))
            before = after
            nowBefore = step.now
            domainBefore = step.domain
            return writes
        }
    }
}

/// Ours and the raw floor, user by user in turn (which of the two goes first alternates), so both
/// see the same disk and the same load on the machine: a ratio measured in two blocks minutes apart
/// moved by 1.8× between runs on this shared machine.
///
/// The goal's ratio is the median of the users' paired ratios (each user's time per event, ours
/// over the floor's), not the ratio of the sums: a single stall of the disk's flush (tens of
/// milliseconds, seen on this host several times a minute) lands on one side of one pair, and in
/// the sums it moved one product's ratio from 1.03× to 1.72× between runs a minute apart. A slower
/// event path slows every pair, so the median shows it as the sums do (Docs/PerformanceHistory.md, "The
/// guard").
///
/// Not isolated to the main actor (top-level code is): the events are sent from a task that runs on
/// the database's executor (`TourSession.executor`), as the CLI sends a command's events, so each
/// `await` does not switch threads.
enum DurablePair {
    static func measure(
        _ journey: Journey, users: Int, folder: URL, start: Date, withFloor: Bool, withOurs: Bool = true
    ) async throws -> (
        ours: Double, committed: Int, raw: Double, pairRatios: [Double]
    ) {
        let product = journey.perUser
        let app = product.catalog.app
        let database = try OnboardingDatabase.open(
            path: folder.appendingPathComponent("ours-\(app).sqlite").path)
        let raw =
            withFloor ? try RawSQLite(path: folder.appendingPathComponent("raw-\(app).sqlite").path) : nil
        let writes = try journey.writes(from: start)
        var committed = 0
        var ours = 0.0
        var rawTime = 0.0
        // Each user's pair: ours and the floor's time per event for the same user's flow.
        var pairRatios: [Double] = []
        func oursFor(_ user: Int) async throws -> (seconds: Double, committed: Int) {
            guard withOurs else { return (0, 0) }
            let before = committed
            let seconds = try await time {
                try await withTaskExecutorPreference(database.executor) {
                    let session = TourSession(
                        product: product, user: "u\(user)", database: database, time: .virtual(start: start))
                    for (after, event) in journey.appEvents {
                        if after > 0 { committed += try await session.advanceClock(by: after).count }
                        if case .clockAdvanced = event { continue }
                        committed += try await session.send(event).count
                    }
                }
            }
            ours += seconds
            return (seconds, committed - before)
        }
        for user in 0..<users {
            let oursFirst = user % 2 == 0
            var mine = (seconds: 0.0, committed: 0)
            var floor = 0.0
            if oursFirst { mine = try await oursFor(user) }
            if let raw { floor = try await time { try raw.commitAll(app: app, user: "u\(user)", writes) } }
            if !oursFirst { mine = try await oursFor(user) }
            rawTime += floor
            if mine.committed > 0, floor > 0, !writes.isEmpty {
                pairRatios.append((mine.seconds / Double(mine.committed)) / (floor / Double(writes.count)))
            }
        }
        return (ours, committed, rawTime, pairRatios)
    }
}

/// The floor for this storage design: the same reads and rows per event through SQLite's C API,
/// prepared statements, one immediate transaction per event, on a WAL file with the same settings.
final class RawSQLite {
    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// Each app's install row as ours keeps it (shared by every user): the app version and the
    /// virtual clock. (A row rewritten with the same values writes no page: SQLite compares.)
    private var installVersion: [String: String] = [:]
    private var installClock: [String: Double] = [:]

    init(path: String) throws {
        // The schema and pragmas come from our own open, so both write the same file format.
        try OnboardingDatabase.open(path: path).createIfMissing()
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            throw BenchFailure("open \(path)")
        }
        try exec("PRAGMA journal_mode = WAL")
        sqlite3_busy_timeout(db, 10_000)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close(db)
    }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchFailure(String(cString: sqlite3_errmsg(db)))
        }
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        guard
            sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
            let statement
        else {
            throw BenchFailure(String(cString: sqlite3_errmsg(db)))
        }
        statements[sql] = statement
        return statement
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds text, doubles, integers, and NULL for anything else, in order.
    private func bind(_ values: [Any?], to statement: OpaquePointer) {
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            switch value {
            case let text as String: sqlite3_bind_text(statement, position, text, -1, Self.transient)
            case let number as Double: sqlite3_bind_double(statement, position, number)
            case let number as Int: sqlite3_bind_int64(statement, position, Int64(number))
            default: sqlite3_bind_null(statement, position)
            }
        }
    }

    /// Binds as ``bind(_:to:)`` does, runs to the end, and counts the rows read.
    @discardableResult
    func run(_ sql: String, _ values: [Any?]) throws -> Int {
        let statement = try statement(sql)
        defer { sqlite3_reset(statement) }
        bind(values, to: statement)
        var rows = 0
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_ROW {
                rows += 1
                _ = sqlite3_column_text(statement, 0)
                continue
            }
            guard code == SQLITE_DONE else { throw BenchFailure(String(cString: sqlite3_errmsg(db))) }
            return rows
        }
    }

    /// Runs a query to its end, reading every column's bytes; the sum of the bytes (so the reads
    /// cannot be skipped).
    func scan(_ sql: String, _ values: [Any?]) throws -> Int {
        let statement = try statement(sql)
        defer { sqlite3_reset(statement) }
        bind(values, to: statement)
        var sum = 0
        while true {
            let code = sqlite3_step(statement)
            guard code == SQLITE_ROW else {
                guard code == SQLITE_DONE else { throw BenchFailure(String(cString: sqlite3_errmsg(db))) }
                return sum
            }
            for column in 0..<sqlite3_column_count(statement) {
                guard let bytes = sqlite3_column_text(statement, column) else { continue }
                let count = Int(sqlite3_column_bytes(statement, column))
                for index in 0..<count { sum &+= Int(bytes[index]) }
            }
        }
    }

    /// One user's whole flow, an event per transaction.
    func commitAll(app: String, user: String, _ writes: [EventWrites]) throws {
        for write in writes { try commit(app: app, user: user, write) }
    }

    /// One event: the session's reads, then its writes, in one immediate transaction.
    func commit(app: String, user: String, _ writes: EventWrites) throws {
        try run("BEGIN IMMEDIATE", [])
        try run(
            "SELECT subject, flow, state_json FROM flow_state WHERE app = ? AND subject IN (?, ?)",
            [app, "@install", user])
        try run("SELECT app_version, virtual_now FROM install_state WHERE app = ?", [app])
        try run("SELECT key, value_json FROM domain_state WHERE app = ? AND subject = ?", [app, user])
        try run("SELECT key, value_json FROM device_state WHERE app = ?", [app])
        let now = Date().timeIntervalSince1970
        for flow in writes.flows {
            try run(
                """
                INSERT INTO flow_state (app, subject, flow, status, step, state_json, updated_at, \
                catalog_version)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app, subject, flow) DO UPDATE SET status = excluded.status, step = excluded.step,
                state_json = excluded.state_json, updated_at = excluded.updated_at, catalog_version = \
                excluded.catalog_version
                """, [app, user, flow.flow, flow.status, flow.step, flow.json, now, flow.catalogVersion])
        }
        // The install's row (app version, virtual clock), when either moved.
        // (An event before the user's first launch knows no version: the install's stays.)
        let version = writes.appVersion ?? installVersion[app]
        if version != installVersion[app] || writes.clockAdvance != nil {
            let clock = (installClock[app] ?? 0) + (writes.clockAdvance ?? 0)
            installClock[app] = clock
            try run(
                """
                INSERT INTO install_state (app, app_version, virtual_now) VALUES (?, ?, ?)
                ON CONFLICT (app) DO UPDATE SET app_version = excluded.app_version, virtual_now = \
                excluded.virtual_now
                """, [app, version, clock])
            installVersion[app] = version
        }
        for value in writes.domain {
            try run(
                """
                INSERT INTO domain_state (app, subject, key, value_json) VALUES (?, ?, ?, ?) ON CONFLICT \
                (app, subject, key) DO UPDATE SET value_json = excluded.value_json
                """,
                [app, user, value.key, value.json])
        }
        let j = writes.journal
        try run(
            """
            INSERT INTO journal (time, app, user, flow, step, event, outcome, event_json, context_json, \
            effects_json,
            catalog_version, facts_json, states_json, catalog_fingerprint, app_version)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                j.time, app, user, j.flow, j.step, j.event, j.outcome, j.eventJSON, j.contextJSON,
                j.effectsJSON, j.catalogVersion, j.factsJSON, j.statesJSON, j.catalogFingerprint,
                j.appVersion,
            ])
        try run("COMMIT", [])
    }
}

/// The seeds' apps keep onboarding state in UserDefaults; this persists the same state that way,
/// once per event (`synchronize()` writes the property list).
struct DefaultsBaseline {
    let defaults: UserDefaults
    let suite: String

    init() {
        suite = "onboarding-bench-\(UUID().uuidString)"
        defaults = UserDefaults(suiteName: suite) ?? .standard
    }

    func commit(app: String, user: String, state: TourState, domain: [String: TourValue]) throws {
        defaults.set(try deterministicEncoder.encode(state), forKey: "\(app).\(user).tour")
        defaults.set(try deterministicEncoder.encode(domain), forKey: "\(app).\(user).domain")
        defaults.synchronize()
    }

    func remove() { defaults.removePersistentDomain(forName: suite) }
}

/// The same state as one JSON file per user, rewritten atomically per event.
struct JSONFileBaseline {
    let folder: URL

    func commit(app: String, user: String, state: TourState, domain: [String: TourValue]) throws {
        struct Stored: Encodable {
            var tour: TourState
            var domain: [String: TourValue]
        }
        let data = try deterministicEncoder.encode(Stored(tour: state, domain: domain))
        try data.write(to: folder.appendingPathComponent("\(app).\(user).json"), options: .atomic)
    }
}
