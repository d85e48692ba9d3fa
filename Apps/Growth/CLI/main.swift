import GrowthOnboarding
import OnboardingCLI

OnboardingCLI.main(CLIProduct(GrowthOnboarding.registration))
