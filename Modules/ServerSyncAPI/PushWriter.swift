import AccountSync
import Logging
import PostgresNIO
import ServerPublishing
import ServerPushQueue
import TourCodec
import TourCore

/// Writes pushes through the pool: one with ``PushStatement``, several with ``PushBatchStatement``.
struct PushWriter: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// Whether PostgreSQL may have refused the statement while it was being prepared on the
    /// connection (its first use there). PostgresNIO keeps a failed preparation for the statement's
    /// name on that connection and answers every later use with the same error without sending
    /// it: a statement cancelled while a lock held its preparation (the writers'
    /// `statement_timeout`) would have answered every later push on that connection 503. Only
    /// errors about the data (SQLSTATE classes 22 and 23) come from binding and running a statement
    /// alone; any other refusal may have been the preparation's.
    static func mayHaveFailedPreparing(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server else { return false }
        let state = error.serverInfo?[.sqlState] ?? ""
        return !(state.hasPrefix("22") || state.hasPrefix("23"))
    }

    /// How a push statement's failure ended its transaction, for ``PushQueue``: rolled back for a
    /// passing cause (a statement or lock timeout, an operator's cancel, a deadlock or
    /// serialization failure, a standby that cannot write, PostgreSQL out of resources), the
    /// connection lost while it ran (it may have committed), a push's own data refused (classes 22
    /// and 23), or anything else.
    static func outcome(of error: any Error) -> PushQueue.WriteOutcome {
        if error is CommitUnconfirmed { return .connectionLost }
        guard let error = error as? PSQLError else {
            return error is CancellationError ? .connectionLost : .failed
        }
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown,
            .poolClosed:
            return .connectionLost
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            if state.hasPrefix("08") || state.hasPrefix("57P") { return .connectionLost }
            if ["57014", "55P03", "40001", "40P01", "25006"].contains(state) || state.hasPrefix("53") {
                return .rolledBack
            }
            if state.hasPrefix("22") || state.hasPrefix("23") { return .refusedData }
            return .failed
        default:
            return .failed
        }
    }

    func one(_ request: PushRequest) async throws -> PushAck? {
        try await client.withConnection { connection in
            do { return try await one(request, on: connection) } catch {
                if Self.retiresConnection(error) { Self.retire(connection) }
                throw error
            }
        }
    }

    /// Whether a write that failed with `error` leaves its connection unfit for the next one: its
    /// statement may have failed while being prepared, or its commit was not confirmed.
    static func retiresConnection(_ error: any Error) -> Bool {
        mayHaveFailedPreparing(error) || error is CommitUnconfirmed
    }

    /// Closes a connection whose statement may have failed while being prepared
    /// (``mayHaveFailedPreparing(_:)``); the pool opens another in its place.
    static func retire(_ connection: PostgresConnection) {
        _ = connection.close() as EventLoopFuture<Void>
    }

    /// A push statement runs in its own implicit transaction, which PostgreSQL commits only when it
    /// handles the statement's Sync, after it has sent every row and the statement's completion. A
    /// commit that fails there (the backend terminated, a deferred constraint refusing) reaches
    /// PostgresNIO after the rows have ended, and only closes the connection: the rows alone do not
    /// say the push is stored. PostgresNIO sends a connection's next query only once PostgreSQL has
    /// said it is ready again, which it says after the commit; so one more query answered means
    /// committed. PostgreSQL refusing the query itself (an operator's cancel landing on it) says
    /// the same: it ran, so the commit before it happened. Any other failure means "may have
    /// committed" (``CommitUnconfirmed``).
    static func confirmCommitted(on connection: PostgresConnection, logger: Logger) async throws {
        do {
            for try await _ in try await connection.query("SELECT 1", logger: logger) {}
        } catch let error as PSQLError where Self.ranOnAnOpenConnection(error) {
            return
        } catch {
            throw CommitUnconfirmed(cause: error)
        }
    }

    /// Whether PostgreSQL itself answered a query with this error on a connection that stays open
    /// (not a connection closed, a backend terminated or shutting down: SQLSTATE classes 08 and 57P).
    static func ranOnAnOpenConnection(_ error: PSQLError) -> Bool {
        error.code == .server && outcome(of: error) != .connectionLost
    }

    func one(_ request: PushRequest, on connection: PostgresConnection) async throws -> PushAck? {
        request.unplanned.isEmpty
            ? try await one(request, as: FactsPlanned.self, on: connection)
            : try await one(request, as: SomeFactsApart.self, on: connection)
    }

    private func one<Shape: PushShape>(
        _ request: PushRequest, as shape: Shape.Type, on connection: PostgresConnection
    )
        async throws -> PushAck?
    {
        let items = request.batch.items
        let statement = PushStatement<Shape>(
            app: request.app, account: request.account, device: request.batch.device, items: items,
            records: request.records, tokenIssuedAt: request.tokenIssuedAt,
            subjectNames: request.subjectNames,
            unplanned: request.unplanned, keptFactIndexes: request.keptFactIndexes)
        var applied = 0
        var revoked = false
        var merged: [String: AccountFlowRecord] = [:]
        // Every row is read (at most one per flow): the connection goes back to the pool when the
        // rows are done.
        for try await row in try await connection.execute(statement, logger: logger) {
            applied = row.applied
            revoked = revoked || row.revoked
            if let (flow, record) = row.record { merged[flow] = record }
        }
        try await Self.confirmCommitted(on: connection, logger: logger)
        if revoked { return nil }
        return PushAck(applied: applied, duplicates: items.count - applied, records: merged)
    }

    /// Pushes of distinct accounts in one statement; their answers in the same order.
    func many(_ requests: [PushRequest], on connection: PostgresConnection) async throws -> [PushAck?] {
        requests.allSatisfy(\.unplanned.isEmpty)
            ? try await many(requests, as: FactsPlanned.self, on: connection)
            : try await many(requests, as: SomeFactsApart.self, on: connection)
    }

    private func many<Shape: PushShape>(
        _ requests: [PushRequest], as shape: Shape.Type, on connection: PostgresConnection
    )
        async throws -> [PushAck?]
    {
        var applied = Array(repeating: 0, count: requests.count)
        var revoked = Array(repeating: false, count: requests.count)
        var merged = Array(repeating: [String: AccountFlowRecord](), count: requests.count)
        for try await row in try await connection.execute(
            PushBatchStatement<Shape>(requests: requests), logger: logger)
        {
            applied[row.push] = row.applied
            revoked[row.push] = revoked[row.push] || row.revoked
            if let (flow, record) = row.record { merged[row.push][flow] = record }
        }
        try await Self.confirmCommitted(on: connection, logger: logger)
        return requests.indices.map { index in
            revoked[index]
                ? nil
                : PushAck(
                    applied: applied[index], duplicates: requests[index].batch.items.count - applied[index],
                    records: merged[index])
        }
    }
}

