import FiniteOnboarding
import OnboardingCLI

await OnboardingCLI.main(
    CLIProduct(executable: "finite", displayName: "Finite") { _ in FiniteCatalog.product })
