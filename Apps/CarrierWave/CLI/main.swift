import CarrierWaveOnboarding
import OnboardingCLI

await OnboardingCLI.main(
    CLIProduct(executable: "carrierwave", displayName: "Carrier Wave") { environment in
        CarrierWaveCatalog.product(
            connector: StubServiceConnector(
                offline: environment.offline, answer: environment.requestAnswers["connection"]))
    })