/// Several pushes, of distinct accounts, as one statement: ``PushStatement`` with every row tagged
/// by its push's position (`p`). Each push's sign-out check, duplicates and merge are its own; the
/// statement answers, for each push, how many rows were new, whether its token was revoked, and its
/// account's records after the join. Rows are written in key order, as every batch writes them.
struct PushBatchStatement<Shape: PushShape>: PostgresPreparedStatement {
    static var sql: String { Shape.keepsFactsApart ? PushSQL.batchKeepingFactsApart : PushSQL.batch }
    let requests: [PushRequest]
}

extension PushSQL {
    /// ``PushBatchStatement``'s text, without and with the CTE that keeps facts apart.
    static let batch = batchStatement(factsApart: "")
    static let batchKeepingFactsApart = batchStatement(
        factsApart: """
            ,
            unplanned AS (
                INSERT INTO unplanned_facts AS held (app, account, device, flow, step, kind, first_at,
                    last_at, facts)
                SELECT l.app, l.account, l.device, u.flow, u.step, u.kind, min(u.time), max(u.time), count(*)
                FROM UNNEST($30::bigint[], $31::bigint[], $32::float8[], $33::text[], $34::text[],
                    $35::text[])
                    AS u(p, seq, time, kind, flow, step)
                JOIN live l ON l.p = u.p
                WHERE (l.app, l.account, l.device, u.seq) IN (SELECT app, account, device, seq FROM fresh)
                GROUP BY l.app, l.account, l.device, u.flow, u.step, u.kind
                \(PushSQL.unplannedUpsert)
                RETURNING 1
            ),
            held AS (
                INSERT INTO held_facts (app, account, device, seq, idx, kind, flow, step, step_index,
                    ending, body, generation)
                SELECT l.app, l.account, l.device, h.seq, h.idx, h.kind, h.flow, NULLIF(h.step, ''),
                    h.step_index,
                    NULLIF(h.ending, ''), h.body::jsonb, h.generation
                FROM UNNEST($30::bigint[], $31::bigint[], $36::bigint[], $37::text[], $38::text[],
                    $39::text[], $40::bigint[],
                    $41::text[], $42::text[], $43::bigint[])
                    AS h(p, seq, idx, kind, flow, step, step_index, ending, body, generation)
                JOIN live l ON l.p = h.p
                WHERE (l.app, l.account, l.device, h.seq) IN (SELECT app, account, device, seq FROM fresh)
                ON CONFLICT DO NOTHING
                RETURNING 1
            )
            """)

