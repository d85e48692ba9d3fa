import AccountSync
import Foundation
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import ServerInsights
import ServerKit
import ServerTokens
import TourCodec
import TourCore

/// The server's PostgreSQL: pushed journal rows and their facts, and each account's merged record
/// of each flow. PostgreSQL is the single source of truth; server processes keep nothing between
/// requests, so any number of them can serve the same database.
public struct AccountStore: Sendable {
    /// The primary's pool that writes (the push writers', when they have none of their own).
    public let client: PostgresClient
    /// Where requests write (``WritableDatabase``) and read (``ReadOnlyDatabase``).
    public let writes: WritableDatabase
    public let reads: ReadOnlyDatabase
    let logger: Logger
    /// Group commit of pushes, when the store was made with `batchingPushes`.
    package let batcher: PushBatcher?
    /// The apps that share the display budget (``sharesBudget(app:)``); nil: the registered apps.
    public var budgetFamily: Set<String>?
    /// Each app's tracking plan, from its catalogs: facts outside it are kept apart.
    let plans: TrackingPlans

    /// With `batchingPushes` writers, pushes that arrive while that many batches are being written
    /// wait and go together in the next one (``PushBatcher``); without it, each push is its own
    /// transaction (the benchmark's floor and the tools).
    ///
    /// `pushClient`, when given, is the writers' own pool (the server's, with a `statement_timeout`,
    /// so a push a writer took is answered within a bound, with what its transaction did);
    /// `pushQueue` bounds the pushes waiting for a writer (``PushBatcher/maximumQueued``).
    ///
    /// `reads`, when given, is where its reads run (the server's read-only pool, or a replica's);
    /// else each read is a `READ ONLY` transaction on `client`.
    public init(
        client: PostgresClient, reads: ReadOnlyDatabase? = nil, logger: Logger,
        batchingPushes writers: Int? = nil,
        pushClient: PostgresClient? = nil, pushQueue: Int? = nil, pushWait: Duration = .milliseconds(1500),
        pushStatementLimit: Duration = .milliseconds(2500), writeBounds: WritableDatabase.Bounds = .init()
    ) {
        self.client = client
        writes = WritableDatabase(client: client, logger: logger, bounds: writeBounds)
        self.reads = reads ?? ReadOnlyDatabase(sharing: client, logger: logger)
        self.logger = logger
        plans = TrackingPlans(reads: self.reads)
        batcher = writers.map {
            PushBatcher(
                writer: PushWriter(client: pushClient ?? client, logger: logger), writers: $0,
                maximumQueued: pushQueue,
                maximumWait: pushWait, statementLimit: pushStatementLimit)
        }
    }

    // MARK: - Readiness

    /// Whether PostgreSQL answers now, on the pool requests write through (the tools' check; the
    /// server's readiness is ``CommitProbe``'s: whether a write commits).
    public func isReady() async -> Bool { await writes.answers(within: .seconds(2)) }

    // MARK: - Token cut-offs

    /// Refuses every token of the account issued before `time` ("sign out everywhere"); a later
    /// sign-out moves the cut-off forward, never back. The cut-off is kept under `name`, the
    /// account's pseudonym under the signing key (``TokenSigner/subjectPseudonym(app:subject:keyID:)``).
    /// When staff did it, `audit` is its row, in the same transaction.
    @discardableResult
    public func signOutEverywhere(
        app: String, account: String, named name: String, at time: Double, audit: AuditLog.Entry? = nil
    ) async throws -> Double {
        return try await writes.write { connection, logger in
            // Pushes of the account in flight commit first; later ones see the cut-off.
            try await SubjectFence.close(app: app, subject: account, on: connection, logger: logger)
            return try await Self.setCutoff(
                app: app, named: name, at: time, on: connection, logger: logger, audit: audit)
        }
    }

    /// Moves every cut-off still kept under a subject's id (written before 0.31) to its pseudonym
    /// under the signing key, in one transaction; answers how many moved. The server does it as it
    /// starts, with its key ring: the migrations cannot, having no key.
    @discardableResult
    public func pseudonymizeCutoffs(with tokens: TokenSigner) async throws -> Int {
        try await writes.write { connection, logger in
            let rows = try await connection.query(
                "SELECT app, account, not_before FROM token_cutoffs WHERE account NOT LIKE 'hmac:%'",
                logger: logger)
            var clear: [(app: String, subject: String, notBefore: Double)] = []
            for try await row in rows.decode((String, String, Double).self) { clear.append(row) }
            for (app, subject, notBefore) in clear {
                try await SubjectFence.close(app: app, subject: subject, on: connection, logger: logger)
                let name = tokens.subjectPseudonym(app: app, subject: subject)
                try await Self.setCutoff(app: app, named: name, at: notBefore, on: connection, logger: logger)
                try await connection.query(
                    "DELETE FROM token_cutoffs WHERE app = \(app) AND account = \(subject)", logger: logger)
            }
            return clear.count
        }
    }

