import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// LockedIn as the executable, the benchmarks and the cross-app suite find it (see
/// `ProductRegistration`).
public let registration = ProductRegistration(
    executable: "lockedin", displayName: "LockedIn", releases: CatalogReleases.recorded,
    publicationKeys: CatalogReleases.publicationKeys,
    // Public, not a secret: it says which app an install enrolls into (Docs/Server.md, "Installs").
    enrollmentKey: "lockedin-enroll-754a135841de2f75"
) { environment in
    LockedInCatalog.product
}
