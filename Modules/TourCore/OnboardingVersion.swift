/// The one version of the shared modules (TourCore, Persistence, Haptics, Permissions, the runtime and
/// the CLI), kept in CHANGELOG.md and printed by every product's `--version`.
public enum OnboardingVersion {
    public static let current = "0.43.0"
}
