#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TourRuntime

/// Finite as the executable, the benchmarks and the cross-app suite find it (see `ProductRegistration`).
public let registration = ProductRegistration(
    executable: "finite", displayName: "Finite", releases: CatalogReleases.recorded,
    publicationKeys: CatalogReleases.publicationKeys
) { environment in
    FiniteCatalog.product
}
