import AccountSync
import Persistence
import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a push did.
public struct PushSummary: Equatable, Sendable {
    /// Journal rows the server stored now, and rows it already had (a retry after a lost answer).
    public var applied = 0
    public var duplicates = 0
    /// Rows still waiting (a push stops at the first failure; the rest wait for the next one).
    public var waiting = 0
    /// Rows the server refused for what they carry, set aside by this push (the rest went on).
    public var setAside: [SetAsideRow] = []
    public var failure: SyncError?
    /// Transitions committed because the server's answer said another device finished a flow.
    public var learned: [Transition] = []
}

/// Account sync, offline-first: every event is committed locally first, and its journal row waits
/// in the outbox (same transaction) until the account server acknowledges it. Pulls learn what the
/// account's other devices did; a flow finished elsewhere ends here too.
extension TourSession {
    /// Flows whose record is the account's.
    var accountFlows: [FlowDefinition] { product.catalog.flows.filter { $0.scope == .user } }

    /// Starts syncing this user's account from this database (once), then reads the account's
    /// records and adopts them.
    ///
    /// - Returns: the transitions the adoption committed (a tour ended, a record written).
    @discardableResult
    public func pull() async throws(SyncError) -> [Transition] {
        guard let transport else { return [] }
        do { try enroll() } catch { throw .unreachable("the local database: \(error)") }
        let records: AccountRecords
        do {
            records = try await transport.pull(app: key.app, account: key.user)
        } catch {
            noteFailure(error)
            throw error
        }
        do {
            try database.notePull(key, at: Date())
            // The server answers: a push waiting out a transient failure's backoff may go now.
            // (The same token was just accepted, so even a refusal's wait has no reason left.)
            if try database.syncStatus(key)?.retryAt != nil { try database.clearBackoff(key) }
            return try learn(records.flows)
        } catch {
            let failure = SyncError.localStorage("\(error)")
            noteFailure(failure)
            throw failure
        }
    }

    /// Pushes the outbox, oldest first, in batches; each acknowledged batch leaves the outbox. Stops
    /// at the first failure (the rows stay, in order). With `attempts` > 1 a failed batch is tried
    /// again after 0.25 s, 0.5 s, 1 s, ... (the `sync` command); events push once, and not before
    /// the backoff of earlier failures has passed.
    ///
    /// A row the server refuses for what it carries (a rule this device did not know) never jams
    /// the rows after it: the refusal names it, or halving the batch finds it, and it is set aside
    /// (``OnboardingDatabase/setAside(_:row:status:reason:carry:at:)``) with the server's reason; its
    /// records the server would take ride with the next row.
    public func push(attempts: Int = 1) async -> PushSummary {
        var summary = PushSummary()
        guard let transport else { return summary }
        do { try enroll() } catch {
            summary.failure = .unreachable("the local database: \(error)")
            return summary
        }
        /// A failure of this device's own database: noted (status shows it) and the push stops.
        func local(_ error: any Error) -> PushSummary {
            let failure = SyncError.localStorage("\(error)")
            noteFailure(failure)
            summary.failure = failure
            // Why a fallback: the count is for display, and reading it may fail the same way.
            summary.waiting = (try? database.syncStatus(key)?.waiting) ?? summary.waiting
            return summary
        }
        // Halved after a refusal that names no row, until the row is alone; whole again after a success.
        var limit = SyncAPI.maxItemsPerPush
        while true {
            let batch: PushBatch
            let rows: [OutboxRow]
            do {
                guard let account = try database.session(key, scopes: product.scopes).account else { break }
                try database.carryWaitingRecords(key)
                rows = try database.outbox(key, limit: limit)
                guard !rows.isEmpty else { break }
                // With analytics off (consent), no fact leaves the device: the rows carry what
                // sync needs (their order, event and records) and nothing else. A row's facts go
                // only when analytics was allowed when it was written and is still allowed now (a
                // row from before 0.30, which did not record it: allowed now).
                let allowedNow = try DeviceStore.analyticsAllowed(database.deviceValues(app: key.app))
                let starting = StartContext(
                    locale: (product.catalog.locale ?? product.catalog.strings.source).rawValue,
                    device: deviceKind)
                batch = PushBatch(
                    device: account.device,
                    items: try rows.map { row in
                        var item = try Self.item(row, starting: starting)
                        if !(allowedNow && row.analyticsAllowed ?? true) { item.facts = [] }
                        return item
                    })
            } catch {
                return local(error)
            }
            var attempt = 0
            var answer: PushAck?
            while answer == nil {
                attempt += 1
                do {
                    answer = try await transport.push(app: key.app, account: key.user, batch)
                } catch .refusedContent(let status, let seq, let message) {
                    let named = seq.flatMap { seq in rows.firstIndex { $0.journalID == seq } }
                    guard named != nil || rows.count == 1 else {
                        limit = max(1, rows.count / 2)
                        break
                    }
                    let row = rows[named ?? 0]
                    do {
                        try database.setAside(
                            key, row: row, status: status, reason: message,
                            carry: Self.carriable(row, device: batch.device),
                            at: Date())
                    } catch { return local(error) }
                    summary.setAside +=
                        (try? database.setAsideRows(key).filter { $0.journalID == row.journalID }) ?? []
                    break
                } catch {
                    guard error.isTransient, attempt < attempts else {
                        noteFailure(error)
                        summary.failure = error
                        // Why a fallback: the count is for display; the rows are in the outbox either way.
                        summary.waiting = (try? database.syncStatus(key)?.waiting) ?? rows.count
                        return summary
                    }
                    // Why ignored: a cancelled sleep only shortens the wait before the next try.
                    try? await Task.sleep(nanoseconds: UInt64(250_000_000) << UInt64(min(attempt - 1, 4)))
                }
            }
            guard let answer else { continue }
            limit = SyncAPI.maxItemsPerPush
            do {
                // The server has the rows now; if marking them sent fails, they are pushed again
                // later and counted there as duplicates: nothing is lost or applied twice.
                try database.acknowledge(key, through: rows[rows.count - 1].journalID, at: Date())
                summary.applied += answer.applied
                summary.duplicates += answer.duplicates
                summary.learned += try learn(answer.records)
            } catch {
                return local(error)
            }
        }
        do { summary.waiting = try database.syncStatus(key)?.waiting ?? 0 } catch { return local(error) }
        return summary
    }

