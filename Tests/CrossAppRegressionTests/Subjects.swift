import CarrierWaveOnboarding
import CatalogDocuments
import FiniteOnboarding
import Foundation
import GrowthOnboarding
import LockedInOnboarding
import MoodTrackerOnboarding
import TourCodec
import TourCore
import TourRuntime

/// What the device around a product is like for one exploration state: things a product reads that
/// are not in its database (the network, permission statuses before any request).
struct World: Hashable, Sendable, Codable {
    var offline = false
    var permissionsBefore: [String: String] = [:]
    /// Device facts the app reports (`--context`), such as the accessibility settings.
    var deviceFacts: [String: TourValue] = [:]
}

/// One product as the suite explores and replays it: how to build it on a database file in a world,
/// and the outside moments (launch versions, worlds) its flows depend on.
struct Subject: Sendable, CustomStringConvertible {
    /// The display name failures carry ("LockedIn").
    let name: String
    /// The executable, which is also the transcripts' folder.
    let executable: String
    let make: @Sendable (_ databasePath: String, _ world: World) -> Product
    /// The versions a launch may report (Carrier Wave: fresh install, upgrade, update prompt), in
    /// order: a relaunch reports the installed one or a later one.
    var launchVersions: [String]
    /// A version a relaunch may go back to after an upgrade (a downgrade), if explored.
    var downgradeTo: String? = nil
    /// The worlds exploration starts from (LockedIn: permissions not asked, or already granted).
    var startingWorlds: [World] = [World()]
    /// Whether the network matters (connection attempts, profile writes): explore going offline and back.
    var usesNetwork = false
    /// How deep paths go. Flows with cycles (back, replay, reset, free actions) are cut here; states
    /// already seen are not explored twice.
    var maxDepth: Int
    /// The outside moves one path may take.
    var budget = Budget()
    /// Whether visits and signals are explored.
    var exploresTriggers = true
    /// Which part of a product this exploration is about, when one product is explored in parts.
    var focus: String? = nil
    /// Whether refused moves are also tried on the state's database (the walk with accessibility
    /// settings leaves that to the default walk: the settings change no refusal).
    var checksRefusalsOnDisk = true
    /// Whether every transition is held to the general invariants (`Explorer.check`); the walk
    /// with accessibility settings holds it to those of the settings only.
    var checksInvariants = true
    /// A product rule checked on the domain state after every transition.
    var invariant: (@Sendable ([String: TourValue]) -> String?)? = nil

    var description: String { focus.map { "\(name) (\($0))" } ?? name }

    /// Every registered product (every folder under Apps/, through `registeredProducts`): the tuned
    /// explorations below where a product needs them, the defaults for any other, so a new product
    /// is explored and checked by this suite without a line here.
    static let all: [Subject] = registeredProducts.flatMap {
        (tuned[$0.executable] ?? Subject.defaults(for: $0)).map { $0.exploringContextVariants() }
    }

    /// Products whose exploration needs more than the defaults: deeper paths, several versions,
    /// worlds, parts, or a product rule. (Mood Tracker runs on the defaults.)
    static let tuned: [String: [Subject]] = [
        "finite": [finite], "lockedin": [lockedIn], "carrierwave": carrierWave, "growth": [growth],
    ]

    /// The explorations of each product; a product's coverage is the union of its parts.
    static let products: [ProductExploration] = Dictionary(grouping: all, by: \.name).map {
        ProductExploration(name: $0.key, parts: $0.value)
    }.sorted { $0.name < $1.name }

    static let finite = Subject(
        name: "Finite", executable: "finite", make: { _, _ in FiniteCatalog.product },
        launchVersions: ["1.0"], maxDepth: 12)

    static let lockedIn = Subject(
        name: "LockedIn", executable: "lockedin", make: { _, _ in LockedInCatalog.product },
        launchVersions: ["1.0"],
        startingWorlds: [
            World(), World(permissionsBefore: ["screenTime": "granted", "health": "granted"]),
        ], maxDepth: 10,
        invariant: { domain in
            // The starting bank is granted once: it is 60 minutes or not there, never doubled.
            for key in ["startingBankMinutes", "balanceMinutes"] {
                if let minutes = domain[key], minutes != .int(LockedInCatalog.startingBankMinutes) {
                    return "\(key) is \(minutes), not \(LockedInCatalog.startingBankMinutes)"
                }
            }
            return nil
        })

    /// Carrier Wave in three parts. Its five mini-tours are alike and independent of the intro and
    /// of each other, so one exploration of all of it at once multiplies into millions of states
    /// (each tour at each step of each other one, in each version, online and offline); in parts,
    /// every step and pair is still reached, and the transcripts stack tours over each other.
    static let carrierWave: [Subject] = [
        // The intro and its connection step, online and offline.
        Subject(
            name: "Carrier Wave", executable: "carrierwave", make: makeCarrierWave, launchVersions: ["2.5"],
            usesNetwork: true, maxDepth: 10, exploresTriggers: false, focus: "intro"),
        // Fresh installs and upgrades: the What's New prompts.
        Subject(
            name: "Carrier Wave", executable: "carrierwave", make: makeCarrierWave,
            launchVersions: ["1.9", "2.0", "2.5.1", "2.6"], downgradeTo: "2.0", maxDepth: 9,
            budget: Budget(remaining: ["relaunch": 3, "replay or reset": 1]), exploresTriggers: false,
            focus: "upgrades"),
        // The mini-tours, one visit per path, over the intro or after it.
        Subject(
            name: "Carrier Wave", executable: "carrierwave", make: makeCarrierWave, launchVersions: ["2.5"],
            maxDepth: 7, budget: Budget(remaining: ["relaunch": 2, "trigger": 2]),
            focus: "mini-tours"),
    ]

