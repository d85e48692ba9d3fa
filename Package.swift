// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "Onboarding",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "TourCore", targets: ["TourCore"]),
        .library(name: "Persistence", targets: ["Persistence"]),
        .library(name: "Haptics", targets: ["Haptics"]),
        .library(name: "Permissions", targets: ["Permissions"]),
        .library(name: "TourRuntime", targets: ["TourRuntime"]),
        .library(name: "OnboardingCLI", targets: ["OnboardingCLI"]),
        .executable(name: "finite", targets: ["finite"]),
        .executable(name: "lockedin", targets: ["lockedin"]),
        .executable(name: "carrierwave", targets: ["carrierwave"]),
        .executable(name: "growth", targets: ["growth"]),
        .executable(name: "moodtracker", targets: ["moodtracker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
    ],
    targets: [
        // MARK: Shared modules
        .target(name: "TourCore", path: "Modules/TourCore", swiftSettings: swiftSettings),
        .target(
            name: "Haptics", dependencies: ["TourCore"], path: "Modules/Haptics", swiftSettings: swiftSettings
        ),
        .target(
            name: "Permissions", dependencies: ["TourCore"], path: "Modules/Permissions",
            swiftSettings: swiftSettings),
        .target(
            name: "Persistence",
            dependencies: ["TourCore", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Modules/Persistence", swiftSettings: swiftSettings),
        .target(
            name: "TourRuntime", dependencies: ["TourCore", "Persistence", "Haptics", "Permissions"],
            path: "Modules/TourRuntime", swiftSettings: swiftSettings),
        .target(
            name: "OnboardingCLI",
            dependencies: [
                "TourRuntime", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Modules/OnboardingCLI", swiftSettings: swiftSettings),

        // MARK: Products: one folder under Apps/ each, a library with the flows and a thin executable
        .target(
            name: "FiniteOnboarding", dependencies: ["TourRuntime"], path: "Apps/Finite/Onboarding",
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "finite", dependencies: ["FiniteOnboarding", "OnboardingCLI"], path: "Apps/Finite/CLI",
            swiftSettings: swiftSettings),
        .target(
            name: "LockedInOnboarding", dependencies: ["TourRuntime"], path: "Apps/LockedIn/Onboarding",
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "lockedin", dependencies: ["LockedInOnboarding", "OnboardingCLI"],
            path: "Apps/LockedIn/CLI", swiftSettings: swiftSettings),
        .target(
            name: "CarrierWaveOnboarding", dependencies: ["TourRuntime"], path: "Apps/CarrierWave/Onboarding",
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "carrierwave", dependencies: ["CarrierWaveOnboarding", "OnboardingCLI"],
            path: "Apps/CarrierWave/CLI", swiftSettings: swiftSettings),
        .target(
            name: "GrowthOnboarding", dependencies: ["TourRuntime"], path: "Apps/Growth/Onboarding",
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "growth", dependencies: ["GrowthOnboarding", "OnboardingCLI"], path: "Apps/Growth/CLI",
            swiftSettings: swiftSettings),
        .target(
            name: "MoodTrackerOnboarding", dependencies: ["TourRuntime"], path: "Apps/MoodTracker/Onboarding",
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "moodtracker", dependencies: ["MoodTrackerOnboarding", "OnboardingCLI"],
            path: "Apps/MoodTracker/CLI", swiftSettings: swiftSettings),

        // MARK: Benchmarks (scripts/bench.sh)
        .executableTarget(
            name: "onboarding-bench", dependencies: ["LockedInOnboarding", "TourRuntime"],
            path: "Tests/Benchmarks",
            swiftSettings: swiftSettings),

        // MARK: Tests
        .target(
            name: "TourFixtures", dependencies: ["TourCore"], path: "Tests/TourFixtures",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "TourCoreTests", dependencies: ["TourCore", "TourFixtures"], path: "Tests/TourCoreTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PersistenceTests", dependencies: ["Persistence", "TourRuntime", "TourFixtures"],
            path: "Tests/PersistenceTests", swiftSettings: swiftSettings),
        .testTarget(
            name: "TourRuntimeTests", dependencies: ["TourRuntime", "TourFixtures"],
            path: "Tests/TourRuntimeTests",
            swiftSettings: swiftSettings),
        // The cross-app regression suite: every product's flows on the shared modules.
        .testTarget(
            name: "ProductTests",
            dependencies: [
                "FiniteOnboarding", "LockedInOnboarding", "CarrierWaveOnboarding", "GrowthOnboarding",
                "MoodTrackerOnboarding",
            ],
            path: "Tests/ProductTests", swiftSettings: swiftSettings),
        // Runs the built executables as real processes.
        .testTarget(
            name: "CLITests",
            dependencies: [
                "finite", "lockedin", "carrierwave", "growth", "moodtracker", "LockedInOnboarding",
                "Persistence",
            ],
            path: "Tests/CLITests", swiftSettings: swiftSettings),
    ],
    swiftLanguageModes: [.v6]
)
