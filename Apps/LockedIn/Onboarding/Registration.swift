#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TourRuntime

/// LockedIn as the executable, the benchmarks and the cross-app suite find it (see `ProductRegistration`).
public let registration = ProductRegistration(
    executable: "lockedin", displayName: "LockedIn", releases: CatalogReleases.recorded,
    publicationKeys: CatalogReleases.publicationKeys
) { environment in
    LockedInCatalog.product
}
