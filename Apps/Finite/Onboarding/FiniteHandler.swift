import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Finite's side effects, as its catalog sends them.
public enum FiniteEffect: HandlerEffect, Equatable {
    /// The birth date, so weeks lived can be counted.
    case setBirthDate(day: String)
    /// A life chapter (phase), with the year it started when given.
    case storePhase(name: String, startYear: Int?)
    /// A reflected week, with its note when given.
    case markWeek(week: Int?, note: String?)

    public static let kinds = [
        EffectKind("setBirthDate", "stores the birth date (YYYY-MM-DD)", payload: ["date": .text]),
        EffectKind(
            "storePhase", "stores a life chapter; startYear may be null",
            payload: ["name": .text, "startYear": .number]),
        EffectKind(
            "markWeek", "stores a reflected week; the note may be null",
            payload: ["week": .number, "note": .text]),
    ]

    public init(_ payload: EffectPayload) throws(EffectError) {
        switch payload.kind {
        case "setBirthDate": self = .setBirthDate(day: try payload.text("date"))
        case "storePhase":
            self = .storePhase(name: try payload.text("name"), startYear: payload.optionalInt("startYear"))
        case "markWeek":
            self = .markWeek(week: payload.optionalInt("week"), note: payload.optionalText("note"))
        case let other: throw EffectError("Finite has no effect '\(other)'")
        }
    }
}

/// Finite's domain: a birth date (so weeks lived can be counted), life chapters (phases) and marked weeks.
public struct FiniteHandler: ProductHandler {
    public var declarations: CatalogDeclarations {
        CatalogDeclarations(
            context: [
                .computed(
                    "weeksLived", .number, default: 0,
                    "whole weeks from the birth date to today (0 without one)"),
                .computed(
                    "markableWeeks", .number, default: 4,
                    "the weeks a long-press may name: weeks lived, or the first few"),
                .computed("hasPhases", .flag, default: false, "at least one life chapter is stored"),
                .computed(
                    "currentYear", .number, default: 2026,
                    """
                    the year now, the latest start year of a chapter
                    """),
                .computed("today", .text, default: "1970-01-01", "the date now, the latest birth date"),
            ])
    }

    public var domainState: DomainStateVocabulary {
        DomainStateVocabulary(
            format: 1,
            [
                .init("birthDate", .text, "the birth date, YYYY-MM-DD"),
                .init("phases", .list, "the life chapters: {name, startYear?}, in the order stored"),
                .init("markedWeeks", .list, "the weeks marked by a long-press: {week, note?}"),
            ])
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

    public func apply(_ effect: FiniteEffect, to domain: inout [String: TourValue], now: Date) {
        switch effect {
        case .setBirthDate(let day):
            domain["birthDate"] = .string(day)
        case .storePhase(let name, let startYear):
            var phase: [String: TourValue] = ["name": .string(name)]
            if let startYear { phase["startYear"] = .int(startYear) }
            domain["phases"] = .list((domain["phases"]?.listValue ?? []) + [.object(phase)])
        case .markWeek(let week, let note):
            var mark: [String: TourValue] = ["week": week.map(TourValue.int) ?? .null]
            if let note { mark["note"] = .string(note) }
            domain["markedWeeks"] = .list((domain["markedWeeks"]?.listValue ?? []) + [.object(mark)])
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
