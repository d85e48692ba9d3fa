import AccountSync
import Logging
import Metrics
import PostgresNIO
import Synchronization
import TourCodec
import TourCore

/// One device's push as the store receives it.
struct PushRequest: Sendable {
    var app: String
    var account: String
    var batch: PushBatch
    var tokenIssuedAt: Double?

    /// The records of the batch folded per flow (the join is associative), one per flow.
    var records: [String: AccountFlowRecord] {
        var records: [String: AccountFlowRecord] = [:]
        for item in batch.items {
            for (flow, record) in item.records { records[flow] = records[flow].map { $0.merged(with: record) } ?? record }
        }
        return records
    }
}

/// Group commit: pushes that arrive while earlier ones are being written are written together, in
/// one statement and one transaction (``PushBatchStatement``), instead of one transaction each.
///
/// Why: what PostgreSQL spends per push is mostly per statement and per commit (setting up the
/// executor, the snapshot, the WAL flush), not per row; batching pays those once per batch
/// (Docs/Performance.md, section 5, has the measurements).
///
/// Nothing is weaker for it. A push is answered only after the transaction holding it commits, so a
/// crash loses only unanswered pushes, which their devices send again. A push's rows are still
/// stored all or nothing; a batch that PostgreSQL refuses as a whole is written again one push at a
/// time, so one push can fail only itself. Pushes of one account are never in two batches at
/// once, and never twice in one: the batches in flight touch disjoint rows, so they cannot
/// deadlock, and each account's pushes keep their order.
///
/// Batching adapts to the load: at most `writers` batches are in flight; a push that finds a
/// writer free is written at once (a batch of one, the single-push statement), and only when every
/// writer is busy do pushes queue and go together in the next batch (at most `maximumBatch`).
final class PushBatcher: Sendable {
    private struct AccountKey: Hashable {
        var app: String
        var account: String
    }

    private struct State {
        var queue: [PendingPush] = []
        /// Whether the task answering pushes that waited too long is running.
        var sweeping = false
        /// Accounts with a push in a batch being written.
        var writing: Set<AccountKey> = []
        var writers = 0
    }

    private let state = Mutex(State())
    private let writer: PushWriter
    let writers: Int
    let maximumBatch: Int
    /// Pushes that may wait for a writer; past it a push is shed at once (``Overloaded``).
    let maximumQueued: Int
    /// How long a push may wait for a writer before it is answered 503, uncommitted.
    let maximumWait: Duration

    init(
        writer: PushWriter, writers: Int, maximumBatch: Int = 64, maximumQueued: Int? = nil,
        maximumWait: Duration = .milliseconds(1500)
    ) {
        self.writer = writer
        self.writers = max(1, writers)
        self.maximumBatch = max(1, maximumBatch)
        self.maximumQueued = max(1, maximumQueued ?? Self.defaultQueue(writers: writers))
        self.maximumWait = maximumWait
    }

    /// 2,048 per writer: about what the writers drain within ``maximumWait`` at their best, so a
    /// full queue means a push would only wait out its deadline; a shorter queue sheds pushes the
    /// writers would have taken in time (Docs/Performance.md, section 5).
    static func defaultQueue(writers: Int) -> Int { max(1, writers) * 2_048 }