    /// Pulls once per session, before its first event or view (an app calls it at launch; the CLI
    /// at the start of every command), so what the account's other devices did shows at once.
    /// Unreachable, it changes nothing: the device goes on offline.
    public func pullOnce() async {
        guard transport != nil, !pulled else { return }
        pulled = true
        // Why ignored: a failed pull is noted by `pull` (status and `sync` show it) and the device
        // goes on offline; nothing waits on it.
        guard (try? await pull()) != nil else { return }
        // Why ignored: like a failed pull, a failed exchange leaves the device on its own counts
        // until the next one.
        try? await exchangeBudget()
    }

    /// Pushes then pulls now, ignoring the backoff (the `sync` command).
    public func sync(attempts: Int = 4) async -> (push: PushSummary, pull: Result<[Transition], SyncError>) {
        let pushed = await push(attempts: attempts)
        do {
            let learned = try await pull()
            // Why ignored: see ``pullOnce()``; the command's answer is about the flows.
            try? await exchangeBudget()
            return (pushed, .success(learned))
        } catch { return (pushed, .failure(error)) }
    }

    /// Where syncing stands for this user; nil when the account does not sync from this database.
    public func syncStatus() throws -> SyncStatus? { try database.syncStatus(key) }

    /// The rows the server refused, kept aside (`status`, `sync --json`).
    public func setAsideRows() throws -> [SetAsideRow] { try database.setAsideRows(key) }

    /// Sends the set-aside rows again on the next push (`sync --retry-set-aside`, after a server
    /// fix); how many.
    public func retrySetAside() throws -> Int { try database.retrySetAside(key) }

    /// After an event: push when something waits and the backoff allows.
    func pushIfDue() async -> [Transition] {
        let status: SyncStatus?
        do { status = try database.syncStatus(key) } catch {
            noteFailure(.localStorage("\(error)"))
            return []
        }
        guard let status, status.waiting > 0 else { return [] }
        if let retryAt = status.retryAt, retryAt > Date() { return [] }
        return await push().learned
    }

    /// Adopts the account's records: each one that says more than this device knew is committed
    /// with an ``TourEvent/accountRecordLearned(_:_:)`` event (a journal row only when it changes
    /// the flow here).
    func learn(_ records: [String: AccountFlowRecord]) throws -> [Transition] {
        var transitions: [Transition] = []
        for flow in accountFlows {
            guard let record = records[flow.id.rawValue],
                let known = try database.session(key, scopes: product.scopes).account?[flow.id],
                known.merged(with: record) != known
            else { continue }
            transitions.append(
                try commit(.accountRecordLearned(flow.id, record), advancingClockBy: 0, device: [:]).0)
        }
        return transitions
    }

    /// Enrols this user's account on first use: what the state says now becomes the account
    /// records this device pushes with its history.
    func enroll() throws {
        let session = try database.session(key, scopes: product.scopes)
        let byInstall = transport?.syncsAsInstall ?? false
        // Enrolled already: only how it syncs (as the install, or as a signed-in account) may
        // change; a sign-in enrols the account afresh below, with the records the state says now.
        if session.account != nil {
            guard try database.syncsAccount(app: key.app, user: key.user) == byInstall else { return }
            if byInstall {
                try database.enroll(key, records: [:], now: Self.time(time, session), byInstall: true)
                return
            }
        }
        let now = Self.time(time, session)
        var records: [FlowID: AccountFlowRecord] = [:]
        for flow in accountFlows {
            let (standing, version) = session.tour[flow: flow.id].accountStanding
            guard standing != .notStarted else { continue }
            records[flow.id] = AccountFlowRecord(
                epoch: 0, standing: standing, version: version, at: Self.milliseconds(now), device: "")
        }
        try database.enroll(key, records: records, now: now, byInstall: byInstall)
    }