    static func batchStatement(factsApart: String) -> String {
        """
        WITH input AS (
            SELECT * FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::text[])
                AS i(p, app, account, device, issued_at, names)
        ),
        revoked AS (
            SELECT i.p FROM input i WHERE NOT push_fence(i.app, i.account, i.names, i.issued_at)
        ),
        live AS (SELECT * FROM input WHERE p NOT IN (SELECT p FROM revoked)),
        fresh AS (
            INSERT INTO pushes (app, account, device, seq, time, event, catalog_version, app_version)
            SELECT l.app, l.account, l.device, b.seq, b.time, b.event, b.catalog_version,
                NULLIF(b.app_version, '')
            FROM UNNEST($7::bigint[], $8::bigint[], $9::float8[], $10::text[], $11::bigint[], $12::text[])
                AS b(p, seq, time, event, catalog_version, app_version)
            JOIN live l ON l.p = b.p
            ORDER BY l.app, l.account, l.device, b.seq
            ON CONFLICT DO NOTHING
            RETURNING app, account, device, seq
        ),
        stored AS (
            INSERT INTO facts (app, account, device, seq, idx, kind, flow, step, step_index, ending, body)
            SELECT l.app, l.account, l.device, f.seq, f.idx, f.kind, f.flow, NULLIF(f.step, ''), f.step_index,
                NULLIF(f.ending, ''), f.body::jsonb
            FROM UNNEST($13::bigint[], $14::bigint[], $15::bigint[], $16::text[], $17::text[], $18::text[],
                $19::bigint[],
                $20::text[], $21::text[])
                AS f(p, seq, idx, kind, flow, step, step_index, ending, body)
            JOIN live l ON l.p = f.p
            WHERE (l.app, l.account, l.device, f.seq) IN (SELECT app, account, device, seq FROM fresh)
            RETURNING 1
        ),
        merged AS (
            INSERT INTO account_flows AS held (app, account, flow, order_key, epoch, standing, version,
                at_ms, device)
            SELECT l.app, l.account, r.flow, r.order_key, r.epoch, r.standing, NULLIF(r.version, ''),
                r.at_ms, r.device
            FROM UNNEST($22::bigint[], $23::text[], $24::text[], $25::bigint[], $26::text[], $27::text[],
                $28::bigint[],
                $29::text[])
                AS r(p, flow, order_key, epoch, standing, version, at_ms, device)
            JOIN live l ON l.p = r.p
            ORDER BY l.app, l.account, r.flow
            \(PushSQL.mergeUpsert)
            RETURNING app, account, flow, epoch, standing, version, at_ms, device
        )\(factsApart),
        counts AS (SELECT app, account, device, count(*) AS applied FROM fresh GROUP BY app, account, device)
        SELECT i.p, coalesce(c.applied, 0), i.p IN (SELECT p FROM revoked),
            m.flow, m.epoch, m.standing, m.version, m.at_ms, m.device
        FROM input i
        LEFT JOIN counts c ON c.app = i.app AND c.account = i.account AND c.device = i.device
        LEFT JOIN merged m ON m.app = i.app AND m.account = i.account
        """
    }
}

