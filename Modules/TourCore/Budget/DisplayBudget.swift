#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How much a family of products may interrupt one person (Docs/DisplayBudget.md): at most
/// ``flowsPerDay`` flows started by their triggers per day (UTC days), and ``coolDown`` seconds
/// between two. Every product on the account (or, for a product without sign-in, on the install)
/// counts against one budget; a flow's ``BudgetPriority`` says how it is held.
public struct DisplayBudget: Sendable, Equatable {
    /// Flows that may start by themselves per day, every product together (0: none).
    public var flowsPerDay: Int
    /// Seconds after a counted start before the next normal or low one.
    public var coolDown: Double

    public init(flowsPerDay: Int, coolDown: Double) {
        self.flowsPerDay = flowsPerDay
        self.coolDown = coolDown
    }

    /// The limits a budget may declare.
    public static let flowsPerDayRange = 0...50
    public static let coolDownRange = 0.0...(7 * 86_400.0)

    /// Whether a flow of `priority` may start at `now` given what the ledger counted, and if not,
    /// why and until when.
    public func verdict(for priority: BudgetPriority, ledger: BudgetLedger, now: Date) -> BudgetVerdict {
        guard priority != .exempt else { return .free }
        guard flowsPerDay > 0 else {
            return .held(until: nil, reason: "the display budget allows no flow to start by itself (0 a day)")
        }
        let day = BudgetDay(now)
        let started = ledger.starts(on: day)
        // A low flow leaves the day's last start to a higher one; with one a day, it never starts
        // by itself (Docs/DisplayBudget.md).
        let cap = priority == .low ? flowsPerDay - 1 : flowsPerDay
        if cap == 0 {
            return .held(
                until: nil,
                reason: "a low-priority flow leaves the day's only start (1 a day) to a higher priority")
        }
        if started >= cap {
            let spare = cap < flowsPerDay ? " (the last is kept for a higher priority)" : ""
            return .held(
                until: day.next.start,
                reason: "\(started) of \(flowsPerDay) flows started today\(spare)")
        }
        if priority != .high, let last = ledger.lastStart, now < last.addingTimeInterval(coolDown) {
            return .held(
                until: last.addingTimeInterval(coolDown),
                reason: "cool-down of \(BudgetDay.duration(coolDown)) after the last flow started")
        }
        return .free
    }
}

/// How a flow meets the display budget. A flow declares its own (in its catalog document only when
/// not ``normal``).
public enum BudgetPriority: String, Sendable, Equatable, CaseIterable, Comparable {
    /// Ignores the budget and is not counted: a flow the user asked for. Replays always are.
    case exempt
    /// Counted; held by the day's cap only, never by the cool-down (a permission primer the user
    /// asked for).
    case high
    /// Counted; held by the cap and the cool-down (a first-run walkthrough).
    case normal
    /// Counted; held by the cool-down and by the cap one start early, which it leaves to higher
    /// priorities (a what's-new sheet, a tip).
    case low

    private var rank: Int {
        switch self {
        case .exempt: 3
        case .high: 2
        case .normal: 1
        case .low: 0
        }
    }
    public static func < (lhs: BudgetPriority, rhs: BudgetPriority) -> Bool { lhs.rank < rhs.rank }
}

/// The budget's answer for one flow now.
public enum BudgetVerdict: Sendable, Equatable {
    case free
    /// Held back; free again at `until` (nil: never, with this budget).
    case held(until: Date?, reason: String)
}

/// A UTC day, as the budget counts them: days since 1970.
public struct BudgetDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let number: Int

    public init(number: Int) { self.number = number }
    public init(_ date: Date) { number = Int((date.timeIntervalSince1970 / 86_400).rounded(.down)) }

    public var start: Date { Date(timeIntervalSince1970: Double(number) * 86_400) }
    public var next: BudgetDay { BudgetDay(number: number + 1) }
    public var description: String { "day \(number)" }
    public static func < (lhs: BudgetDay, rhs: BudgetDay) -> Bool { lhs.number < rhs.number }

    /// "2 h", "90 min", "45 s".
    static func duration(_ seconds: Double) -> String {
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 {
            return "\(Int(seconds / 3600)) h"
        }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 {
            return "\(Int(seconds / 60)) min"
        }
        return "\(Int(seconds)) s"
    }
}

/// What the budget has counted for one person: starts per day per device, and the last start.
///
/// A join semilattice, like the account's flow records: each device only ever raises its own
/// count of a day, so ``merged(with:)`` takes the larger count per (day, device) and the later
/// last start; any order, repetition or interleaving of merges ends at the same ledger.
public struct BudgetLedger: Sendable, Equatable {
    /// Counted starts by day, then by device.
    public var counts: [BudgetDay: [String: Int]]
    public var lastStart: Date?

    public init(counts: [BudgetDay: [String: Int]] = [:], lastStart: Date? = nil) {
        self.counts = counts
        self.lastStart = lastStart
    }

    /// Every device's starts on `day`.
    public func starts(on day: BudgetDay) -> Int { counts[day]?.values.reduce(0, +) ?? 0 }

    public func merged(with other: BudgetLedger) -> BudgetLedger {
        var merged = self
        for (day, devices) in other.counts {
            merged.counts[day, default: [:]].merge(devices) { Swift.max($0, $1) }
        }
        merged.lastStart = [lastStart, other.lastStart].compactMap { $0 }.max()
        return merged
    }

    /// One more start on `device` at `date`.
    public mutating func count(on device: String, at date: Date) {
        counts[BudgetDay(date), default: [:]][device, default: 0] += 1
        lastStart = [lastStart, date].compactMap { $0 }.max()
    }
}

/// One device's count of one day, as the devices of an account tell each other through the
/// account server: a grow-only count (the device only raises it) and the day's last start.
public struct BudgetDayCount: Sendable, Equatable {
    public var device: String
    public var day: BudgetDay
    public var starts: Int
    public var lastStart: Date?

    public init(device: String, day: BudgetDay, starts: Int, lastStart: Date?) {
        self.device = device
        self.day = day
        self.starts = starts
        self.lastStart = lastStart
    }
}

extension BudgetLedger {
    /// The ledger these counts make (the join of each).
    public init(_ counts: [BudgetDayCount]) {
        self.init()
        for count in counts {
            self = merged(
                with: BudgetLedger(
                    counts: [count.day: [count.device: count.starts]], lastStart: count.lastStart))
        }
    }
}

/// What a reduction knows of the budget: the family's limits, the ledger so far, and the device
/// that counts a start. ``unlimited`` (no shared budget: a product alone) holds nothing.
public struct BudgetInput: Sendable, Equatable {
    public var budget: DisplayBudget?
    public var ledger: BudgetLedger
    public var device: String

    public init(budget: DisplayBudget?, ledger: BudgetLedger = BudgetLedger(), device: String) {
        self.budget = budget
        self.ledger = ledger
        self.device = device
    }

    public static let unlimited = BudgetInput(budget: nil, device: "")
}
