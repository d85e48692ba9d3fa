import MoodTrackerOnboarding
import OnboardingCLI

await OnboardingCLI.main(CLIProduct(MoodTrackerOnboarding.registration))
