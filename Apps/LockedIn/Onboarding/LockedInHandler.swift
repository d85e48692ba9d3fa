#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TourRuntime

/// LockedIn's domain: the difficulty, the screen-time bank and the onboarding-complete flag, all
/// written by LET'S GO in the same transaction that completes the flow.
public struct LockedInHandler: ProductHandler {
    public var declarations: CatalogDeclarations {
        CatalogDeclarations(productEffects: ["activate", "onboardingReset"])
    }

    public init() {}

    public func apply(_ effect: ProductEffect, to domain: inout [String: TourValue], now: Date) {
        if effect.name == "onboardingReset" {
            // The debug reset shows onboarding again; the bank and difficulty stay until LET'S GO.
            domain["hasCompletedOnboarding"] = nil
            return
        }
        guard effect.name == "activate" else { return }
        let bank = effect.payload["startingBankMinutes"] ?? .int(LockedInCatalog.startingBankMinutes)
        domain["difficulty"] = effect.payload["difficulty"]
        domain["blockedApps"] = effect.payload["blockedApps"]
        domain["startingBankMinutes"] = bank
        domain["balanceMinutes"] = bank
        domain["hasCompletedOnboarding"] = true
    }
}

extension LockedInCatalog {
    public static let product = Product(catalog: catalog, handler: LockedInHandler(), currentVersion: "1.0")
}
