#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TourRuntime

/// Mood Tracker as the executable, the benchmarks and the cross-app suite find it (see `ProductRegistration`).
public let registration = ProductRegistration(
    executable: "moodtracker", displayName: "Mood Tracker", releases: CatalogReleases.recorded,
    publicationKeys: CatalogReleases.publicationKeys
) { environment in
    MoodTrackerCatalog.product
}
