import LockedInOnboarding
import OnboardingCLI

await OnboardingCLI.main(CLIProduct(LockedInOnboarding.registration))
