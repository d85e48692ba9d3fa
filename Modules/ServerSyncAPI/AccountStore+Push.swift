import AccountSync
import Logging
import PostgresNIO
import ServerPublishing
import ServerTokens
import TourCodec
import TourCore

extension AccountStore {
    /// Stores a batch atomically: each journal row once (a row the server already has is a
    /// duplicate and adds nothing), its facts, and the join of each flow's records with the
    /// account's. Returns the account's records of the flows the batch touched.
    ///
    /// The whole push is one prepared statement (``PushStatement``): one round trip and one
    /// commit, parsed and planned once per connection: sent as text each time, parsing, analysis
    /// and planning would be a large part of PostgreSQL's work per push, and the statement count is
    /// what the ingest rate follows (Docs/Performance.md, section 5).
    ///
    /// With `tokenIssuedAt`, the statement also checks the account's sign-out cut-off, kept under
    /// one of `subjectNames` (the account's pseudonyms, ``TokenSigner/subjectPseudonyms(app:subject:)``):
    /// a token issued before it stores nothing, and the answer is nil.
    ///
    /// A store made with `batchingPushes` writes pushes that arrive together in one transaction
    /// (``PushBatcher``); each is still answered only once it is committed, by its deadline from
    /// `arrived` (when its request came).
    public func push(
        app: String, account: String, _ batch: PushBatch, tokenIssuedAt: Double? = nil,
        subjectNames: [String] = [],
        arrived: ContinuousClock.Instant = .now
    ) async throws -> PushAck? {
        // The app's tracking plan is a read, so on the server (a store batching pushes) it counts
        // against the push's own wait: a push is answered within its deadline from when it
        // arrived, however long the plan took (PostgreSQL down, a lock on `catalogs`). A store
        // writing each push alone (tools, the bench's floor, tests) has no bound on its write, so
        // none on its read either.
        let plans = plans
        let unsplit = PushRequest(
            app: app, account: account, batch: batch, tokenIssuedAt: tokenIssuedAt, subjectNames: subjectNames
        )
        guard let batcher else {
            return try await PushWriter(client: client, logger: logger).one(
                try await plans.split(unsplit, within: .seconds(600)))
        }
        // Nearly always the plan is held and fresh: no read, so nothing to bound.
        if let request = plans.splitWithoutReading(unsplit) {
            return try await batcher.push(request, arrived: arrived)
        }
        let request = try await plans.split(unsplit, within: batcher.maximumWait)
        return try await batcher.push(request, arrived: arrived)
    }
}

/// Whether a push statement also keeps facts apart (``TrackingPlans``): two shapes of one
/// statement, so a push with every fact in the plan runs the statement it always ran, and a
/// database not yet migrated to `unplanned_facts` takes such pushes too.
protocol PushShape: Sendable {
    static var keepsFactsApart: Bool { get }
}

/// Every fact of the pushes is in the app's plan (or the app has none).
enum FactsPlanned: PushShape { static let keepsFactsApart = false }
/// Some facts go to `unplanned_facts`.
enum SomeFactsApart: PushShape { static let keepsFactsApart = true }

/// A push as one statement. Its data-modifying CTEs are one atomic unit: facts are kept only for
/// rows that were new, and a revoked token stores nothing. It answers one row per merged record
/// (or one row without a record): how many rows were new, whether the token was revoked, and the
/// record.
///
/// The merge is the join in SQL: a record replaces the stored one only when its order key is
/// greater. Every column is chosen by that comparison instead of a `WHERE` on the update, so the
/// upsert returns each flow's row as it stands after the join, even when another push moved it
/// after this statement's snapshot; and it holds the row's lock, so concurrent pushes of one
/// account serialise per flow.
struct PushStatement<Shape: PushShape>: PostgresPreparedStatement {
    static var sql: String { Shape.keepsFactsApart ? PushSQL.pushKeepingFactsApart : PushSQL.push }

    struct Row {
        var applied: Int
        var revoked: Bool
        var record: (String, AccountFlowRecord)?
    }

