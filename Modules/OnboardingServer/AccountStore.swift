import AccountSync
import Foundation
import TourCodec
import Logging
import PostgresNIO
import TourCore

/// The server's PostgreSQL: pushed journal rows and their facts, and each account's merged record
/// of each flow. PostgreSQL is the single source of truth; server processes keep nothing between
/// requests, so any number of them can serve the same database.
public struct AccountStore: Sendable {
    public let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    // MARK: - Readiness

    /// Whether PostgreSQL answers now.
    public func isReady() async -> Bool {
        let client = client
        let logger = logger
        do {
            try await withDeadline(.seconds(2)) {
                let rows = try await client.query("SELECT 1", logger: logger)
                for try await _ in rows {}
            }
            return true
        } catch {
            return false
        }
    }

    // MARK: - Token cut-offs

    /// The time before which the account's tokens are refused, if it ever signed out everywhere.
    public func tokenCutoff(app: String, account: String) async throws -> Double? {
        let rows = try await client.query(
            "SELECT not_before FROM token_cutoffs WHERE app = \(app) AND account = \(account)", logger: logger)
        for try await notBefore in rows.decode(Double.self) { return notBefore }
        return nil
    }

    /// Refuses every token of the account issued before `time` ("sign out everywhere"); a later
    /// sign-out moves the cut-off forward, never back.
    @discardableResult
    public func signOutEverywhere(app: String, account: String, at time: Double) async throws -> Double {
        let rows = try await client.query(
            """
            INSERT INTO token_cutoffs (app, account, not_before) VALUES (\(app), \(account), \(time))
            ON CONFLICT (app, account) DO UPDATE SET not_before = greatest(token_cutoffs.not_before, EXCLUDED.not_before)
            RETURNING not_before
            """, logger: logger)
        for try await notBefore in rows.decode(Double.self) { return notBefore }
        return time
    }

    // MARK: - Push

    /// Stores a batch atomically: each journal row once (a row the server already has is a
    /// duplicate and adds nothing), its facts, and the join of each flow's records with the
    /// account's. Returns the account's records of the flows the batch touched.
    ///
    /// The whole push is one statement, so one round trip and one commit: its data-modifying CTEs
    /// are one atomic unit (facts are kept only for rows that were new, and a refused token stores
    /// nothing). Parsing and planning are most of PostgreSQL's work per push (profiled under
    /// `scripts/bench --sections 5`), so the statement count is what the ingest rate follows.
    ///
    /// With `tokenIssuedAt`, the statement also checks the account's sign-out cut-off: a token
    /// issued before it stores nothing, and the answer is nil.
    public func push(app: String, account: String, _ batch: PushBatch, tokenIssuedAt: Double? = nil) async throws
        -> PushAck?
    {
        let items = batch.items
        // The join is associative: fold the batch first, then merge one record per flow.
        var records: [String: AccountFlowRecord] = [:]
        for item in items {
            for (flow, record) in item.records { records[flow] = records[flow].map { $0.merged(with: record) } ?? record }
        }
        let statement = Self.pushStatement(
            app: app, account: account, device: batch.device, items, records: records, tokenIssuedAt: tokenIssuedAt)
        let logger = logger
        return try await client.withConnection { connection in
            var applied = 0
            var merged: [String: AccountFlowRecord] = [:]
            let rows = try await connection.query(statement, logger: logger)
            for try await (count, revoked, flow, epoch, standing, version, at, device) in rows.decode(
                (Int64, Bool, String?, Int64?, String?, String?, Int64?, String?).self)
            {
                if revoked { return nil }
                applied = Int(count)
                if let flow, let epoch, let standing = standing.flatMap(AccountFlowRecord.Standing.init), let at,
                    let device
                {
                    merged[flow] = AccountFlowRecord(epoch: Int(epoch), standing: standing, version: version, at: at, device: device)
                }
            }
            return PushAck(applied: applied, duplicates: items.count - applied, records: merged)
        }
    }

