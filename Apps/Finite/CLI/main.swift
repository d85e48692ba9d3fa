import FiniteOnboarding
import OnboardingCLI

await OnboardingCLI.main(CLIProduct(FiniteOnboarding.registration))
