import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `POST /v1/apps/{app}/accounts/{account}/budget`: the display budget across an account's devices
/// (Docs/DisplayBudget.md). A device says what it counted for the account on each day since
/// `since`; the answer is what every device of the account counted since then. The budget is the
/// account's in every product of the family, so any product's token for the account may send it.
///
/// Each count only grows, and the server keeps the larger per (account, device, day): a retried or
/// late exchange changes nothing, and exchanges in any order end the same.
public struct BudgetExchange: Equatable, Sendable {
    /// The device as the budget names it (the same for every product on it).
    public var device: String
    /// The first day (UTC days since 1970) the device asks about and tells of.
    public var since: BudgetDay
    /// The device's own counts, each day at most once, none before `since`.
    public var counts: [BudgetDayCount]

    public init(device: String, since: BudgetDay, counts: [BudgetDayCount]) {
        self.device = device
        self.since = since
        self.counts = counts
    }
}

/// The answer to a ``BudgetExchange``: every device's counts of the account since `since`.
public struct AccountBudget: Equatable, Sendable {
    public var account: String
    public var since: BudgetDay
    public var counts: [BudgetDayCount]

    public init(account: String, since: BudgetDay, counts: [BudgetDayCount]) {
        self.account = account
        self.since = since
        self.counts = counts
    }
}

extension SyncAPI {
    /// At most this many days in one exchange (a device tells of today and yesterday; one offline
    /// for weeks tells of the last month).
    public static let maxBudgetDays = 31
    /// The most starts a device may count in one day: far above any budget (``DisplayBudget``
    /// allows 50), low enough that a count cannot overflow a sum.
    public static let maxBudgetStartsPerDay = 10_000
    /// The last day a count may name: the end of the year 9999, like ``latestTime``.
    public static let latestBudgetDay = BudgetDay(number: Int(latestTime / 86_400))

    /// How far ahead of the server's clock a count's day may be: one day (a device just past
    /// midnight UTC before the server; every time zone's today is at most one UTC day ahead).
    public static let budgetDaysAhead = 1

    /// Why an exchange is refused, before anything is written; nil when it is well formed. With
    /// `today` (the server's), a count for a day more than ``budgetDaysAhead`` after it is refused:
    /// a device whose clock runs weeks ahead would hold every device of the account for weeks.
    public static func problem(with exchange: BudgetExchange, today: BudgetDay? = nil) -> String? {
        let latest =
            today.map { BudgetDay(number: min($0.number + budgetDaysAhead, latestBudgetDay.number)) }
            ?? latestBudgetDay
        guard isValidName(exchange.device) else { return "the device id must be \(nameRule)" }
        guard (0...latest.number).contains(exchange.since.number) else {
            return
                """
                since is a day number (UTC days since 1970) from 0 to \(latest.number)\
                \(today == nil ? "" : " (the server's today and one day more)")
                """
        }
        guard exchange.counts.count <= maxBudgetDays else {
            return "an exchange tells of at most \(maxBudgetDays) days (got \(exchange.counts.count))"
        }
        var days: Set<BudgetDay> = []
        for count in exchange.counts {
            let at = "the count of day \(count.day.number)"
            guard count.device == exchange.device else {
                return "\(at) names another device; a device tells its own"
            }
            guard count.day >= exchange.since, count.day <= latest else {
                let clock =
                    today == nil
                    ? ""
                    : """
                     (the server's today and one day more: is this device's clock right?)
                    """
                return "\(at): each day is from since (\(exchange.since.number)) to \(latest.number)\(clock)"
            }
            guard days.insert(count.day).inserted else { return "\(at) appears twice; each day at most once" }
            guard (0...maxBudgetStartsPerDay).contains(count.starts) else {
                return "\(at): starts is a whole number from 0 to \(maxBudgetStartsPerDay)"
            }
            if let last = count.lastStart {
                let seconds = last.timeIntervalSince1970
                guard seconds.isFinite, seconds >= count.day.start.timeIntervalSince1970,
                    seconds < count.day.next.start.timeIntervalSince1970
                else { return "\(at): lastStart is a time within that day (seconds since 1970)" }
            }
        }
        return nil
    }
}

extension AccountBudget {
    /// What a device at `now` takes from the server's answer: no count for a day more than
    /// ``SyncAPI/budgetDaysAhead`` after its own. A `lastStart` ahead of this device's clock is
    /// kept (another device's clock is ahead, or this one's behind): the device applies it once its
    /// clock reaches it (``BudgetLedger``'s reader, `SharedBudgetFile.ledger`), so a wrong clock
    /// elsewhere holds this device for one cool-down at most, and a start heard early is not lost.
    public func counts(believableAt now: Date) -> [BudgetDayCount] {
        let latest = BudgetDay(now).number + SyncAPI.budgetDaysAhead
        return counts.filter { $0.day.number <= latest }
    }
}

extension BudgetDayCount: TourValueCodable {
    public var tourValue: TourValue {
        .members([
            "device": .string(device), "day": .int(day.number), "starts": .int(starts),
            "lastStart": lastStart.map { .double($0.timeIntervalSince1970) },
        ])
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "budget count")
        self.init(
            device: try wire.string("device"), day: BudgetDay(number: try wire.int("day")),
            starts: try wire.int("starts"),
            lastStart: try wire.optionalDouble("lastStart").map(Date.init(timeIntervalSince1970:)))
    }
}

extension BudgetExchange: TourValueCodable {
    public var tourValue: TourValue {
        ["device": .string(device), "since": .int(since.number), "counts": counts.tourValue]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "budget exchange")
        self.init(
            device: try wire.string("device"), since: BudgetDay(number: try wire.int("since")),
            counts: try wire.list("counts"))
    }
}

extension AccountBudget: TourValueCodable {
    public var tourValue: TourValue {
        ["account": .string(account), "since": .int(since.number), "counts": counts.tourValue]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "account budget")
        self.init(
            account: try wire.string("account"), since: BudgetDay(number: try wire.int("since")),
            counts: try wire.list("counts"))
    }
}
