import CarrierWaveOnboarding
import OnboardingCLI

await OnboardingCLI.main(
    CLIProduct(executable: "carrierwave", displayName: "Carrier Wave") { environment in
        CarrierWaveCatalog.product(connector: StubServiceConnector(online: !environment.offline))
    })