    /// Stores `request` and answers once it is committed; throws ``Overloaded`` at once when the
    /// queue is full, and ``DatabaseUnavailable`` when no writer took it within ``maximumWait``
    /// (or the caller was cancelled first). A push a writer has taken is answered with what its
    /// transaction did, however long PostgreSQL takes (bounded by the writers' `statement_timeout`):
    /// so an error answer always means nothing was committed.
    func push(_ request: PushRequest) async throws -> PushAck? {
        let pending = PendingPush(request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                pending.wait(continuation)
                let (accepted, startsWriter, queued) = state.withLock { state -> (Bool, Bool, Int) in
                    guard state.queue.count < maximumQueued else { return (false, false, state.queue.count) }
                    state.queue.append(pending)
                    guard state.writers < writers else { return (true, false, state.queue.count) }
                    state.writers += 1
                    return (true, true, state.queue.count)
                }
                ServerMetrics.queued.record(queued)
                guard accepted else {
                    ServerMetrics.shedFull.increment()
                    _ = pending.abandon(Overloaded())
                    return
                }
                if startsWriter { Task { await self.write() } }
                startSweeperIfIdle()
            }
        } onCancel: {
            self.abandon(pending, CancellationError())
        }
    }

    /// One task per batcher, while pushes wait, answers those that waited ``maximumWait`` (a timer
    /// task per push cost every push a task and a timer at thousands a second).
    private func startSweeperIfIdle() {
        let starts = state.withLock { state in
            guard !state.sweeping else { return false }
            state.sweeping = true
            return true
        }
        guard starts else { return }
        Task {
            while true {
                try? await Task.sleep(for: .milliseconds(100))
                let now = ContinuousClock.now
                let (expired, empty) = state.withLock { state -> ([PendingPush], Bool) in
                    let expired = state.queue.filter { now - $0.enqueued >= maximumWait }
                    if state.queue.count == expired.count { state.sweeping = false }
                    return (expired, state.queue.count == expired.count)
                }
                for pending in expired where abandon(pending, DatabaseUnavailable()) { ServerMetrics.shedWaited.increment() }
                if empty { return }
            }
        }
    }

    /// Answers a push no writer has started with `error`, and takes it out of the queue.
    @discardableResult
    private func abandon(_ pending: PendingPush, _ error: any Error) -> Bool {
        guard pending.abandon(error) else { return false }
        let queued = state.withLock { state in
            state.queue.removeAll { $0 === pending }
            return state.queue.count
        }
        ServerMetrics.queued.record(queued)
        return true
    }

    /// One writer: takes the next batch (oldest first, one push per account, none of an account
    /// another writer is writing) until none is left.
    private func write() async {
        while true {
            let batch: [PendingPush]? = state.withLock { state in
                var taken: [PendingPush] = []
                var kept: [PendingPush] = []
                var accounts: Set<AccountKey> = []
                for pending in state.queue {
                    let account = AccountKey(app: pending.request.app, account: pending.request.account)
                    if taken.count < maximumBatch, !state.writing.contains(account), accounts.insert(account).inserted {
                        taken.append(pending)
                    } else {
                        kept.append(pending)
                    }
                }
                guard !taken.isEmpty else {
                    // What is left waits for an account being written; that account's writer takes it next.
                    state.writers -= 1
                    return nil
                }
                state.queue = kept
                state.writing.formUnion(accounts)
                return taken
            }
            guard let batch else { return }
            ServerMetrics.queued.record(state.withLock { $0.queue.count })
            await write(batch)
            state.withLock { state in
                for pending in batch { state.writing.remove(AccountKey(app: pending.request.app, account: pending.request.account)) }
            }
        }
    }

    /// Writes `batch` on one connection. Each push is claimed only once the connection is held, just
    /// before its statement is sent: one whose deadline passed meanwhile (PostgreSQL slow to hand
    /// out a connection) was answered 503 and is not written.
    private func write(_ batch: [PendingPush]) async {
        do {
            try await writer.client.withConnection { connection in
                let claimed = batch.filter { $0.claim() }
                guard !claimed.isEmpty else { return }
                // A connection whose statement may have failed while being prepared is closed
                // (``PushWriter/mayHaveFailedPreparing(_:)``); the pool opens a fresh one.
                var retire = false
                defer { if retire { _ = connection.close() as EventLoopFuture<Void> } }
                let now = ContinuousClock.now
                for pending in claimed { ServerMetrics.queueWait.recordNanoseconds(Int64((now - pending.enqueued).nanoseconds)) }
                ServerMetrics.batchSize.record(claimed.count)
                ServerMetrics.writersBusy.increment(by: 1)
                defer { ServerMetrics.writersBusy.decrement(by: 1) }
                if claimed.count == 1 {
                    let pending = claimed[0]
                    do { pending.answer(.success(try await writer.one(pending.request, on: connection))) } catch {
                        retire = retire || PushWriter.mayHaveFailedPreparing(error)
                        pending.answer(.failure(error))
                    }
                    return
                }
                do {
                    let acks = try await writer.many(claimed.map(\.request), on: connection)
                    for (pending, ack) in zip(claimed, acks) { pending.answer(.success(ack)) }
                } catch let error as PSQLError where error.code == .server {
                    retire = PushWriter.mayHaveFailedPreparing(error)
                    // PostgreSQL refused the statement (not the connection): find the push it refused by
                    // writing each on its own, so the others are stored and only that one fails.
                    for pending in claimed {
                        do { pending.answer(.success(try await writer.one(pending.request, on: connection))) } catch {
                            retire = retire || PushWriter.mayHaveFailedPreparing(error)
                            pending.answer(.failure(error))
                        }
                    }
                } catch {
                    for pending in claimed { pending.answer(.failure(error)) }
                }
            }
        } catch {
            // No connection: nothing was sent; every push not answered yet fails.
            for pending in batch where pending.claim() { pending.answer(.failure(error)) }
        }
    }
}

/// The store refuses a push at once: its queue is full (`503` with `Retry-After`).
public struct Overloaded: Error {}