    let app: String
    let account: String
    let device: String
    let items: [PushItem]
    let records: [String: AccountFlowRecord]
    let tokenIssuedAt: Double?
    /// The subject's pseudonyms its cut-offs are kept under
    /// (``TokenSigner/subjectPseudonyms(app:subject:)``).
    var subjectNames: [String] = []
    var unplanned: [UnplannedFact] = []
    /// Each row's facts' positions in the row as pushed, when some were set apart.
    var keptFactIndexes: [Int64: [Int64]] = [:]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 38)
        bindings.append(app)
        bindings.append(account)
        bindings.append(device)
        bindings.append(tokenIssuedAt)
        bindings.append(subjectNames.joined(separator: ","))
        bindings.appendItemColumns(items)
        let facts = FactRows(items, kept: keptFactIndexes)
        bindings.appendFactColumns(facts)
        let sorted = records.sorted { $0.key < $1.key }
        let flows = sorted.map(\.key)
        let values = sorted.map(\.value)
        bindings.append(flows)
        bindings.appendRecordColumns(values)
        if Shape.keepsFactsApart { bindings.appendUnplannedColumns(unplanned) }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (count, revoked, flow, epoch, standing, version, at, device) = try row.decode(
            (Int64, Bool, String?, Int64?, String?, String?, Int64?, String?).self)
        return Row(
            applied: Int(count), revoked: revoked,
            record: PushSQL.record(
                flow: flow, epoch: epoch, standing: standing, version: version, at: at, device: device))
    }
}

/// What the push statements share.
enum PushSQL {
    /// ``PushStatement``'s text, without and with the CTE that keeps facts apart.
    static let push = pushStatement(factsApart: "")
    static let pushKeepingFactsApart = pushStatement(
        factsApart: """
            ,
            unplanned AS (
                INSERT INTO unplanned_facts AS held (app, account, device, flow, step, kind, first_at,
                    last_at, facts)
                SELECT $1, $2, $3, u.flow, u.step, u.kind, min(u.time), max(u.time), count(*)
                FROM UNNEST($26::bigint[], $27::float8[], $28::text[], $29::text[], $30::text[]) AS u(seq,
                    time, kind, flow, step)
                WHERE u.seq IN (SELECT seq FROM fresh)
                GROUP BY u.flow, u.step, u.kind
                \(PushSQL.unplannedUpsert)
                RETURNING 1
            ),
            held AS (
                INSERT INTO held_facts (app, account, device, seq, idx, kind, flow, step, step_index,
                    ending, body, generation)
                SELECT $1, $2, $3, h.seq, h.idx, h.kind, h.flow, NULLIF(h.step, ''), h.step_index,
                    NULLIF(h.ending, ''),
                    h.body::jsonb, h.generation
                FROM UNNEST($26::bigint[], $31::bigint[], $32::text[], $33::text[], $34::text[],
                    $35::bigint[], $36::text[],
                    $37::text[], $38::bigint[])
                    AS h(seq, idx, kind, flow, step, step_index, ending, body, generation)
                WHERE h.seq IN (SELECT seq FROM fresh)
                ON CONFLICT DO NOTHING
                RETURNING 1
            )
            """)

    static func pushStatement(factsApart: String) -> String {
        """
        WITH revoked AS (
            SELECT 1 WHERE NOT push_fence($1, $2, $5::text, $4::float8)
        ),
        fresh AS (
            INSERT INTO pushes (app, account, device, seq, time, event, catalog_version, app_version)
            SELECT $1, $2, $3, seq, time, event, catalog_version, NULLIF(app_version, '')
            FROM UNNEST($6::bigint[], $7::float8[], $8::text[], $9::bigint[], $10::text[])
                AS batch(seq, time, event, catalog_version, app_version)
            WHERE NOT EXISTS (SELECT 1 FROM revoked)
            ON CONFLICT DO NOTHING
            RETURNING seq
        ),
        stored AS (
            INSERT INTO facts (app, account, device, seq, idx, kind, flow, step, step_index, ending, body)
            SELECT $1, $2, $3, f.seq, idx, kind, flow, NULLIF(step, ''), step_index, NULLIF(ending, ''),
                body::jsonb
            FROM UNNEST($11::bigint[], $12::bigint[], $13::text[], $14::text[], $15::text[], $16::bigint[],
                $17::text[], $18::text[])
                AS f(seq, idx, kind, flow, step, step_index, ending, body)
            WHERE f.seq IN (SELECT seq FROM fresh)
            RETURNING 1
        ),
        merged AS (
            INSERT INTO account_flows AS held (app, account, flow, order_key, epoch, standing, version,
                at_ms, device)
            SELECT $1, $2, flow, order_key, epoch, standing, NULLIF(version, ''), at_ms, device
            FROM UNNEST($19::text[], $20::text[], $21::bigint[], $22::text[], $23::text[], $24::bigint[],
                $25::text[])
                AS r(flow, order_key, epoch, standing, version, at_ms, device)
            WHERE NOT EXISTS (SELECT 1 FROM revoked)
            \(PushSQL.mergeUpsert)
            RETURNING flow, epoch, standing, version, at_ms, device
        )\(factsApart)
        SELECT (SELECT count(*) FROM fresh), EXISTS (SELECT 1 FROM revoked),
            merged.flow, merged.epoch, merged.standing, merged.version, merged.at_ms, merged.device
        FROM (SELECT 1) AS answer LEFT JOIN merged ON true
        """
    }

