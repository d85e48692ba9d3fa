import LockedInOnboarding
import OnboardingCLI

await OnboardingCLI.main(
    CLIProduct(executable: "lockedin", displayName: "LockedIn") { _ in LockedInCatalog.product })