    /// Records a cut-off under `name` (never moving one back) and `audit`, on `connection`.
    @discardableResult
    static func setCutoff(
        app: String, named name: String, at time: Double, on connection: PostgresConnection, logger: Logger,
        audit: AuditLog.Entry? = nil
    ) async throws -> Double {
        let rows = try await connection.query(
            """
            INSERT INTO token_cutoffs (app, account, not_before) VALUES (\(app), \(name), \(time))
            ON CONFLICT (app, account) DO UPDATE SET not_before = greatest(token_cutoffs.not_before,
                EXCLUDED.not_before)
            RETURNING not_before
            """, logger: logger)
        var cutoff = time
        for try await notBefore in rows.decode(Double.self) { cutoff = notBefore }
        if let audit { try await AuditLog.append(audit, on: connection, logger: logger) }
        return cutoff
    }

    // MARK: - Pull

    public func records(app: String, account: String) async throws -> AccountRecords {
        let flows = try await reads.read { connection, logger in
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
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) { connection, logger in
            var report = try await AppReport.read(app: app, on: connection, logger: logger)
            do {
                report.unplanned = try await Self.unplanned(app: app, on: connection, logger: logger)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" {
                // A database not migrated to v12 yet (a staged upgrade) has no facts kept apart.
            }
            return report
        }
    }

    /// Facts no catalog of `app` declares (the dashboard's app page lists them).
    public func unplanned(app: String) async throws -> [AppReport.Unplanned] {
        try await reads.read(within: ReadOnlyDatabase.reportDeadline) {
            try await Self.unplanned(app: app, on: $0, logger: $1)
        }
    }

    /// Facts no catalog of `app` declares, by flow, step and kind (most recent first, at most 200).
    static func unplanned(app: String, on connection: PostgresConnection, logger: Logger) async throws
        -> [AppReport.Unplanned]
    {
        var rows: [AppReport.Unplanned] = []
        let query = try await connection.query(
            """
            SELECT flow, step, kind, count(DISTINCT account)::bigint, count(DISTINCT device)::bigint,
                sum(facts)::bigint,
                min(first_at)::float8, max(last_at)::float8
            FROM unplanned_facts WHERE app = \(app) GROUP BY flow, step, kind ORDER BY 8 DESC, flow, step,
                kind LIMIT 200
            """, logger: logger)
        for try await (flow, step, kind, subjects, devices, facts, first, last) in query.decode(
            (String, String, String, Int64, Int64, Int64, Double, Double).self)
        {
            rows.append(
                AppReport.Unplanned(
                    flow: flow, step: step, kind: kind, subjects: Int(subjects), devices: Int(devices),
                    facts: Int(facts),
                    firstAt: first, lastAt: last))
        }
        return rows
    }

    /// The same report computed by scanning every fact: what ``report(app:)`` did before the
    /// aggregates. Kept as the reference the tests check the aggregates against and the benchmark
    /// times beside them; no route serves it.
    public func reportByScan(app: String) async throws -> AppReport {
        try await reads.read(within: .seconds(600)) { connection, logger in
            var flows: [String: AppReport.Flow] = [:]
            let standings = try await connection.query(
                """
                SELECT flow, standing, count(*) FROM account_flows WHERE app = \(app) GROUP BY flow, standing
                """,
                logger: logger)
            for try await (flow, standing, count) in standings.decode((String, String, Int64).self) {
                flows[flow, default: AppReport.Flow(flow: flow)].accounts[standing] = Int(count)
            }
            let runs = try await connection.query(
                """
                SELECT flow,
                    count(DISTINCT account) FILTER (WHERE kind = 'flowStarted'),
                    count(DISTINCT account) FILTER (WHERE kind = 'flowEnded' AND ending = 'completed'),
                    count(DISTINCT account) FILTER (WHERE kind = 'flowEnded' AND ending IN ('skipped',
                        'dismissed')),
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
                app: app, accounts: accounts, devices: devices,
                flows: flows.values.sorted { $0.flow < $1.flow })
        }
    }
}