    static let makeCarrierWave: @Sendable (String, World) -> Product = { _, world in
        CarrierWaveCatalog.product(connector: StubServiceConnector(online: !world.offline))
    }

    static let growth = Subject(
        name: "Growth", executable: "growth",
        make: { _, _ in GrowthCatalog.product }, launchVersions: ["1.0"], maxDepth: 10)
}

extension Subject {
    /// A product's explorations on the defaults. One, with the current version, its visits and
    /// signals; and when its flows' conditions name versions (update prompts), a second part that
    /// launches those versions, one before them all to upgrade from, and the current one, without
    /// visits and signals: in one exploration, every flow at every step in every version
    /// multiplies into hundreds of thousands of states (Carrier Wave's tuned parts split the same way).
    static func defaults(for registration: ProductRegistration) -> [Subject] {
        let base = Subject(registration)
        let versions = launchVersions(of: registration.make(RunEnvironment(databasePath: ":memory:")))
        guard versions.count > 1 else { return [base] }
        var upgrades = base
        upgrades.launchVersions = versions
        upgrades.exploresTriggers = false
        upgrades.budget = Budget(remaining: ["relaunch": 3, "replay or reset": 1, "network": 2])
        upgrades.focus = "upgrades"
        var flows = base
        flows.focus = "flows"
        return [flows, upgrades]
    }

    /// The defaults, from what the product declares: its current version, the network when it
    /// declares an `online` device fact, and a world where its permissions were granted before.
    init(_ registration: ProductRegistration) {
        let product = registration.make(RunEnvironment(databasePath: ":memory:"))
        let permissions = product.catalog.flows.flatMap(\.steps).flatMap(\.gates).compactMap {
            gate -> String? in
            if case .permission(let name) = gate.kind { name.rawValue } else { nil }
        }
        var worlds = [World()]
        if !permissions.isEmpty {
            worlds.append(
                World(
                    permissionsBefore: Dictionary(permissions.map { ($0, "granted") }) { first, _ in first }))
        }
        self.init(
            name: registration.displayName, executable: registration.executable,
            make: { path, world in
                registration.make(RunEnvironment(databasePath: path, offline: world.offline))
            },
            launchVersions: [product.currentVersion], startingWorlds: worlds,
            usesNetwork: product.handler.declarations.context.contains { $0.name == "online" }, maxDepth: 9)
    }
}

extension Subject {
    /// The current version, and the versions the catalog's conditions compare against with a version
    /// older than all of them (a fresh install that a later launch upgrades), oldest first.
    static func launchVersions(of product: Product) -> [String] {
        func versions(in condition: Condition) -> [String] {
            switch condition {
            case .upgradedInto(let version, _), .lastTourOlder(let version, _): [version]
            case .not(let inner): versions(in: inner)
            case .all(let conditions), .any(let conditions): conditions.flatMap(versions(in:))
            default: []
            }
        }
        let flows = product.catalog.flows
        let named = flows.flatMap { flow in
            flow.triggers.flatMap { versions(in: $0.when) }
                + flow.steps.flatMap { versions(in: $0.includedWhen) }
        }
        var all = Set(named + [product.currentVersion])
        if !named.isEmpty { all.insert("0.1") }
        return all.sorted { AppVersion.isOlder($0, than: $1) }
    }
}

extension Subject {
    /// The subject with a starting world for each deciding value of each device fact its
    /// conditions read (``ContextReach``: a flag both ways, a number at each threshold and its
    /// declared bounds), beside the first: a step left out on a fact is reached where the fact
    /// holds, and every path under each value is held to the invariants.
    func exploringContextVariants() -> Subject {
        let product = make(":memory:", World())
        let variables = ContextReach.deviceVariables(
            of: product.catalog, declarations: product.handler.vocabulary)
        guard let base = startingWorlds.first else { return self }
        var subject = self
        for variable in variables {
            for value in variable.values.dropFirst() {
                var world = base
                world.deviceFacts[variable.key] = value
                subject.startingWorlds.append(world)
            }
        }
        return subject
    }

    /// The device facts the starting worlds report, as `key=value` (what the coverage line shows).
    var contextVariants: [String] {
        startingWorlds.flatMap { world in
            world.deviceFacts.sorted { $0.key < $1.key }.map { fact in
                "\(fact.key)=\(fact.value.boolValue.map { $0 ? "true" : "false" } ?? fact.value.displayText)"
            }
        }
    }
}

/// One product's explorations, as one test case.
struct ProductExploration: Sendable, CustomStringConvertible {
    var name: String
    var parts: [Subject]
    var description: String { name }
}
