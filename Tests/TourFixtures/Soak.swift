import Foundation

/// The size of a long randomised test. `swift test` alone runs each at a size that still proves its
/// property (each test says why); `.ci/run` sets `ONBOARDING_SOAK=full` and runs them at full size.
public enum Soak {
    public static let isFull = ProcessInfo.processInfo.environment["ONBOARDING_SOAK"] == "full"

    /// `quick` under `swift test`, `full` when `ONBOARDING_SOAK=full`.
    public static func size(quick: Int, full: Int) -> Int { isFull ? full : quick }
}
