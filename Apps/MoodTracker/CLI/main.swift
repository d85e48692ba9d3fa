import MoodTrackerOnboarding
import OnboardingCLI

await OnboardingCLI.main(
    CLIProduct(executable: "moodtracker", displayName: "Mood Tracker") { _ in MoodTrackerCatalog.product })