    /// Records a failure for status and the backoff. Why its own errors are dropped: it runs while
    /// reporting another failure (often the database's own), which the caller already surfaces;
    /// a failure it cannot record only means the next event retries without waiting.
    func noteFailure(_ error: SyncError) {
        let failures = (try? database.syncStatus(key)?.failures) ?? 0
        try? database.noteSyncFailure(
            key, error: error.description,
            retryAt: Date().addingTimeInterval(Self.backoff(after: failures, error)))
    }

    /// Seconds before the next automatic try: 1 s, 2 s, 4 s, ... up to 5 minutes, each drawn at
    /// random from its upper half so a fleet that failed together does not come back together; a
    /// refusal waits the longest (the token must change).
    static func backoff(after failures: Int, _ error: SyncError, random: Double = Double.random(in: 0.5...1))
        -> Double
    {
        let cap = error.isTransient ? min(300, Double(1 << min(failures, 9))) : 300
        return cap * random
    }

    /// The records of `row` itself (not those it carried) that the server takes: they ride with the
    /// next row when `row` is set aside.
    static func carriable(_ row: OutboxRow, device: String) -> [FlowID: AccountFlowRecord] {
        row.records.filter {
            SyncAPI.problem(withRecord: $0.value, of: $0.key.rawValue, device: device) == nil
        }
    }

    /// The wire form of an outbox row. A row whose facts do not read is not pushed without them:
    /// the push stops there and says which row. Each start carries `starting` (the session's locale
    /// and device kind) with the row's own accessibility settings, for the dashboard's splits.
    static func item(_ row: OutboxRow, starting: StartContext? = nil) throws -> PushItem {
        guard var facts = (try? TourValue(jsonText: row.factsJSON))?.listValue else {
            throw StorageError("journal row \(row.journalID)'s facts are not a JSON list; it was not pushed")
        }
        if var starting, facts.contains(where: { $0.objectValue?["fact"]?.stringValue == "flowStarted" }) {
            let context = row.contextJSON.flatMap { try? TourValue(jsonText: $0) }?.objectValue ?? [:]
            starting.accessibility = AccessibilitySettings(context).summary
            // The locale and device kind the start was recorded in; now's for a row from before 0.30.
            if let recorded = row.startContextJSON.flatMap({ try? TourValue(jsonText: $0) })?.objectValue {
                starting.locale = recorded["locale"]?.stringValue
                starting.device = recorded["device"]?.stringValue
            }
            for index in facts.indices where facts[index].objectValue?["fact"]?.stringValue == "flowStarted" {
                guard case .object(var members) = facts[index] else { continue }
                members["context"] = starting.tourValue
                facts[index] = .object(members)
            }
        }
        var records = row.carried
        for (flow, record) in row.records {
            records[flow] = records[flow].map { $0.merged(with: record) } ?? record
        }
        return PushItem(
            seq: row.journalID, time: row.time.timeIntervalSince1970, event: row.event,
            catalogVersion: row.catalogVersion, facts: facts,
            records: [String: AccountFlowRecord](
                uniqueKeysWithValues: records.map { ($0.key.rawValue, $0.value) }),
            appVersion: row.appVersion)
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// What an event changed in the account's records: for each user-scoped flow whose standing
    /// here now says more than the account knew, the record to push; `account` becomes the join.
    /// A reset here starts a new epoch; a learned record is joined in first.
    static func accountChanges(
        _ event: TourEvent, _ transition: Transition, catalog: TourCatalog, account: inout AccountKnowledge?,
        device: String, now: Date
    ) -> [FlowID: AccountFlowRecord] {
        guard var knowledge = account else { return [:] }
        var learned: FlowID?
        if case .accountRecordLearned(let flow, let record) = event {
            knowledge.records[flow] = knowledge[flow].merged(with: record)
            learned = flow
        }
        var changes: [FlowID: AccountFlowRecord] = [:]
        for flow in catalog.flows where flow.scope == .user {
            let known = knowledge[flow.id]
            let reset = learned != flow.id && transition.record.facts.contains(.flowReset(flow: flow.id))
            let (standing, version) = transition.state[flow: flow.id].accountStanding
            let local = AccountFlowRecord(
                epoch: known.epoch + (reset ? 1 : 0), standing: standing, version: version,
                at: milliseconds(now), device: device)
            guard !local.sameStanding(as: known), local > known else { continue }
            changes[flow.id] = local
            knowledge.records[flow.id] = local
        }
        account = knowledge
        return changes
    }
}