extension Duration {
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}

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

    func one(_ request: PushRequest) async throws -> PushAck? {
        try await client.withConnection { connection in try await one(request, on: connection) }
    }

    func one(_ request: PushRequest, on connection: PostgresConnection) async throws -> PushAck? {
        let items = request.batch.items
        let statement = PushStatement(
            app: request.app, account: request.account, device: request.batch.device, items: items,
            records: request.records, tokenIssuedAt: request.tokenIssuedAt)
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
        if revoked { return nil }
        return PushAck(applied: applied, duplicates: items.count - applied, records: merged)
    }

    /// Pushes of distinct accounts in one statement; their answers in the same order.
    func many(_ requests: [PushRequest], on connection: PostgresConnection) async throws -> [PushAck?] {
        var applied = Array(repeating: 0, count: requests.count)
        var revoked = Array(repeating: false, count: requests.count)
        var merged = Array(repeating: [String: AccountFlowRecord](), count: requests.count)
        for try await row in try await connection.execute(PushBatchStatement(requests: requests), logger: logger) {
            applied[row.push] = row.applied
            revoked[row.push] = revoked[row.push] || row.revoked
            if let (flow, record) = row.record { merged[row.push][flow] = record }
        }
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
struct PushBatchStatement: PostgresPreparedStatement {
    static let sql = """
        WITH input AS (
            SELECT * FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[], $5::float8[])
                AS i(p, app, account, device, issued_at)
        ),
        revoked AS (
            SELECT i.p FROM input i
            JOIN token_cutoffs c ON c.app = i.app AND c.account = i.account AND c.not_before > i.issued_at
        ),
        live AS (SELECT * FROM input WHERE p NOT IN (SELECT p FROM revoked)),
        fresh AS (
            INSERT INTO pushes (app, account, device, seq, time, event, catalog_version, app_version)
            SELECT l.app, l.account, l.device, b.seq, b.time, b.event, b.catalog_version, NULLIF(b.app_version, '')
            FROM UNNEST($6::bigint[], $7::bigint[], $8::float8[], $9::text[], $10::bigint[], $11::text[])
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
            FROM UNNEST($12::bigint[], $13::bigint[], $14::bigint[], $15::text[], $16::text[], $17::text[], $18::bigint[],
                $19::text[], $20::text[])
                AS f(p, seq, idx, kind, flow, step, step_index, ending, body)
            JOIN live l ON l.p = f.p
            WHERE (l.app, l.account, l.device, f.seq) IN (SELECT app, account, device, seq FROM fresh)
            RETURNING 1
        ),
        merged AS (
            INSERT INTO account_flows AS held (app, account, flow, order_key, epoch, standing, version, at_ms, device)
            SELECT l.app, l.account, r.flow, r.order_key, r.epoch, r.standing, NULLIF(r.version, ''), r.at_ms, r.device
            FROM UNNEST($21::bigint[], $22::text[], $23::text[], $24::bigint[], $25::text[], $26::text[], $27::bigint[],
                $28::text[])
                AS r(p, flow, order_key, epoch, standing, version, at_ms, device)
            JOIN live l ON l.p = r.p
            ORDER BY l.app, l.account, r.flow
            \(PushStatement.mergeUpsert)
            RETURNING app, account, flow, epoch, standing, version, at_ms, device
        ),
        counts AS (SELECT app, account, device, count(*) AS applied FROM fresh GROUP BY app, account, device)
        SELECT i.p, coalesce(c.applied, 0), i.p IN (SELECT p FROM revoked),
            m.flow, m.epoch, m.standing, m.version, m.at_ms, m.device
        FROM input i
        LEFT JOIN counts c ON c.app = i.app AND c.account = i.account AND c.device = i.device
        LEFT JOIN merged m ON m.app = i.app AND m.account = i.account
        """

    struct Row {
        var push: Int
        var applied: Int
        var revoked: Bool
        var record: (String, AccountFlowRecord)?
    }

    let requests: [PushRequest]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 28)
        let positions = requests.indices.map(Int64.init)
        bindings.append(positions)
        bindings.append(requests.map(\.app))
        bindings.append(requests.map(\.account))
        bindings.append(requests.map(\.batch.device))
        // Without an issue time nothing is revoked: +infinity is after every cut-off.
        bindings.append(requests.map { $0.tokenIssuedAt ?? .infinity })

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
            let rows = FactRows(request.batch.items)
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
            for flow in folded.keys.sorted() {
                recordPositions.append(position)
                flows.append(flow)
                records.append(folded[flow]!)
            }
        }
        bindings.append(recordPositions)
        bindings.append(flows)
        bindings.appendRecordColumns(records)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (push, count, revoked, flow, epoch, standing, version, at, device) = try row.decode(
            (Int64, Int64, Bool, String?, Int64?, String?, String?, Int64?, String?).self)
        return Row(
            push: Int(push), applied: Int(count), revoked: revoked,
            record: PushStatement.record(flow: flow, epoch: epoch, standing: standing, version: version, at: at, device: device))
    }
}