    /// The push as one statement. It answers one row per merged record (or one row without a
    /// record): how many rows were new, whether the token was revoked, and the record.
    ///
    /// The merge is the join in SQL: a record replaces the stored one only when its order key is
    /// greater. Every column is chosen by that comparison instead of a `WHERE` on the update, so
    /// the upsert returns each flow's row as it stands after the join, even when another push
    /// moved it after this statement's snapshot; and it holds the row's lock, so concurrent pushes
    /// of one account serialise per flow.
    static func pushStatement(
        app: String, account: String, device: String, _ items: [PushItem], records: [String: AccountFlowRecord],
        tokenIssuedAt: Double?
    ) -> PostgresQuery {
        let seqs = items.map(\.seq)
        let times = items.map(\.time)
        let events = items.map(\.event)
        let versions = items.map { Int64($0.catalogVersion) }
        let appVersions = items.map { $0.appVersion ?? "" }
        let rows = FactRows(items)
        let flows = records.keys.sorted()
        let values = flows.map { records[$0]! }
        return """
            WITH revoked AS (
                SELECT 1 FROM token_cutoffs
                WHERE app = \(app) AND account = \(account) AND not_before > \(tokenIssuedAt)::float8
            ),
            fresh AS (
                INSERT INTO pushes (app, account, device, seq, time, event, catalog_version, app_version)
                SELECT \(app), \(account), \(device), seq, time, event, catalog_version, NULLIF(app_version, '')
                FROM UNNEST(\(seqs)::bigint[], \(times)::float8[], \(events)::text[], \(versions)::bigint[],
                    \(appVersions)::text[])
                    AS batch(seq, time, event, catalog_version, app_version)
                WHERE NOT EXISTS (SELECT 1 FROM revoked)
                ON CONFLICT DO NOTHING
                RETURNING seq
            ),
            stored AS (
                INSERT INTO facts (app, account, device, seq, idx, kind, flow, step, step_index, ending, body)
                SELECT \(app), \(account), \(device), f.seq, idx, kind, flow, NULLIF(step, ''),
                    step_index, NULLIF(ending, ''), body::jsonb
                FROM UNNEST(\(rows.seqs)::bigint[], \(rows.indexes)::bigint[], \(rows.kinds)::text[],
                    \(rows.flows)::text[], \(rows.steps)::text[], \(rows.stepIndexes)::bigint[],
                    \(rows.endings)::text[], \(rows.bodies)::text[])
                    AS f(seq, idx, kind, flow, step, step_index, ending, body)
                WHERE f.seq IN (SELECT seq FROM fresh)
                RETURNING 1
            ),
            merged AS (
                INSERT INTO account_flows AS held (app, account, flow, order_key, epoch, standing, version, at_ms, device)
                SELECT \(app), \(account), flow, order_key, epoch, standing, NULLIF(version, ''), at_ms, device
                FROM UNNEST(\(flows)::text[], \(values.map(\.orderKey))::text[], \(values.map { Int64($0.epoch) })::bigint[],
                    \(values.map(\.standing.rawValue))::text[], \(values.map { $0.version ?? "" })::text[],
                    \(values.map(\.at))::bigint[], \(values.map(\.device))::text[])
                    AS r(flow, order_key, epoch, standing, version, at_ms, device)
                WHERE NOT EXISTS (SELECT 1 FROM revoked)
                ON CONFLICT (app, account, flow) DO UPDATE SET
                    order_key = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.order_key ELSE held.order_key END,
                    epoch = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.epoch ELSE held.epoch END,
                    standing = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.standing ELSE held.standing END,
                    version = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.version ELSE held.version END,
                    at_ms = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.at_ms ELSE held.at_ms END,
                    device = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.device ELSE held.device END,
                    updated_at = CASE WHEN EXCLUDED.order_key > held.order_key THEN now() ELSE held.updated_at END
                RETURNING flow, epoch, standing, version, at_ms, device
            )
            SELECT (SELECT count(*) FROM fresh), EXISTS (SELECT 1 FROM revoked),
                merged.flow, merged.epoch, merged.standing, merged.version, merged.at_ms, merged.device
            FROM (SELECT 1) AS answer LEFT JOIN merged ON true
            """
    }

