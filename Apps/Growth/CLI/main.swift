import GrowthOnboarding
import OnboardingCLI

await OnboardingCLI.main(CLIProduct(GrowthOnboarding.registration))
