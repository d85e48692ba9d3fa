import Foundation
import Testing

/// Who may import whom, read from the sources: no module re-exports another (`@_exported`), so a
/// product's flows reach storage only through the runtime, and the engine imports nothing of ours.
@Suite("Module layering")
struct LayeringTests {
    static func swiftFiles(under folder: String) -> [String] {
        let root = GrammarTests.packageRoot + "/" + folder
        let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".swift") }.map { root + "/" + $0 }
    }

    static func imports(of file: String) -> [String] {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
            guard let index = words.firstIndex(of: "import"), index + 1 < words.count else { return nil }
            guard words[..<index].allSatisfy({ $0.hasPrefix("@") }) else { return nil }
            return String(words[index + 1])
        }
    }

    @Test func noModuleReExportsAnother() {
        let reexports = Self.swiftFiles(under: "Modules").filter {
            ((try? String(contentsOfFile: $0, encoding: .utf8)) ?? "").contains("@_exported")
        }
        #expect(reexports.isEmpty, "\(reexports)")
    }

    /// What ships or is built in release (the modules, the products, the benchmarks and the test
    /// fixtures the benchmarks link) imports no Swift Testing: a release build with the static
    /// standard library has no Testing module, and CI builds the benchmarks so. The traits that
    /// need it are `TestThreads`, which only test targets link.
    @Test func nothingBuiltInReleaseImportsTesting() {
        let folders = ["Modules", "Apps", "Tests/Benchmarks", "Tests/TourFixtures"]
        for folder in folders {
            let files = Self.swiftFiles(under: folder)
            #expect(!files.isEmpty, "\(folder) has no Swift files")
            for file in files where Self.imports(of: file).contains("Testing") {
                Issue.record("\(file) imports Testing")
            }
        }
    }

    @Test func aProductsFlowsAndCLIDoNotReachStorageOrTheServer() {
        let files = Self.swiftFiles(under: "Apps")
        #expect(!files.isEmpty)
        for file in files {
            let forbidden = Self.imports(of: file).filter {
                ["Persistence", "CSQLite", "OnboardingServer", "AccountSyncHTTP"].contains($0)
            }
            #expect(forbidden.isEmpty, "\(file) imports \(forbidden)")
        }
    }

    /// The CLI reads storage only through the runtime's `DeviceStore` (the journal, a user's stored
    /// state, the forecast's copy of another file).
    @Test func theCLIReachesStorageOnlyThroughTheRuntime() {
        let files = Self.swiftFiles(under: "Modules/OnboardingCLI")
        #expect(!files.isEmpty)
        for file in files {
            let forbidden = Self.imports(of: file).filter { ["Persistence", "CSQLite"].contains($0) }
            #expect(forbidden.isEmpty, "\(file) imports \(forbidden)")
            let code = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            #expect(!code.contains("OnboardingDatabase"), "\(file) names OnboardingDatabase")
        }
    }

    /// The engine is pure: of ours it imports the codec alone, and of others swift-crypto, for
    /// SHA-256 (a catalog's fingerprint, the rollout's buckets).
    @Test func theEngineImportsOnlyTheCodecOfOurs() {
        let system: Set<String> = ["Foundation", "FoundationEssentials", "Glibc", "Musl", "Darwin"]
        for file in Self.swiftFiles(under: "Modules/TourCore") {
            let other = Self.imports(of: file).filter {
                !system.contains($0) && !["TourCodec", "Crypto"].contains($0)
            }
            #expect(other.isEmpty, "\(file) imports \(other)")
        }
        // The codec is the bottom layer: it imports nothing of ours.
        let codecFiles = Self.swiftFiles(under: "Modules/TourCodec")
        #expect(!codecFiles.isEmpty)
        for file in codecFiles {
            let other = Self.imports(of: file).filter { !system.contains($0) }
            #expect(other.isEmpty, "\(file) imports \(other)")
        }
    }

    /// The catalog toolchain builds on the engine, never the reverse (the engine test above holds
    /// that TourCore imports only the codec).
    /// The server is composed from the top: its assembly names no dashboard (the executable adds
    /// it), each feature module knows only the layers below it, the credentials and the database
    /// know no server, and the push queue's machine imports nothing at all (it does no I/O).
    static let serverFeatures: Set<String> = [
        "ServerKit", "ServerControlPlane", "ServerPublishing", "ServerSyncAPI", "OnboardingServer",
        "ServerDashboard",
    ]

    @Test func theServersCoreNamesNoFeatureAndItsPartsKnowNoServer() {
        let rules: [(folder: String, forbidden: Set<String>)] = [
            ("Modules/OnboardingServer", ["ServerDashboard"]),
            // The features in layers, each knowing only those below it: ServerKit (what every
            // feature shares), ServerControlPlane (people, keys, audit and the middleware that
            // authenticates and authorises), then Publishing, then SyncAPI; the assembly
            // (OnboardingServer) above them all, and the dashboard above it.
            ("Modules/ServerKit", Self.serverFeatures),
            ("Modules/ServerControlPlane", Self.serverFeatures.subtracting(["ServerKit"])),
            ("Modules/ServerPublishing", ["ServerSyncAPI", "OnboardingServer", "ServerDashboard"]),
            ("Modules/ServerSyncAPI", ["OnboardingServer", "ServerDashboard"]),
            ("Modules/ServerTokens", Self.serverFeatures.union(["Hummingbird"])),
            ("Modules/ServerDatabase", Self.serverFeatures.union(["ServerTokens", "Hummingbird"])),
        ]
        for (folder, forbidden) in rules {
            let files = Self.swiftFiles(under: folder)
            #expect(!files.isEmpty, "\(folder)")
            for file in files {
                let found = Self.imports(of: file).filter { forbidden.contains($0) }
                #expect(found.isEmpty, "\(file) imports \(found)")
            }
        }
        let queue = Self.swiftFiles(under: "Modules/ServerPushQueue")
        #expect(!queue.isEmpty)
        for file in queue {
            #expect(Self.imports(of: file).isEmpty, "\(file) imports \(Self.imports(of: file))")
        }
    }

    /// The API's controllers (`SyncRoutes`, `CatalogRoutes`, `ControlPlaneRoutes`) and the
    /// dashboard (every file of `ServerDashboard`) are given repositories, protocols that say what
    /// their routes may ask of storage (each module's Repositories.swift), never a store: they make
    /// none, hold none, reach none through the control plane they authenticate with or through
    /// another store, and run no statement of their own.
    @Test func theControllersHoldRepositoriesNotStores() throws {
        let controllers =
            Self.swiftFiles(under: "Modules/ServerSyncAPI").filter {
                URL(fileURLWithPath: $0).lastPathComponent.hasPrefix("SyncRoutes")
            }
            + Self.swiftFiles(under: "Modules/ServerPublishing").filter {
                $0.hasSuffix("/CatalogRoutes.swift")
            }
            + Self.swiftFiles(under: "Modules/ServerControlPlane").filter {
                $0.hasSuffix("/ControlPlaneRoutes.swift")
            }
            + Self.swiftFiles(under: "Modules/ServerDashboard")
        #expect(controllers.count >= 26, "\(controllers)")
        let stores =
            "(AccountStore|CatalogStore|CatalogDrafts|EnrollmentStore|FlowArchive|GuardedRollouts|PeopleStore"
            + "|PublicationKeyStore|AuditLog|DashboardSessions)"
        let forbidden = [
            try Regex("\\b\(stores)\\s*\\("),  // a store made
            try Regex(":\\s*\\[?\(stores)\\b(?!\\.)"),  // a property, argument or variable of a store's type
            // a statement of its own
            try Regex("PostgresClient|PostgresConnection|connection\\.query\\(|client\\.query\\("),
            try Regex("\\bstore\\.|parts\\.store\\b"),  // a store reached through another
            try Regex("controlPlane\\.(people|keys|audit|sessions)\\b"),  // a store through the control plane
        ]
        for file in controllers {
            let code = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            for line in code {
                for pattern in forbidden where line.contains(pattern) {
                    let name = URL(fileURLWithPath: file).lastPathComponent
                    Issue.record("\(name): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
    }

    @Test func theCatalogModuleImportsOnlyTheEngineAndTheCodec() {
        let system: Set<String> = ["Foundation", "FoundationEssentials", "Glibc", "Musl", "Darwin"]
        let files = Self.swiftFiles(under: "Modules/CatalogDocuments")
        #expect(!files.isEmpty)
        for file in files {
            let other = Self.imports(of: file).filter {
                !system.contains($0) && !["TourCodec", "TourCore"].contains($0)
            }
            #expect(other.isEmpty, "\(file) imports \(other)")
        }
    }

    /// The insights aggregates sit beside the sync API, not inside it: they never reach the
    /// server's routes, tokens or stores.
    @Test func theInsightsModuleDoesNotReachTheSyncAPI() {
        let files = Self.swiftFiles(under: "Modules/ServerInsights")
        #expect(!files.isEmpty)
        for file in files {
            let forbidden = Self.imports(of: file).filter {
                Self.serverFeatures.union(["AccountSync", "Hummingbird"]).contains($0)
            }
            #expect(forbidden.isEmpty, "\(file) imports \(forbidden)")
        }
    }

    /// The schema's shape is shared by the device and the server, so it depends on neither.
    @Test func theSchemaShapeImportsNothingOfOurs() {
        let system: Set<String> = ["Foundation", "FoundationEssentials", "Glibc", "Musl", "Darwin"]
        let files = Self.swiftFiles(under: "Modules/SchemaMigrations")
        #expect(!files.isEmpty)
        for file in files {
            let other = Self.imports(of: file).filter { !system.contains($0) }
            #expect(other.isEmpty, "\(file) imports \(other)")
        }
        for side in ["Modules/Persistence/Schema.swift", "Modules/OnboardingServer/PostgresSchema.swift"] {
            #expect(
                Self.imports(of: GrammarTests.packageRoot + "/" + side).contains("SchemaMigrations"),
                "\(side)")
        }
    }

    /// One codec on both sides: nothing in Modules/ reads or writes JSON with Foundation's coders;
    /// every stored, wire and printed form goes through TourCodec. The one line allowed reads an
    /// identity provider's JWKS into jwt-kit's own `Codable` type (whose JWT payloads jwt-kit also
    /// decodes itself).
    @Test func nothingButTheCodecWritesOrReadsJSON() {
        let allowed = ["let set = try JSONDecoder().decode(JWKS.self, from: Data(jwks.utf8))"]
        let files = Self.swiftFiles(under: "Modules")
        #expect(files.count > 50)
        for file in files {
            let lines = ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n")
            for line in lines {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"), !allowed.contains(code) else { continue }
                for coder in ["JSONEncoder(", "JSONDecoder(", "JSONSerialization"] {
                    #expect(!code.contains(coder), "\(file): \(code)")
                }
            }
        }
    }
}
