import Foundation
import TourRuntime

/// Growth as the executable, the benchmarks and the cross-app suite find it (see `ProductRegistration`).
public let registration = ProductRegistration(executable: "growth", displayName: "Growth") { environment in
    // The stub profile store is a file beside the database, or $GROWTH_PROFILE_STORE (shared by two "devices").
    let path = ProcessInfo.processInfo.environment["GROWTH_PROFILE_STORE"] ?? environment.databasePath + ".profiles.json"
    return GrowthCatalog.product(profiles: FileProfileStore(path: path, online: !environment.offline))
}
