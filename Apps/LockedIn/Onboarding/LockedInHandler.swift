import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// LockedIn's side effects, as its catalog sends them.
public enum LockedInEffect: HandlerEffect, Equatable {
    /// LET'S GO: the chosen apps are blocked and the bank starts.
    case activate(difficulty: String, blockedApps: [String], startingBankMinutes: Int)
    /// A debug reset of the onboarding.
    case onboardingReset

    public static let kinds = [
        EffectKind(
            "activate", "LET'S GO: the chosen apps are blocked, the difficulty is set and the bank starts",
            payload: ["difficulty": .text, "blockedApps": .list, "startingBankMinutes": .number]),
        EffectKind("onboardingReset", "a debug reset: onboarding shows again (the bank and difficulty stay)"),
    ]

    public init(_ payload: EffectPayload) throws(EffectError) {
        switch payload.kind {
        case "activate":
            self = .activate(
                difficulty: try payload.text("difficulty"), blockedApps: try payload.texts("blockedApps"),
                startingBankMinutes: try payload.int("startingBankMinutes"))
        case "onboardingReset":
            self = .onboardingReset
        case let other:
            throw EffectError("LockedIn has no effect '\(other)'")
        }
    }
}

/// LockedIn's domain: the difficulty, the screen-time bank and the onboarding-complete flag, all
/// written by LET'S GO in the same transaction that completes the flow.
public struct LockedInHandler: ProductHandler {
    public var domainState: DomainStateVocabulary {
        DomainStateVocabulary(
            format: 1,
            [
                .init("difficulty", .text, "the difficulty chosen at LET'S GO"),
                .init("blockedApps", .list, "the names of the apps chosen to block"),
                .init("startingBankMinutes", .number, "the screen-time bank LET'S GO started (60 minutes)"),
                .init("balanceMinutes", .number, "the bank's balance now"),
                .init("hasCompletedOnboarding", .flag, "LET'S GO was tapped (a debug reset clears it)"),
            ])
    }

    public init() {}

    public func apply(_ effect: LockedInEffect, to domain: inout [String: TourValue], now: Date) {
        switch effect {
        case .onboardingReset:
            // The debug reset shows onboarding again; the bank and difficulty stay until LET'S GO.
            domain["hasCompletedOnboarding"] = nil
        case .activate(let difficulty, let blockedApps, let bank):
            domain["difficulty"] = .string(difficulty)
            domain["blockedApps"] = .list(blockedApps.map(TourValue.string))
            domain["startingBankMinutes"] = .int(bank)
            domain["balanceMinutes"] = .int(bank)
            domain["hasCompletedOnboarding"] = true
        }
    }
}

extension LockedInCatalog {
    public static let product = Product(catalog: catalog, handler: LockedInHandler(), currentVersion: "1.0")
}