    // MARK: - Pull

    public func records(app: String, account: String) async throws -> AccountRecords {
        let logger = logger
        let flows = try await client.withConnection { connection in
            try await Self.records(app: app, account: account, on: connection, logger: logger)
        }
        return AccountRecords(app: app, account: account, flows: flows)
    }

    static func records(
        app: String, account: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> [String: AccountFlowRecord] {
        let rows = try await connection.query(
            """
            SELECT flow, epoch, standing, version, at_ms, device FROM account_flows
            WHERE app = \(app) AND account = \(account)
            """, logger: logger)
        var result: [String: AccountFlowRecord] = [:]
        for try await (flow, epoch, standing, version, at, device) in rows.decode(
            (String, Int64, String, String?, Int64, String).self)
        {
            guard let standing = AccountFlowRecord.Standing(rawValue: standing) else { continue }
            result[flow] = AccountFlowRecord(
                epoch: Int(epoch), standing: standing, version: version, at: at, device: device)
        }
        return result
    }

    // MARK: - Report

    /// The funnel of every flow of an app across all accounts and devices, read from the aggregates
    /// the pushes keep (`InsightsSchema`): a few hundred rows whatever the number of facts.
    public func report(app: String) async throws -> AppReport {
        let logger = logger
        return try await client.withConnection { connection in
            var flows: [String: AppReport.Flow] = [:]
            let standings = try await connection.query(
                """
                SELECT flow, standing, sum(accounts)::bigint FROM insight_standings WHERE app = \(app)
                GROUP BY flow, standing HAVING sum(accounts) > 0
                """, logger: logger)
            for try await (flow, standing, count) in standings.decode((String, String, Int64).self) {
                flows[flow, default: AppReport.Flow(flow: flow)].accounts[standing] = Int(count)
            }
            let milestones = try await connection.query(
                """
                SELECT flow, milestone, sum(subjects)::bigint FROM insight_counts
                WHERE app = \(app) AND milestone IN ('started', 'completed', 'skipped', 'device') GROUP BY flow, milestone
                """, logger: logger)
            for try await (flow, milestone, count) in milestones.decode((String, String, Int64).self) {
                switch milestone {
                case "started": flows[flow, default: AppReport.Flow(flow: flow)].started = Int(count)
                case "completed": flows[flow, default: AppReport.Flow(flow: flow)].completedHere = Int(count)
                case "skipped": flows[flow, default: AppReport.Flow(flow: flow)].skippedHere = Int(count)
                default: flows[flow, default: AppReport.Flow(flow: flow)].devices = Int(count)
                }
            }
            let steps = try await connection.query(
                """
                SELECT flow, step, min(step_index), sum(subjects)::bigint FROM insight_counts
                WHERE app = \(app) AND milestone = 'step' GROUP BY flow, step ORDER BY flow, 3, step
                """, logger: logger)
            for try await (flow, step, index, accounts) in steps.decode((String, String, Int64, Int64).self) {
                flows[flow, default: AppReport.Flow(flow: flow)].steps.append(
                    AppReport.Step(step: step, index: Int(index), accounts: Int(accounts)))
            }
            let totals = try await connection.query(
                "SELECT kind, sum(subjects)::bigint FROM insight_totals WHERE app = \(app) GROUP BY kind", logger: logger)
            var accounts = 0
            var devices = 0
            for try await (kind, count) in totals.decode((String, Int64).self) {
                if kind == "account" { accounts = Int(count) } else { devices = Int(count) }
            }
            return AppReport(
                app: app, accounts: accounts, devices: devices, flows: flows.values.sorted { $0.flow < $1.flow })
        }
    }

    /// The same report computed by scanning every fact: what ``report(app:)`` did before the
    /// aggregates. Kept as the reference the tests check the aggregates against and the benchmark
    /// times beside them; no route serves it.
    public func reportByScan(app: String) async throws -> AppReport {
        let logger = logger
        return try await client.withConnection { connection in
            var flows: [String: AppReport.Flow] = [:]
            let standings = try await connection.query(
                "SELECT flow, standing, count(*) FROM account_flows WHERE app = \(app) GROUP BY flow, standing",
                logger: logger)
            for try await (flow, standing, count) in standings.decode((String, String, Int64).self) {
                flows[flow, default: AppReport.Flow(flow: flow)].accounts[standing] = Int(count)
            }
            let runs = try await connection.query(
                """
                SELECT flow,
                    count(DISTINCT account) FILTER (WHERE kind = 'flowStarted'),
                    count(DISTINCT account) FILTER (WHERE kind = 'flowEnded' AND ending = 'completed'),
                    count(DISTINCT account) FILTER (WHERE kind = 'flowEnded' AND ending IN ('skipped', 'dismissed')),
                    count(DISTINCT device)
                FROM facts WHERE app = \(app) GROUP BY flow
                """, logger: logger)
            for try await (flow, started, completed, skipped, devices) in runs.decode(
                (String, Int64, Int64, Int64, Int64).self)
            {
                flows[flow, default: AppReport.Flow(flow: flow)].started = Int(started)
                flows[flow, default: AppReport.Flow(flow: flow)].completedHere = Int(completed)
                flows[flow, default: AppReport.Flow(flow: flow)].skippedHere = Int(skipped)
                flows[flow, default: AppReport.Flow(flow: flow)].devices = Int(devices)
            }
            let steps = try await connection.query(
                """
                SELECT flow, step, min(step_index), count(DISTINCT account) FROM facts
                WHERE app = \(app) AND kind = 'stepEntered' GROUP BY flow, step ORDER BY flow, 3, step
                """, logger: logger)
            for try await (flow, step, index, accounts) in steps.decode((String, String, Int64, Int64).self) {
                flows[flow, default: AppReport.Flow(flow: flow)].steps.append(
                    AppReport.Step(step: step, index: Int(index), accounts: Int(accounts)))
            }
            let totals = try await connection.query(
                "SELECT count(DISTINCT account), count(DISTINCT device) FROM pushes WHERE app = \(app)",
                logger: logger)
            var accounts = 0
            var devices = 0
            for try await (a, d) in totals.decode((Int64, Int64).self) {
                accounts = Int(a)
                devices = Int(d)
            }
            return AppReport(
                app: app, accounts: accounts, devices: devices, flows: flows.values.sorted { $0.flow < $1.flow })
        }
    }
}

/// A batch's facts as columns for one `UNNEST` insert.
struct FactRows {
    var seqs: [Int64] = []
    var indexes: [Int64] = []
    var kinds: [String] = []
    var flows: [String] = []
    var steps: [String] = []
    var stepIndexes: [Int64] = []
    var endings: [String] = []
    var bodies: [String] = []

