import CarrierWaveOnboarding
import OnboardingCLI

OnboardingCLI.main(CLIProduct(CarrierWaveOnboarding.registration))
