import CatalogDocuments
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One product as everything outside its folder sees it: its executable, its name, and how to
/// build it for a run. Each folder under `Apps/` declares exactly one, as the public constant
/// `registration` of its `<Folder>Onboarding` module; the executable, the benchmarks and the
/// cross-app regression suite all start from it, so a sixth product is a new folder and nothing
/// else (the test targets find it through `Tests/ProductRegistryPlugin`).
public struct ProductRegistration: Sendable {
    /// The executable's name: `finite`, `lockedin`, ...
    public var executable: String
    /// The name people read: "Carrier Wave".
    public var displayName: String
    /// Builds the product for one run, from what the run knows about its device.
    public var make: @Sendable (RunEnvironment) -> Product
    /// The catalog document of every version the product shipped (its `releases/` folder, compiled
    /// in as `CatalogReleases.recorded`): `check` and the tests hold today's catalog against them.
    public var releases: [RecordedCatalog]
    /// The files of its `publication-keys/` folder (compiled in as `CatalogReleases.publicationKeys`):
    /// the keys whose signatures its devices accept on a published catalog (``TrustedPublicationKeys``).
    public var publicationKeys: [RecordedCatalog]
    /// The app's enrollment key (Docs/Server.md, "Installs"): public, compiled in, it lets an
    /// install without sign-in enroll with the account server as a subject of its own. Nil: the
    /// product syncs only with an account's token.
    public var enrollmentKey: String?

    public init(
        executable: String, displayName: String, releases: [RecordedCatalog],
        publicationKeys: [RecordedCatalog] = [],
        enrollmentKey: String? = nil, make: @escaping @Sendable (RunEnvironment) -> Product
    ) {
        self.executable = executable
        self.displayName = displayName
        self.releases = releases
        self.publicationKeys = publicationKeys
        self.enrollmentKey = enrollmentKey
        self.make = make
    }
}

extension Product {
    /// Every problem of the catalog: its coherence against the handler's vocabulary, then its
    /// release history (``CatalogHistory``) against `releases`.
    public func problems(releases: [RecordedCatalog]) -> [CatalogProblem] {
        problems + CatalogHistory(releases, app: catalog.app).problems(today: document)
    }
}

/// What one run (a CLI process, an exploration, an app session) tells the product about its device.
public struct RunEnvironment: Sendable {
    /// The database file (or ":memory:"); stubs of remote services keep their files beside it.
    public var databasePath: String
    /// `--offline`: stubs of network services answer as if there were no network.
    public var offline: Bool
    public var user: String
    /// `--answer GATE=STATUS` for the product's request gates: what a stubbed service answers
    /// (Carrier Wave's `connection=denied`: the credentials are rejected).
    public var requestAnswers: [String: GateStatus]

    public init(
        databasePath: String, offline: Bool = false, user: String = "default",
        requestAnswers: [String: GateStatus] = [:]
    ) {
        self.databasePath = databasePath
        self.offline = offline
        self.user = user
        self.requestAnswers = requestAnswers
    }
}