    init(_ items: [PushItem]) {
        for item in items {
            for (index, fact) in item.facts.enumerated() {
                let object = fact.objectValue ?? [:]
                seqs.append(item.seq)
                indexes.append(Int64(index))
                kinds.append(object["fact"]?.stringValue ?? "")
                flows.append(object["flow"]?.stringValue ?? "")
                steps.append(object["step"]?.stringValue ?? "")
                stepIndexes.append(Int64(object["index"]?.intValue ?? 0))
                endings.append(object["ending"]?.stringValue ?? "")
                // A fact read from JSON has only finite numbers, so it always has a text.
                bodies.append((try? fact.jsonText()) ?? "{}")
            }
        }
    }
}

/// PostgreSQL did not answer within a request's deadline: it is down, restarting, or every
/// connection is busy. The request changed nothing it did not commit, and the client retries.
public struct DatabaseUnavailable: Error {}

/// Runs `operation`, giving up after `limit` (the operation is cancelled, which rolls back an open
/// transaction). PostgresClient waits for a connection as long as it takes; a request must not wait
/// longer than its client does, so while PostgreSQL is away requests fail fast with a 503 and the
/// pool reconnects in the background.
public func withDeadline<T: Sendable>(
    _ limit: Duration, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw DatabaseUnavailable() }
        return value
    }
}
