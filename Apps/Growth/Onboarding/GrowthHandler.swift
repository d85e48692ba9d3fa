#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TourRuntime

/// Growth's domain: whether onboarding is complete, and the tour's status as the app shows it.
///
/// The seed keeps "shown, completed or skipped" in the user's Firebase profile with a local
/// fallback. Here that is the account record of the `app_tour` flow, which is user-scoped: it is
/// committed locally first (the fallback) and synced through the account server, which merges
/// what every device of the account did (Docs/Server.md).
public struct GrowthHandler: ProductHandler {
    public var declarations: CatalogDeclarations {
        CatalogDeclarations(
            context: [
                .computed("onboardingComplete", .flag, default: false, "the user finished Growth's onboarding")
            ],
            productEffects: ["onboardingCompleted", "recordTour"])
    }

    public init() {}

    public func context(domain: [String: TourValue], now: Date) -> TourContext {
        ["onboardingComplete": .bool(domain["onboardingComplete"]?.boolValue == true)]
    }

    public func apply(_ effect: ProductEffect, to domain: inout [String: TourValue], now: Date) {
        switch effect.name {
        case "onboardingCompleted":
            domain["onboardingComplete"] = true
        case "recordTour":
            domain["tourStatus"] = effect.payload["status"]
        default:
            break
        }
    }
}

extension GrowthCatalog {
    public static var product: Product {
        Product(catalog: catalog, handler: GrowthHandler(), currentVersion: "1.0")
    }
}
