// swift-tools-version:6.1
import Foundation
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

/// The products: every folder under Apps/, with the flows as data (`Apps/<Folder>/Onboarding`,
/// module `<Folder>Onboarding`, which declares `registration`) and a one-line executable
/// (`Apps/<Folder>/CLI`, named as the folder in lower case). A sixth product is a new folder:
/// nothing here, in Modules/ or in the tests changes.
let apps: [(folder: String, executable: String)] = {
    let root = URL(fileURLWithPath: Context.packageDirectory).appendingPathComponent("Apps")
    let folders = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
    return folders.sorted().filter { folder in
        var isFolder: ObjCBool = false
        let onboarding = root.appendingPathComponent(folder).appendingPathComponent("Onboarding").path
        return FileManager.default.fileExists(atPath: onboarding, isDirectory: &isFolder)
            && isFolder.boolValue
    }.map { ($0, $0.lowercased()) }
}()
let appModules = apps.map { Target.Dependency.target(name: "\($0.folder)Onboarding") }
let appExecutables = apps.map { Target.Dependency.target(name: $0.executable) }

let appTargets: [Target] = apps.flatMap { app -> [Target] in
    // The catalog's release history (`releases/*.json`), its translation tables (`strings/`) and
    // its trusted publication keys (`publication-keys/`) are compiled in by CatalogReleasesPlugin.
    let folder = URL(fileURLWithPath: Context.packageDirectory).appendingPathComponent(
        "Apps/\(app.folder)/Onboarding")
    let compiledIn = ["releases", "strings", "publication-keys"].filter {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path)
    }
    return [
        .target(
            // What a product's flows may import: the engine's types, the runtime's product API and
            // the catalog documents (a product's translation tables are read as documents);
            // storage only through the runtime (no `@_exported` in Modules/ makes that hold).
            name: "\(app.folder)Onboarding",
            dependencies: ["TourCodec", "TourCore", "CatalogDocuments", "TourRuntime"],
            path: "Apps/\(app.folder)/Onboarding",
            exclude: compiledIn,
            swiftSettings: swiftSettings, plugins: ["CatalogReleasesPlugin"]),
        .executableTarget(
            name: app.executable, dependencies: [.target(name: "\(app.folder)Onboarding"), "OnboardingCLI"],
            path: "Apps/\(app.folder)/CLI", swiftSettings: swiftSettings),
    ]
}

