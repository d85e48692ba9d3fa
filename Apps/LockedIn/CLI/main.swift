import LockedInOnboarding
import OnboardingCLI

OnboardingCLI.main(CLIProduct(LockedInOnboarding.registration))
