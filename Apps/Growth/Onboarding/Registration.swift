import TourRuntime

/// Growth as the executable, the benchmarks and the cross-app suite find it (see
/// `ProductRegistration`).
/// The tour's record is the account's (a user-scoped flow): with `--server` it follows the account
/// to every device through the account server.
public let registration = ProductRegistration(
    executable: "growth", displayName: "Growth", releases: CatalogReleases.recorded,
    publicationKeys: CatalogReleases.publicationKeys,
    // Public, not a secret: it says which app an install enrolls into (Docs/Server.md, "Installs").
    enrollmentKey: "growth-enroll-e36d2048e2167a84"
) { _ in
    GrowthCatalog.product
}
