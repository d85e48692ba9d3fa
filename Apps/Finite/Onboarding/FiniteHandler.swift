#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TourRuntime

/// Finite's domain: a birth date (so weeks lived can be counted), life chapters (phases) and marked weeks.
public struct FiniteHandler: ProductHandler {
    public var declarations: CatalogDeclarations {
        CatalogDeclarations(
            context: [
                .computed("weeksLived", .number, default: 0, "whole weeks from the birth date to today (0 without one)"),
                .computed("markableWeeks", .number, default: 4, "the weeks a long-press may name: weeks lived, or the first few"),
                .computed("hasPhases", .flag, default: false, "at least one life chapter is stored"),
                .computed("currentYear", .number, default: 2026, "the year now, the latest start year of a chapter"),
                .computed("today", .text, default: "1970-01-01", "the date now, the latest birth date"),
            ],
            productEffects: ["setBirthDate", "storePhase", "markWeek"])
    }

    /// With no filled weeks the long-press goes to one of the first few weeks of the grid.
    static let firstFewWeeks = 4

    public init() {}

    public func context(domain: [String: TourValue], now: Date) -> TourContext {
        let weeks =
            domain["birthDate"]?.stringValue.flatMap(Self.date).map { Self.weeks(from: $0, to: now) } ?? 0
        return [
            "weeksLived": .int(weeks),
            "markableWeeks": .int(weeks > 0 ? weeks : Self.firstFewWeeks),
            "hasPhases": .bool((domain["phases"]?.count ?? 0) > 0),
            "currentYear": .int(ISOTime.year(secondsSince1970: now.timeIntervalSince1970)),
            "today": .string(Self.day(now)),
        ]
    }

    public func apply(_ effect: ProductEffect, to domain: inout [String: TourValue], now: Date) {
        switch effect.name {
        case "setBirthDate":
            domain["birthDate"] = effect.payload["date"]
        case "storePhase":
            var phase: [String: TourValue] = ["name": effect.payload["name"] ?? .null]
            if let year = effect.payload["startYear"], year != .null { phase["startYear"] = year }
            domain["phases"] = .list((domain["phases"]?.listValue ?? []) + [.object(phase)])
        case "markWeek":
            var mark: [String: TourValue] = ["week": effect.payload["week"] ?? .null]
            if let note = effect.payload["note"], note != .null { mark["note"] = note }
            domain["markedWeeks"] = .list((domain["markedWeeks"]?.listValue ?? []) + [.object(mark)])
        default:
            break
        }
    }

    /// A stored birth date (`YYYY-MM-DD`, as the field checks it) as the start of that day, UTC.
    /// Day arithmetic from seconds since 1970, not `Calendar`: the context is computed for every
    /// event and every launch lookup.
    static func date(_ text: String) -> Date? {
        ISOTime.secondsSince1970(day: text).map(Date.init(timeIntervalSince1970:))
    }

    /// The UTC day of an instant, written YYYY-MM-DD.
    static func day(_ date: Date) -> String { ISOTime.day(secondsSince1970: date.timeIntervalSince1970) }

    /// Whole weeks between two instants; none before birth.
    static func weeks(from birth: Date, to now: Date) -> Int {
        max(0, Int(now.timeIntervalSince(birth) / (7 * 86_400)))
    }
}

extension FiniteCatalog {
    public static let product = Product(
        catalog: catalog, handler: FiniteHandler(), currentVersion: "1.0",
        // Headless, the Reveal animation has no length: it completes as the app launches.
        launchSignals: ["revealCompleted"])
}