extension PushBatchStatement {
    struct Row {
        var push: Int
        var applied: Int
        var revoked: Bool
        var record: (String, AccountFlowRecord)?
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 43)
        let positions = requests.indices.map(Int64.init)
        bindings.append(positions)
        bindings.append(requests.map(\.app))
        bindings.append(requests.map(\.account))
        bindings.append(requests.map(\.batch.device))
        // Without an issue time nothing is revoked: +infinity is after every cut-off.
        bindings.append(requests.map { $0.tokenIssuedAt ?? .infinity })
        bindings.append(requests.map { $0.subjectNames.joined(separator: ",") })

        var itemPositions: [Int64] = []
        var items: [PushItem] = []
        for (position, request) in zip(positions, requests) {
            itemPositions += Array(repeating: position, count: request.batch.items.count)
            items += request.batch.items
        }
        bindings.append(itemPositions)
        bindings.appendItemColumns(items)

        var factPositions: [Int64] = []
        var facts = FactRows([])
        for (position, request) in zip(positions, requests) {
            let rows = FactRows(request.batch.items, kept: request.keptFactIndexes)
            factPositions += Array(repeating: position, count: rows.seqs.count)
            facts.append(rows)
        }
        bindings.append(factPositions)
        bindings.appendFactColumns(facts)

        var recordPositions: [Int64] = []
        var flows: [String] = []
        var records: [AccountFlowRecord] = []
        for (position, request) in zip(positions, requests) {
            let folded = request.records
            for (flow, record) in folded.sorted(by: { $0.key < $1.key }) {
                recordPositions.append(position)
                flows.append(flow)
                records.append(record)
            }
        }
        bindings.append(recordPositions)
        bindings.append(flows)
        bindings.appendRecordColumns(records)

        var unplannedPositions: [Int64] = []
        var unplanned: [UnplannedFact] = []
        for (position, request) in zip(positions, requests) {
            unplannedPositions += Array(repeating: position, count: request.unplanned.count)
            unplanned += request.unplanned
        }
        if Shape.keepsFactsApart {
            bindings.append(unplannedPositions)
            bindings.appendUnplannedColumns(unplanned)
        }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (push, count, revoked, flow, epoch, standing, version, at, device) = try row.decode(
            (Int64, Int64, Bool, String?, Int64?, String?, String?, Int64?, String?).self)
        return Row(
            push: Int(push), applied: Int(count), revoked: revoked,
            record: PushSQL.record(
                flow: flow, epoch: epoch, standing: standing, version: version, at: at, device: device))
    }
}

/// A push statement answered, and the query after it failed: its commit may or may not have
/// happened (``PushWriter/confirmCommitted(on:logger:)``), so the push is answered as one whose
/// connection was lost.
struct CommitUnconfirmed: Error, CustomStringConvertible {
    var cause: any Error
    var description: String { "the commit of a push was not confirmed: \(String(reflecting: cause))" }
}