let package = Package(
    name: "Onboarding",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "TourCodec", targets: ["TourCodec"]),
        .library(name: "TourCore", targets: ["TourCore"]),
        .library(name: "CatalogDocuments", targets: ["CatalogDocuments"]),
        .library(name: "Persistence", targets: ["Persistence"]),
        .library(name: "Haptics", targets: ["Haptics"]),
        .library(name: "Permissions", targets: ["Permissions"]),
        .library(name: "TourRuntime", targets: ["TourRuntime"]),
        .library(name: "OnboardingCLI", targets: ["OnboardingCLI"]),
        .library(name: "InsightsPages", targets: ["InsightsPages"]),
    ] + apps.map { .executable(name: $0.executable, targets: [$0.executable]) },
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        // The account server (Modules/Server*, Modules/OnboardingServer) and its load generator only:
        // nothing the iOS apps embed depends on these.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        // The request context's typed identity and the authenticator middleware (ServerControlPlane,
        // ServerDashboard): its HummingbirdAuth product needs only Hummingbird and swift-extras-base64.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", exact: "2.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        // Signatures of catalog publications (Curve25519.Signing), made by publishers and checked on
        // every device: AccountSync, so the products link it too. Imports FoundationEssentials only.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        // The push load generator's own connections (Tests/Benchmarks/PushClient.swift); already
        // built for Hummingbird and postgres-nio.
        .package(url: "https://github.com/apple/swift-nio", "2.101.2"..<"3.0.0"),
        // Identity providers' JWTs (RS256/ES256 against a JWKS): the server only.
        .package(url: "https://github.com/vapor/jwt-kit", exact: "5.8.0"),
        // The server's numbers (`/metrics`): the metrics API Hummingbird and postgres-nio already
        // report through, and its Prometheus text exposition. The server only.
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        // HTTP's field names and statuses as Hummingbird's requests carry them: the server names
        // them itself (already built for Hummingbird).
        .package(url: "https://github.com/apple/swift-http-types.git", "1.8.0"..<"2.0.0"),
        // HTTP parts in a connection's pipeline as Hummingbird's server passes them (the client
        // connection cap's rotation, ClientConnections.swift); already built for Hummingbird.
        .package(url: "https://github.com/apple/swift-nio-extras", exact: "1.35.2"),
    ],
    targets: [
        // MARK: Shared modules
        // The JSON-shaped value and its one codec: every stored and wire form is written through it,
        // on devices and on the server alike.
        .target(name: "TourCodec", path: "Modules/TourCodec", swiftSettings: swiftSettings),
        // The versioned-schema shape the device's SQLite and the server's PostgreSQL share.
        .target(name: "SchemaMigrations", path: "Modules/SchemaMigrations", swiftSettings: swiftSettings),
        .target(
            name: "TourCore", dependencies: ["TourCodec", .crypto],
            path: "Modules/TourCore",
            swiftSettings: swiftSettings),
        // The catalog as a document: canonical form, fingerprint, checks, diff, release history.
        .target(
            name: "CatalogDocuments", dependencies: ["TourCodec", "TourCore"],
            path: "Modules/CatalogDocuments",
            swiftSettings: swiftSettings),
        .target(
            name: "Haptics", dependencies: ["TourCore"], path: "Modules/Haptics", swiftSettings: swiftSettings
        ),
        .target(
            name: "Permissions", dependencies: ["TourCore"], path: "Modules/Permissions",
            swiftSettings: swiftSettings),
        // The system's SQLite (libsqlite3-dev on Debian, the SDK's on Apple platforms).
        .systemLibrary(
            name: "CSQLite", path: "Modules/CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .target(
            name: "Persistence", dependencies: ["TourCodec", "TourCore", "SchemaMigrations", "CSQLite"],
            path: "Modules/Persistence", swiftSettings: swiftSettings),
        .target(
            name: "TourRuntime",
            dependencies: [
                "TourCodec", "TourCore", "CatalogDocuments", "Persistence", "Haptics", "Permissions",
                "AccountSync",
            ],
            path: "Modules/TourRuntime", swiftSettings: swiftSettings),
        .target(
            name: "OnboardingCLI",
            dependencies: [
                "TourCodec", "TourCore", "TourRuntime", "CatalogDocuments", "AccountSync", "AccountSyncHTTP",
                "InsightsPages", "Haptics", "Permissions",
                .argumentParser,
            ],
            path: "Modules/OnboardingCLI", swiftSettings: swiftSettings),
        // The insights pages (figures, SVG charts with their tables, CSV), drawn the same by the
        // server's dashboard and a device's `report --html`.
        .target(
            name: "InsightsPages", dependencies: ["TourCore"],
            path: "Modules/InsightsPages", swiftSettings: swiftSettings),

        // MARK: Account sync: the merge rule and wire format (pure), the device's HTTP client
        .target(
            name: "AccountSync",
            dependencies: ["TourCodec", "TourCore", .crypto],
            path: "Modules/AccountSync",
            swiftSettings: swiftSettings),
        .target(
            name: "AccountSyncHTTP", dependencies: ["TourCodec", "TourCore", "AccountSync", "CCurlShim"],
            path: "Modules/AccountSyncHTTP",
            swiftSettings: swiftSettings),
        // Calls libcurl's variadic setopt/getinfo through their variadic C type (Swift cannot).
        .target(name: "CCurlShim", path: "Modules/CCurlShim"),

        // MARK: The account server (Hummingbird over PostgreSQL)
        // The server's PostgreSQL as requests use it: reads with a deadline on connections that
        // cannot write, writes bounded where they run, failures with their cause.
        .target(
            name: "ServerDatabase",
            dependencies: [
                .postgresNIO, .serviceLifecycle, .logging, .metrics,
            ],
            path: "Modules/ServerDatabase", swiftSettings: swiftSettings),
        // The insights aggregates on the server's PostgreSQL: their schema, their counting (the
        // catch-up job) and their reads.
        .target(
            name: "ServerInsights",
            dependencies: [
                "TourCodec", "TourCore", "InsightsPages", "ServerDatabase",
                .postgresNIO, .serviceLifecycle, .logging, .metrics,
            ],
            path: "Modules/ServerInsights", swiftSettings: swiftSettings),
        // The account server's credentials: token signing and its key ring, an identity
        // provider's JWTs and keys (Docs/Server.md, "Tokens and secrets").
        .target(
            name: "ServerTokens",
            dependencies: [
                "TourCodec", "ServerDatabase",
                .crypto, .jwtKit, .asyncHTTPClient, .logging, .nioCore, .nioHTTP1,
            ],
            path: "Modules/ServerTokens", swiftSettings: swiftSettings),
        // The push queue's lifecycle as a value (no I/O, no clock, no threads): PushBatcher in
        // ServerSyncAPI is the thin shell that performs its actions.
        .target(name: "ServerPushQueue", path: "Modules/ServerPushQueue", swiftSettings: swiftSettings),
        // What every feature of the server shares: the API's answers and refusals, idempotent writes,
        // the request log and metrics, the readiness probe, the client's address, the insights' freshness.
        .target(
            name: "ServerKit",
            dependencies: [
                "AccountSync", "InsightsPages", "ServerDatabase", "ServerInsights", "ServerTokens",
                "TourCodec", "TourCore",
                .hummingbird, .httpTypes, .nioCore, .postgresNIO, .serviceLifecycle, .logging, .crypto,
                .metrics, .coreMetrics, .prometheus,
            ],
            path: "Modules/ServerKit", swiftSettings: swiftSettings),
        // People, roles, sessions, credentials, publication keys and the audit trail; signing in to the
        // dashboard (a credential or the identity provider); the request contexts and the middleware
        // that authenticates a caller and requires a role (SyncAPI, Publishing and the dashboard put
        // their routes behind it).
        .target(
            name: "ServerControlPlane",
            dependencies: [
                "AccountSync", "ServerDatabase", "ServerKit", "ServerTokens", "TourCodec",
                .hummingbird, .hummingbirdAuth, .httpTypes, .nioCore, .postgresNIO, .logging, .crypto,
                .jwtKit, .asyncHTTPClient,
            ],
            path: "Modules/ServerControlPlane", swiftSettings: swiftSettings),
        // Catalogs: the store, drafts, rollouts and their guard, the tracking plan and its held facts,
        // and the `/v1/apps/{app}/catalogs` routes.
        .target(
            name: "ServerPublishing",
            dependencies: [
                "AccountSync", "CatalogDocuments", "ServerControlPlane", "ServerDatabase", "ServerInsights",
                "ServerKit", "TourCodec", "TourCore",
                .hummingbird, .nioCore, .postgresNIO, .serviceLifecycle, .logging, .crypto,
            ],
            path: "Modules/ServerPublishing", swiftSettings: swiftSettings),
        // The devices' API: push (the queue's shell), pull, installs, device tokens, the budget
        // exchange, sign-out, export, erasure and the flow archive; an app's report.
        .target(
            name: "ServerSyncAPI",
            dependencies: [
                "AccountSync", "CatalogDocuments", "ServerControlPlane", "ServerDatabase", "ServerInsights",
                "ServerKit", "ServerPublishing", "ServerPushQueue", "ServerTokens", "TourCodec", "TourCore",
                .hummingbird, .httpTypes, .postgresNIO, .serviceLifecycle, .logging, .metrics, .crypto,
            ],
            path: "Modules/ServerSyncAPI", swiftSettings: swiftSettings),
        // The server assembled from its feature modules: configuration, the pools, the services and
        // their watchdog, the schema's migrations, failover, and the router every feature adds to.
        .target(
            name: "OnboardingServer",
            dependencies: [
                "AccountSync", "SchemaMigrations", "ServerControlPlane", "ServerDatabase", "ServerInsights",
                "ServerKit", "ServerPublishing", "ServerPushQueue", "ServerSyncAPI", "ServerTokens",
                .hummingbird, .httpTypes, .nioCore, .nioHTTPTypes, .postgresNIO, .serviceLifecycle, .logging,
                .asyncHTTPClient, .prometheus,
            ],
            path: "Modules/OnboardingServer", swiftSettings: swiftSettings),
        // The dashboard and its studio (/dashboard): a feature the executable adds to the server.
        .target(
            name: "ServerDashboard",
            dependencies: [
                "OnboardingServer", "ServerKit", "ServerControlPlane", "ServerPublishing", "ServerSyncAPI",
                "TourCodec", "TourCore", "AccountSync", "InsightsPages", "CatalogDocuments",
                "ServerInsights", "ServerDatabase",
                .hummingbird, .hummingbirdAuth, .httpTypes, .nioCore, .postgresNIO, .logging, .crypto,
            ],
            path: "Modules/ServerDashboard", swiftSettings: swiftSettings),
        .executableTarget(
            name: "onboarding-server",
            dependencies: [
                "OnboardingServer", "ServerKit", "ServerControlPlane", "ServerPublishing", "ServerSyncAPI",
                "ServerDashboard", "ServerTokens", "ServerInsights", "ServerDatabase", "AccountSync",
                "InsightsPages", "TourCore", "TourCodec", "CatalogDocuments",
                .argumentParser, .postgresNIO, .asyncHTTPClient, .nioCore, .nioHTTP1, .logging,
            ],
            path: "Modules/OnboardingServerMain", swiftSettings: swiftSettings),

        // MARK: Benchmarks (scripts/bench)
        .executableTarget(
            name: "onboarding-bench",
            dependencies: appModules + [
                "TourRuntime", "CatalogDocuments", "OnboardingServer", "ServerKit", "ServerControlPlane",
                "ServerPublishing", "ServerSyncAPI", "ServerTokens", "ServerInsights", "ServerDatabase",
                "CSQLite", "Persistence", "TourCodec", "TourCore", "AccountSync", "TourFixtures",
                .asyncHTTPClient, .logging, .nioConcurrencyHelpers, .postgresNIO, .nioCore, .nioPosix,
                .nioHTTP1,
            ],
            path: "Tests/Benchmarks",
            swiftSettings: swiftSettings),

        // MARK: Tests
        .target(
            name: "TourFixtures", dependencies: ["TourCodec", "TourCore", "CatalogDocuments"],
            path: "Tests/TourFixtures",
            swiftSettings: swiftSettings),
        // Swift Testing traits that run tests on threads of their own: apart from TourFixtures,
        // which the benchmarks link and which so must not import Testing.
        .target(name: "TestThreads", path: "Tests/TestThreads", swiftSettings: swiftSettings),
        .testTarget(
            name: "TourCoreTests",
            dependencies: ["TourCodec", "TourCore", "CatalogDocuments", "TourFixtures", .crypto],
            path: "Tests/TourCoreTests",
            exclude: ["StoredForms"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PersistenceTests",
            dependencies: [
                "Persistence", "SchemaMigrations", "TourRuntime", "TourFixtures", "CSQLite", "TourCodec",
                "TourCore", "Permissions",
            ],
            path: "Tests/PersistenceTests", swiftSettings: swiftSettings),
        .testTarget(
            name: "TourRuntimeTests",
            dependencies: [
                "TourCodec", "TourCore", "TourRuntime", "CatalogDocuments", "AccountSync", "TourFixtures",
                "TestThreads", "CSQLite", "Persistence", "Haptics", "Permissions",
            ],
            path: "Tests/TourRuntimeTests",
            swiftSettings: swiftSettings),
        // Each product's journeys through its flows, in process.
        .testTarget(
            name: "ProductTests",
            dependencies: appModules + [
                "CatalogDocuments", "TourFixtures", "TourCodec", "TourCore", "TourRuntime", "Persistence",
                "Haptics", "Permissions",
            ],
            path: "Tests/ProductTests",
            swiftSettings: swiftSettings,
            plugins: ["ProductRegistryPlugin"]),
        // The cross-app regression suite: every path through every product's flows on real SQLite
        // files, and golden transcripts of each product's CLI.
        .testTarget(
            name: "CrossAppRegressionTests",
            dependencies: appExecutables + appModules + [
                "CatalogDocuments", "TourFixtures", "TestThreads", "TourCodec", "TourCore", "TourRuntime",
                "Persistence", "Permissions",
            ],
            path: "Tests/CrossAppRegressionTests",
            swiftSettings: swiftSettings, plugins: ["ProductRegistryPlugin"]),
        // Runs the built executables as real processes.
        .testTarget(
            name: "CLITests",
            dependencies: appExecutables + appModules + [
                "CatalogDocuments", "Persistence", "TourFixtures", "TestThreads", "TourCodec", "TourCore",
                "TourRuntime", "OnboardingCLI", .argumentParser,
            ],
            path: "Tests/CLITests", exclude: ["BadInput", "Releases"], swiftSettings: swiftSettings,
            plugins: ["ProductRegistryPlugin"]),

        // The account server as a real process over a real PostgreSQL (scripts/dev-postgres, or
        // $ONBOARDING_TEST_DATABASE_URL as .ci/run sets it), with devices as the products' executables.
        .testTarget(
            name: "ServerTests",
            dependencies: appExecutables + appModules + [
                "onboarding-server", "OnboardingServer", "ServerKit", "ServerControlPlane",
                "ServerPublishing", "ServerSyncAPI", "ServerDashboard", "ServerTokens", "ServerPushQueue",
                "ServerInsights", "SchemaMigrations", "ServerDatabase", "AccountSyncHTTP", "CatalogDocuments",
                "InsightsPages", "TourCodec", "TourCore", "TourRuntime", "TourFixtures",
                "TestThreads", .httpTypes, .logging, .hummingbird, .hummingbirdTesting, .postgresNIO, .jwtKit,
                .cryptoExtras, .crypto, "AccountSync", .asyncHTTPClient, .nioCore, .nioEmbedded,
                .nioHTTPTypes,
                .serviceLifecycle,
            ],
            path: "Tests/ServerTests", swiftSettings: swiftSettings, plugins: ["ProductRegistryPlugin"]),

        // MARK: The product registry of the test targets
        // Writes `registeredProducts`, one `<Folder>Onboarding.registration` per product module the
        // target depends on, so the suites cover every folder under Apps/ without a list of their own.
        .plugin(
            name: "ProductRegistryPlugin", capability: .buildTool(), dependencies: ["product-registry"],
            path: "Tests/ProductRegistryPlugin"),
        .executableTarget(
            name: "product-registry", path: "Tests/ProductRegistry", swiftSettings: swiftSettings),

        // MARK: Each product's catalog release history, compiled into its module
        .plugin(
            name: "CatalogReleasesPlugin", capability: .buildTool(), dependencies: ["catalog-releases"],
            path: "Modules/CatalogReleasesPlugin"),
        .executableTarget(
            name: "catalog-releases", path: "Modules/CatalogReleasesTool", swiftSettings: swiftSettings),
    ] + appTargets,
    swiftLanguageModes: [.v6]
)

