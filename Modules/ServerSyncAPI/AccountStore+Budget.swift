import AccountSync
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import TourCore

/// The display budget across an account's devices (Docs/DisplayBudget.md): each device's
/// grow-only count per day, merged with `greatest`, so exchanges in any order, retried or late,
/// end at the same counts.
extension AccountStore {
    /// Keeps the device's counts (the larger per day) and answers every device's counts of the
    /// account since the exchange's first day, in one transaction.
    /// Whether `app` shares the family's display budget: one of ``budgetFamily`` when the server
    /// names the family, else an app whose binary was registered (`onboarding-server register`).
    public func sharesBudget(app: String) async throws -> Bool {
        if let budgetFamily { return budgetFamily.contains(app) }
        return try await reads.read { connection, logger in
            let rows = try await connection.query(
                "SELECT 1 FROM catalogs WHERE app = \(app) AND source = 'compiled' LIMIT 1", logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }

    /// With `today` (the server's), counts the device tells of days after `today` + 1 were refused
    /// before (``SyncAPI/problem(with:today:)``), and none stored by an older server is answered.
    public func exchangeBudget(account: String, _ exchange: BudgetExchange, today: BudgetDay? = nil)
        async throws
        -> AccountBudget
    {
        let latest = Int32(
            min(
                today.map { $0.number + SyncAPI.budgetDaysAhead } ?? SyncAPI.latestBudgetDay.number,
                Int(Int32.max)))
        let counts = try await writes.write { connection, logger in
            for count in exchange.counts {
                let day = Int32(count.day.number)
                let starts = Int32(count.starts)
                let last = count.lastStart?.timeIntervalSince1970
                try await connection.query(
                    """
                    INSERT INTO budget_counts (account, device, day, starts, last_start)
                    VALUES (\(account), \(exchange.device), \(day), \(starts), \(last))
                    ON CONFLICT (account, day, device) DO UPDATE SET
                        starts = greatest(budget_counts.starts, EXCLUDED.starts),
                        last_start = greatest(budget_counts.last_start, EXCLUDED.last_start)
                    """, logger: logger)
            }
            let since = Int32(exchange.since.number)
            let rows = try await connection.query(
                """
                SELECT device, day, starts, last_start FROM budget_counts
                WHERE account = \(account) AND day >= \(since) AND day <= \(latest) ORDER BY day, device
                    LIMIT 10000
                """, logger: logger)
            var counts: [BudgetDayCount] = []
            for try await (device, day, starts, last) in rows.decode((String, Int32, Int32, Double?).self) {
                counts.append(
                    BudgetDayCount(
                        device: device, day: BudgetDay(number: Int(day)), starts: Int(starts),
                        lastStart: last.map(Date.init(timeIntervalSince1970:))))
            }
            return counts
        }
        return AccountBudget(account: account, since: exchange.since, counts: counts)
    }
}
