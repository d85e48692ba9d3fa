import CarrierWaveOnboarding
import OnboardingCLI

await OnboardingCLI.main(CLIProduct(CarrierWaveOnboarding.registration))
