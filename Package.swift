// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

/// The products: a folder under Apps/ each, with the flows as data (`<Folder>Onboarding`) and a
/// thin executable. A sixth product is one more line here and a new folder; nothing in Modules/.
let apps: [(folder: String, executable: String)] = [
    ("Finite", "finite"), ("LockedIn", "lockedin"), ("CarrierWave", "carrierwave"), ("Growth", "growth"),
    ("MoodTracker", "moodtracker"),
]

let appTargets: [Target] = apps.flatMap { app -> [Target] in
    [
        .target(
            name: "\(app.folder)Onboarding", dependencies: ["TourRuntime"],
            path: "Apps/\(app.folder)/Onboarding",
            swiftSettings: swiftSettings),
        .executableTarget(
            name: app.executable, dependencies: [.target(name: "\(app.folder)Onboarding"), "OnboardingCLI"],
            path: "Apps/\(app.folder)/CLI", swiftSettings: swiftSettings),
    ]
}

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
    ] + apps.map { .executable(name: $0.executable, targets: [$0.executable]) },
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

        // MARK: Benchmarks (scripts/bench.sh)
        .executableTarget(
            name: "onboarding-bench",
            dependencies: [
                "FiniteOnboarding", "LockedInOnboarding", "CarrierWaveOnboarding", "GrowthOnboarding",
                "MoodTrackerOnboarding", "TourRuntime", .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
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
        // Each product's journeys through its flows, in process.
        .testTarget(
            name: "ProductTests",
            dependencies: [
                "FiniteOnboarding", "LockedInOnboarding", "CarrierWaveOnboarding", "GrowthOnboarding",
                "MoodTrackerOnboarding",
            ],
            path: "Tests/ProductTests", swiftSettings: swiftSettings),
        // The cross-app regression suite: every path through every product's flows on real SQLite
        // files, and golden transcripts of each product's CLI.
        .testTarget(
            name: "CrossAppRegressionTests",
            dependencies: [
                "finite", "lockedin", "carrierwave", "growth", "moodtracker", "FiniteOnboarding",
                "LockedInOnboarding", "CarrierWaveOnboarding", "GrowthOnboarding", "MoodTrackerOnboarding",
                "TourFixtures",
            ],
            path: "Tests/CrossAppRegressionTests", exclude: ["Transcripts"],
            swiftSettings: swiftSettings),
        // Runs the built executables as real processes.
        .testTarget(
            name: "CLITests",
            dependencies: [
                "finite", "lockedin", "carrierwave", "growth", "moodtracker", "LockedInOnboarding",
                "Persistence", "TourFixtures",
            ],
            path: "Tests/CLITests", exclude: ["BadInput", "Releases"], swiftSettings: swiftSettings),
    ] + appTargets,
    swiftLanguageModes: [.v6]
)
