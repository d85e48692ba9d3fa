import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Mood Tracker's side effects, as its catalog sends them.
public enum MoodTrackerEffect: HandlerEffect, Equatable {
    /// A swipe recorded a mood (bad, mid or good).
    case recordMood(String)
    /// The tutorial was completed: it does not show again.
    case markTutorialSeen
    /// A debug reset: the tutorial shows again.
    case clearTutorialSeen

    public static let kinds = [
        EffectKind("recordMood", "a swipe recorded a mood: bad, mid or good", payload: ["mood": .text]),
        EffectKind("markTutorialSeen", "the tutorial was completed: hasSeenTutorial"),
        EffectKind("clearTutorialSeen", "a debug reset: the tutorial shows again"),
    ]

    public init(_ payload: EffectPayload) throws(EffectError) {
        switch payload.kind {
        case "recordMood": self = .recordMood(try payload.text("mood"))
        case "markTutorialSeen": self = .markTutorialSeen
        case "clearTutorialSeen": self = .clearTutorialSeen
        case let other: throw EffectError("Mood Tracker has no effect '\(other)'")
        }
    }
}

/// Mood Tracker's domain: mood entries and the `hasSeenTutorial` flag, set on completion only.
public struct MoodTrackerHandler: ProductHandler {
    public var domainState: DomainStateVocabulary {
        DomainStateVocabulary(
            format: 1,
            [
                .init(
                    "moodEntries", .list, "each mood logged: {mood, at (seconds since 1970)}, oldest first"),
                .init("hasSeenTutorial", .flag, "the first-run tutorial was seen (a debug reset clears it)"),
            ])
    }

    public init() {}

    public func apply(_ effect: MoodTrackerEffect, to domain: inout [String: TourValue], now: Date) {
        switch effect {
        case .recordMood(let mood):
            let entry: TourValue = .object(["mood": .string(mood), "at": .double(now.timeIntervalSince1970)])
            domain["moodEntries"] = .list((domain["moodEntries"]?.listValue ?? []) + [entry])
        case .markTutorialSeen:
            domain["hasSeenTutorial"] = true
        case .clearTutorialSeen:
            domain["hasSeenTutorial"] = nil
        }
    }
}

extension MoodTrackerCatalog {
    public static let product = Product(
        catalog: catalog, handler: MoodTrackerHandler(), currentVersion: "1.0")
}
