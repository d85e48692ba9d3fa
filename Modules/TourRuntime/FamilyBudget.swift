import Persistence
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The family's display budget as a session uses it: the limits declared once for every product
/// (``DisplayBudget/family``), and the file the products of one device share it through.
public struct FamilyBudget: Sendable {
    public let limits: DisplayBudget
    let file: SharedBudgetFile
    /// The device as the budget names it (the same for every product on it).
    public let device: String

    /// Opens (creating) the shared file at `path`.
    ///
    /// - Throws: ``StoreError`` naming the file and what is wrong with it.
    public init(path: String, limits: DisplayBudget = .family, busyTimeout: Double = 10) throws {
        file = try SharedBudgetFile(path: path, busyTimeout: busyTimeout)
        device = try file.deviceID()
        self.limits = limits
    }

    public var path: String { file.path }

    /// What the budget has counted that matters at `now` (today and yesterday) for the device and,
    /// when the user signs in, their account.
    func input(account: String?, now: Date) throws -> BudgetInput {
        BudgetInput(
            budget: limits,
            ledger: try file.ledger(
                device: device, account: account, since: BudgetDay(number: BudgetDay(now).number - 1),
                now: now),
            device: device)
    }
}

extension DisplayBudget {
    /// The budget of the five products (Docs/DisplayBudget.md): three flows a day, an hour between
    /// two. A product team changes it here, for the family, or a flow's ``BudgetPriority``.
    public static let family = DisplayBudget(flowsPerDay: 3, coolDown: 3600)

    /// Reads `perDay=N,coolDown=SECONDS` (either may be left out; `off` is no budget), as
    /// `ONBOARDING_BUDGET` gives it; nil for `off`.
    ///
    /// - Throws: a message saying what is allowed.
    public static func parse(_ text: String, over base: DisplayBudget = .family) throws(BudgetSettingError)
        -> DisplayBudget?
    {
        if text == "off" { return nil }
        var budget = base
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(
                String.init)
            switch (pair.first, pair.count == 2 ? pair[1] : nil) {
            case ("perDay", let value?):
                guard let number = Int(value), flowsPerDayRange.contains(number) else {
                    throw BudgetSettingError(
                        """
                        perDay is a whole number from \(flowsPerDayRange.lowerBound) to \
                        \(flowsPerDayRange.upperBound); got '\(value)'
                        """
                    )
                }
                budget.flowsPerDay = number
            case ("coolDown", let value?):
                guard let seconds = Double(value), coolDownRange.contains(seconds) else {
                    throw BudgetSettingError(
                        "coolDown is seconds from 0 to \(Int(coolDownRange.upperBound)); got '\(value)'")
                }
                budget.coolDown = seconds
            default:
                throw BudgetSettingError(
                    "takes perDay=N,coolDown=SECONDS (either may be left out) or off; got '\(part)'")
            }
        }
        return budget
    }
}

/// Why a budget setting was refused.
public struct BudgetSettingError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
