import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Mood Tracker as the executable, the benchmarks and the cross-app suite find it (see
/// `ProductRegistration`).
public let registration = ProductRegistration(
    executable: "moodtracker", displayName: "Mood Tracker", releases: CatalogReleases.recorded,
    publicationKeys: CatalogReleases.publicationKeys,
    // Public, not a secret: it says which app an install enrolls into (Docs/Server.md, "Installs").
    enrollmentKey: "moodtracker-enroll-0350906a0b424ccd"
) { environment in
    MoodTrackerCatalog.product
}