/// The libraries the targets depend on, each named once.
extension Target.Dependency {
    static let argumentParser: Self = .product(name: "ArgumentParser", package: "swift-argument-parser")
    static let asyncHTTPClient: Self = .product(name: "AsyncHTTPClient", package: "async-http-client")
    static let coreMetrics: Self = .product(name: "CoreMetrics", package: "swift-metrics")
    static let crypto: Self = .product(name: "Crypto", package: "swift-crypto")
    static let httpTypes: Self = .product(name: "HTTPTypes", package: "swift-http-types")
    static let hummingbird: Self = .product(name: "Hummingbird", package: "hummingbird")
    static let hummingbirdAuth: Self = .product(name: "HummingbirdAuth", package: "hummingbird-auth")
    static let hummingbirdTesting: Self = .product(name: "HummingbirdTesting", package: "hummingbird")
    static let jwtKit: Self = .product(name: "JWTKit", package: "jwt-kit")
    static let logging: Self = .product(name: "Logging", package: "swift-log")
    static let metrics: Self = .product(name: "Metrics", package: "swift-metrics")
    static let nioConcurrencyHelpers: Self = .product(name: "NIOConcurrencyHelpers", package: "swift-nio")
    static let nioCore: Self = .product(name: "NIOCore", package: "swift-nio")
    static let nioEmbedded: Self = .product(name: "NIOEmbedded", package: "swift-nio")
    static let nioHTTP1: Self = .product(name: "NIOHTTP1", package: "swift-nio")
    static let nioHTTPTypes: Self = .product(name: "NIOHTTPTypes", package: "swift-nio-extras")
    static let nioPosix: Self = .product(name: "NIOPosix", package: "swift-nio")
    static let postgresNIO: Self = .product(name: "PostgresNIO", package: "postgres-nio")
    static let prometheus: Self = .product(name: "Prometheus", package: "swift-prometheus")
    static let serviceLifecycle: Self = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
    static let cryptoExtras: Self = .product(name: "_CryptoExtras", package: "swift-crypto")
}
