import Foundation
import TourRuntime

/// Growth's domain: whether onboarding is complete, the tour's status, and a pending profile write
/// kept locally while the profile store is offline.
public struct GrowthHandler: ProductHandler {
    public var declarations: CatalogDeclarations {
        CatalogDeclarations(
            context: [
                .computed("onboardingComplete", .flag, default: false, "the user finished Growth's onboarding"),
                .computed("tourSeenInProfile", .flag, default: false, "the account's profile says the tour was shown"),
                .device("online", .flag, default: true, "the device reaches the profile store"),
            ],
            productEffects: ["onboardingCompleted", "recordTour", "profileSynced", "profileLoaded"])
    }

    let profiles: any ProfileStore

    public init(profiles: any ProfileStore) {
        self.profiles = profiles
    }

    public func context(domain: [String: TourValue], now: Date) -> TourContext {
        [
            "onboardingComplete": .bool(domain["onboardingComplete"]?.boolValue == true),
            "tourSeenInProfile": .bool(Self.finished.contains(domain["profileTourStatus"]?.stringValue ?? "")),
        ]
    }

    public func apply(_ effect: ProductEffect, to domain: inout [String: TourValue], now: Date) {
        switch effect.name {
        case "onboardingCompleted":
            domain["onboardingComplete"] = true
        case "recordTour":
            // The local fallback: written with the tour's end, flushed to the profile store when online.
            domain["tourStatus"] = effect.payload["status"]
            domain["pendingProfileWrite"] = effect.payload["status"]
        case "profileSynced":
            domain["pendingProfileWrite"] = nil
            domain["profileTourStatus"] = effect.payload["status"]
        case "profileLoaded":
            domain["profileTourStatus"] = effect.payload["status"]
        default:
            break
        }
    }

    /// After every commit: flush a pending write, and at launch read the profile's tour flag.
    /// Profile statuses that mean the account has seen the tour; a debug reset writes "notStarted".
    static let finished: Set<String> = ["completed", "skipped"]

    public func followUps(after transition: Transition, domain: [String: TourValue], user: String) async
        -> [TourEvent]
    {
        if let pending = domain["pendingProfileWrite"]?.stringValue {
            do {
                try await profiles.setTourStatus(pending, user: user)
                return [.domainEvent("profileSynced", payload: ["status": .string(pending)])]
            } catch {
                return []  // Offline: the write stays pending in the local database.
            }
        }
        if case .appLaunched = transition.record.event, domain["profileTourStatus"] == nil,
            let status = try? await profiles.tourStatus(user: user)
        {
            return [.domainEvent("profileLoaded", payload: ["status": .string(status)])]
        }
        return []
    }
}

extension GrowthCatalog {
    public static func product(profiles: any ProfileStore) -> Product {
        Product(catalog: catalog, handler: GrowthHandler(profiles: profiles), currentVersion: "1.0")
    }
}
