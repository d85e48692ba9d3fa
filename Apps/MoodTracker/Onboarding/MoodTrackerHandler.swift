#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TourRuntime

/// Mood Tracker's domain: mood entries and the `hasSeenTutorial` flag, set on completion only.
public struct MoodTrackerHandler: ProductHandler {
    public var declarations: CatalogDeclarations {
        CatalogDeclarations(productEffects: ["recordMood", "markTutorialSeen", "clearTutorialSeen"])
    }

    public init() {}

    public func apply(_ effect: ProductEffect, to domain: inout [String: TourValue], now: Date) {
        switch effect.name {
        case "recordMood":
            let entry: TourValue = .object([
                "mood": effect.payload["mood"] ?? .null, "at": .double(now.timeIntervalSince1970),
            ])
            domain["moodEntries"] = .list((domain["moodEntries"]?.listValue ?? []) + [entry])
        case "markTutorialSeen":
            domain["hasSeenTutorial"] = true
        case "clearTutorialSeen":
            domain["hasSeenTutorial"] = nil
        default:
            break
        }
    }
}

extension MoodTrackerCatalog {
    public static let product = Product(
        catalog: catalog, handler: MoodTrackerHandler(), currentVersion: "1.0")
}
