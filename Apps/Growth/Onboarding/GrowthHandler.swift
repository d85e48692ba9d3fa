import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Growth's side effects, as its catalog sends them.
public enum GrowthEffect: HandlerEffect, Equatable {
    /// The app's own onboarding finished: the tour may show on the Dashboard.
    case onboardingCompleted
    /// The tour's status as the app shows it: completed, skipped or notStarted.
    case recordTour(status: String)

    public static let kinds = [
        EffectKind(
            "onboardingCompleted", "the app's onboarding finished: the tour may show on the Dashboard"),
        EffectKind("recordTour", "the tour's status as the app shows it", payload: ["status": .text]),
    ]

    public init(_ payload: EffectPayload) throws(EffectError) {
        switch payload.kind {
        case "onboardingCompleted": self = .onboardingCompleted
        case "recordTour": self = .recordTour(status: try payload.text("status"))
        case let other: throw EffectError("Growth has no effect '\(other)'")
        }
    }
}

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
                .computed(
                    "onboardingComplete", .flag, default: false, "the user finished Growth's onboarding")
            ])
    }

    public var domainState: DomainStateVocabulary {
        DomainStateVocabulary(
            format: 1,
            [
                .init("onboardingComplete", .flag, "Growth's onboarding was finished"),
                .init(
                    "tourStatus", .text,
                    "how the app tour ended, as the profile store keeps it (completed, skipped)"),
            ])
    }

    public init() {}

    public func context(domain: [String: TourValue], now: Date) -> TourContext {
        ["onboardingComplete": .bool(domain["onboardingComplete"]?.boolValue == true)]
    }

    public func apply(_ effect: GrowthEffect, to domain: inout [String: TourValue], now: Date) {
        switch effect {
        case .onboardingCompleted:
            domain["onboardingComplete"] = true
        case .recordTour(let status):
            domain["tourStatus"] = .string(status)
        }
    }
}

extension GrowthCatalog {
    public static var product: Product {
        Product(catalog: catalog, handler: GrowthHandler(), currentVersion: "1.0")
    }
}
