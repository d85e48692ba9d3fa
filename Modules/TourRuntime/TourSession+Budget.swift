import AccountSync
import Persistence
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The display budget across an account's devices (Docs/DisplayBudget.md): the device tells the
/// account server what its products counted for the account, and learns what the account's other
/// devices counted. The counts are state, not an outbox: each exchange tells the last two days
/// whole, so a lost one is made good by the next.
extension TourSession {
    /// Exchanges the account's budget counts with the server; nothing without a server, a budget
    /// file, or an account this database syncs.
    public func exchangeBudget() async throws(SyncError) {
        guard let transport, let budget else { return }
        let exchange: BudgetExchange
        let now: Date
        do {
            try catchUpBudget()
            let session = try Self.prepared(database.session(key, scopes: product.scopes), product)
            guard session.account != nil else { return }
            now = Self.time(time, session)
            let since = BudgetDay(number: BudgetDay(now).number - 1)
            exchange = BudgetExchange(
                device: budget.device, since: since,
                counts: try budget.file.dailyCounts(
                    device: budget.device, account: budgetAccount, since: since))
        } catch {
            throw .localStorage("\(error)")
        }
        let answer = try await transport.budget(app: key.app, account: key.user, exchange)
        do {
            try budget.file.learn(answer.counts(believableAt: now), account: budgetAccount)
        } catch {
            throw .localStorage("\(error)")
        }
        budgetToTell = false
        lastBudgetExchange = now
    }

    /// In a long session (an app kept open for hours) the other devices' counts grow stale: before
    /// an event that may start a flow (none is showing), the counts are exchanged again when the
    /// last exchange is older than ``budgetExchangeInterval`` in the session's time (or the clock
    /// went back). A failed exchange changes nothing: the event goes on with the counts held.
    func exchangeBudgetIfStale(advancingClockBy seconds: Double) async {
        guard transport != nil, budget != nil else { return }
        guard let session = try? Self.prepared(database.session(key, scopes: product.scopes), product),
            session.account != nil, session.tour.presentingFlow == nil
        else { return }
        var now = Self.time(time, session)
        if case .virtual = time { now = now.addingTimeInterval(seconds) }
        if let last = lastBudgetExchange, now >= last, now.timeIntervalSince(last) < budgetExchangeInterval {
            return
        }
        // Why ignored: like a failed pull, the device goes on with the counts it holds.
        try? await exchangeBudget()
    }

    /// The account as the budget file names it (the same in every product of the family).
    nonisolated var budgetAccount: String { Self.accountSubject(key.user) }

    /// A user's account as experiments and the display budget name it, apart from installs
    /// (`install:ID`): the same in every product of the family.
    static func accountSubject(_ user: String) -> String { "account:" + user }
}
