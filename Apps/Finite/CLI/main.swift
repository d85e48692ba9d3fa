import FiniteOnboarding
import OnboardingCLI

OnboardingCLI.main(CLIProduct(FiniteOnboarding.registration))
