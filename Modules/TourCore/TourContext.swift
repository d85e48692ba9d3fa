import TourCodec

/// Facts about the product's world that flows read: `hasPhases`, `weeksLived`, `onboardingComplete`.
///
/// The product computes it from its domain state and the time passed in; the engine never stores it.
public typealias TourContext = [String: TourValue]
