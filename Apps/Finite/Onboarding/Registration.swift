import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Finite as the executable, the benchmarks and the cross-app suite find it (see
/// `ProductRegistration`).
public let registration = ProductRegistration(
    executable: "finite", displayName: "Finite", releases: CatalogReleases.recorded,
    publicationKeys: CatalogReleases.publicationKeys,
    // Public, not a secret: it says which app an install enrolls into (Docs/Server.md, "Installs").
    enrollmentKey: "finite-enroll-1997c5db99e32888"
) { environment in
    FiniteCatalog.product
}
