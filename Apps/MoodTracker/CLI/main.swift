import MoodTrackerOnboarding
import OnboardingCLI

OnboardingCLI.main(CLIProduct(MoodTrackerOnboarding.registration))
