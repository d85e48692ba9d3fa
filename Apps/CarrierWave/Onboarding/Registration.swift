import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Carrier Wave as the executable, the benchmarks and the cross-app suite find it (see
/// `ProductRegistration`).
public let registration = ProductRegistration(
    executable: "carrierwave", displayName: "Carrier Wave", releases: CatalogReleases.recorded,
    publicationKeys: CatalogReleases.publicationKeys,
    // Public, not a secret: it says which app an install enrolls into (Docs/Server.md, "Installs").
    enrollmentKey: "carrierwave-enroll-13cdb59b8c9ee154"
) { environment in
    CarrierWaveCatalog.product(
        connector: StubServiceConnector(
            offline: environment.offline, answer: environment.requestAnswers["connection"]))
}
