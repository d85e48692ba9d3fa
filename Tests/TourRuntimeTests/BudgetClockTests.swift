import AccountSync
import Foundation
import Persistence
import Testing
import TourCore
import TourFixtures

/// A remote last start heard while this device's clock is behind the other device's: kept in the
/// budget file, not applied while it is still ahead of this clock, applied once the clock reaches
/// it (it was dropped for good before).
@Suite("Display budget and clocks")
struct BudgetClockTests {
    @Test func aRemoteStartAheadOfThisClockIsKeptAndAppliedWhenTheClockReachesIt() throws {
        let file = Scratch.folder.appendingPathComponent("budget-\(UUID().uuidString).sqlite").path
        let budget = try SharedBudgetFile(path: file)
        let here = try budget.deviceID()
        let now = Date(timeIntervalSince1970: 1_764_000_000)
        let today = BudgetDay(now)
        // The phone's clock is 20 minutes ahead of this tablet's: its start is 20 minutes "ahead".
        let phoneStart = now.addingTimeInterval(20 * 60)
        let answer = AccountBudget(
            account: "account:ann", since: today,
            counts: [BudgetDayCount(device: "phone", day: today, starts: 1, lastStart: phoneStart)])
        let taken = answer.counts(believableAt: now)
        #expect(taken.first?.lastStart == phoneStart, "the start ahead of this clock was dropped")
        try budget.learn(taken, account: "account:ann")

        let limits = DisplayBudget(flowsPerDay: 3, coolDown: 3600)
        func decision(at time: Date) throws -> BudgetVerdict {
            let ledger = try budget.ledger(device: here, account: "account:ann", since: today, now: time)
            return limits.verdict(for: .normal, ledger: ledger, now: time)
        }
        // Before the clock reaches it, the start is counted (one of three) but not yet a cool-down.
        #expect(
            try budget.ledger(device: here, account: "account:ann", since: today, now: now).lastStart == nil)
        #expect(try decision(at: now) == .free)
        // Once it does, the hour of cool-down runs from it.
        let reached = phoneStart.addingTimeInterval(60)
        #expect(
            try budget.ledger(device: here, account: "account:ann", since: today, now: reached).lastStart
                == phoneStart)
        #expect(
            try decision(at: reached)
                == .held(
                    until: phoneStart.addingTimeInterval(3600),
                    reason: "cool-down of 1 h after the last flow started"))
        // A day more than the server's one ahead is still not believed.
        let far = AccountBudget(
            account: "account:ann", since: today,
            counts: [
                BudgetDayCount(
                    device: "phone", day: BudgetDay(number: today.number + 3), starts: 5, lastStart: nil)
            ])
        #expect(far.counts(believableAt: now).isEmpty)
    }
}