    /// The join as an upsert's conflict clause, shared with ``PushBatchStatement``: every column
    /// is the excluded row's when its order key is greater, else the held row's.
    static let mergeUpsert = """
        ON CONFLICT (app, account, flow) DO UPDATE SET
                order_key = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.order_key
                    ELSE held.order_key END,
                epoch = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.epoch ELSE held.epoch END,
                standing = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.standing
                    ELSE held.standing END,
                version = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.version
                    ELSE held.version END,
                at_ms = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.at_ms ELSE held.at_ms END,
                device = CASE WHEN EXCLUDED.order_key > held.order_key THEN EXCLUDED.device ELSE held.device
                    END,
                updated_at = CASE WHEN EXCLUDED.order_key > held.order_key THEN now() ELSE held.updated_at END
        """

    /// Facts set apart, counted into their row, shared with ``PushBatchStatement``.
    static let unplannedUpsert = """
        ON CONFLICT (app, flow, step, kind, account, device) DO UPDATE SET
                first_at = least(held.first_at, EXCLUDED.first_at), last_at = greatest(held.last_at,
                    EXCLUDED.last_at),
                facts = held.facts + EXCLUDED.facts
        """

    /// A merged record as the statements return it (nothing when the row has none).
    static func record(
        flow: String?, epoch: Int64?, standing: String?, version: String?, at: Int64?, device: String?
    ) -> (String, AccountFlowRecord)? {
        guard let flow, let epoch, let standing = standing.flatMap(AccountFlowRecord.Standing.init), let at,
            let device
        else { return nil }
        return (
            flow,
            AccountFlowRecord(epoch: Int(epoch), standing: standing, version: version, at: at, device: device)
        )
    }
}

extension PostgresBindings {
    /// Journal rows as the push statements' columns: seq, time, event, catalog version, app version
    /// ("" for none).
    mutating func appendItemColumns(_ items: [PushItem]) {
        append(items.map(\.seq))
        append(items.map(\.time))
        append(items.map(\.event))
        append(items.map { Int64($0.catalogVersion) })
        append(items.map { $0.appVersion ?? "" })
    }

    /// Facts as the push statements' columns: seq, index, kind, flow, step, step index, ending, body.
    mutating func appendFactColumns(_ facts: FactRows) {
        append(facts.seqs)
        append(facts.indexes)
        append(facts.kinds)
        append(facts.flows)
        append(facts.steps)
        append(facts.stepIndexes)
        append(facts.endings)
        append(facts.bodies)
    }

    /// Facts set apart as the push statements' columns: seq, time, kind, flow, step (as listed);
    /// then as held: index, kind, flow, step, step index, ending, body, plan generation.
    mutating func appendUnplannedColumns(_ facts: [UnplannedFact]) {
        append(facts.map(\.seq))
        append(facts.map(\.time))
        append(facts.map(\.kind))
        append(facts.map(\.flow))
        append(facts.map(\.step))
        append(facts.map(\.held.index))
        append(facts.map(\.held.kind))
        append(facts.map(\.held.flow))
        append(facts.map(\.held.step))
        append(facts.map(\.held.stepIndex))
        append(facts.map(\.held.ending))
        append(facts.map(\.held.body))
        append(facts.map(\.held.generation))
    }

    /// Records as the push statements' columns after their flow ids: order key, epoch, standing,
    /// version ("" for none), time, device.
    mutating func appendRecordColumns(_ records: [AccountFlowRecord]) {
        append(records.map(\.orderKey))
        append(records.map { Int64($0.epoch) })
        append(records.map(\.standing.rawValue))
        append(records.map { $0.version ?? "" })
        append(records.map(\.at))
        append(records.map(\.device))
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

    mutating func append(_ other: FactRows) {
        seqs += other.seqs
        indexes += other.indexes
        kinds += other.kinds
        flows += other.flows
        steps += other.steps
        stepIndexes += other.stepIndexes
        endings += other.endings
        bodies += other.bodies
    }

    /// The facts of `items`, each at its position in its row; `kept` gives the positions of a
    /// row some of whose facts were set apart (``TrackingPlans``), so that a fact admitted later
    /// takes its own place among them.
    init(_ items: [PushItem], kept: [Int64: [Int64]] = [:]) {
        for item in items {
            let positions = kept[item.seq]
            for (index, fact) in item.facts.enumerated() {
                let object = fact.objectValue ?? [:]
                seqs.append(item.seq)
                indexes.append(
                    positions.flatMap { $0.indices.contains(index) ? $0[index] : nil } ?? Int64(index))
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

extension AccountStore {
    /// Whether a push arriving now would be taken into the queue (false: it would be shed at once).
    package func admitsPush() -> Bool { batcher?.admits() ?? true }
}
