import CatalogDocuments
import Foundation
import Persistence
import Testing
import TourCore
import TourRuntime

/// Every path through every flow of every product, on real SQLite files: every reachable state,
/// every move at it, the invariants on every transition, and coverage of every step and every
/// (step, action) pair the definitions allow.
@Suite("Every path through every flow")
struct ExplorationTests {
    @Test(arguments: Subject.products)
    func explore(_ product: ProductExploration) async throws {
        var reached: Set<String> = []
        var taken: Set<String> = []
        var defined: (steps: [String], pairs: [String]) = ([], [])
        // A product's parts are independent explorations: they run side by side.
        let reports = try await withThrowingTaskGroup(of: ExplorationReport.self) { group in
            for part in product.parts {
                group.addTask {
                    let clock = ContinuousClock()
                    let started = clock.now
                    let report = try await Explorer(part).run()
                    print("coverage · \(report.summary) · \(clock.now - started)")
                    return report
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for report in reports {
            for violation in report.violations { Issue.record("\(violation)") }
            reached.formUnion(report.stepsReached)
            taken.formUnion(report.pairsAccepted)
            defined = (report.definedSteps, report.definedPairs)
        }
        let unreached = defined.steps.filter { !reached.contains($0) }
        let untaken = defined.pairs.filter { !taken.contains($0) }
        let variants = product.parts.flatMap(\.contextVariants)
        if !variants.isEmpty {
            print(
                """
                coverage · \(product.name) context \
                variants: \(Set(variants).sorted().joined(separator: ", "))
                """
            )
        }
        print(
            """
            coverage · \(product.name) in all: \
            steps \(defined.steps.count - unreached.count)/\(defined.steps.count), \
            (step, action) pairs \(defined.pairs.count - untaken.count)/\(defined.pairs.count)
            """
        )
        #expect(
            unreached.isEmpty, "\(product.name): steps no path reaches: \(unreached.joined(separator: ", "))")
        #expect(
            untaken.isEmpty,
            "\(product.name): (step, action) pairs no path takes: \(untaken.joined(separator: ", "))")
    }
}

/// A product whose step is left out on a device fact (a watch paired): the explorer walks each
/// deciding value of the facts its conditions read, so the step is reached and checked; without
/// the variants it is not.
@Suite("Every declared device fact explored")
struct ContextVariantTests {
    struct WatchHandler: ProductHandler {
        var declarations: CatalogDeclarations {
            CatalogDeclarations(context: [
                .device("hasWatch", .flag, default: false, "a watch is paired"),
                .device("watches", .number, default: 0, range: 0...4, "paired watches"),
            ])
        }
        var domainState: DomainStateVocabulary { .none }
    }

    static let product = Product(
        catalog: TourCatalog(
            app: "watchy", name: "Watchy",
            flows: [
                FlowDefinition(
                    "welcome", name: "Welcome",
                    steps: [
                        StepDefinition("hello", StepContent(title: "Hello", body: "Hi"), actions: [.next()]),
                        StepDefinition(
                            "pairWatch", StepContent(title: "Your Watch", body: "Sessions show on it"),
                            actions: [.next()], includedWhen: .flag("hasWatch")),
                        StepDefinition(
                            "twoWatches", StepContent(title: "Two Watches", body: "Pick one"),
                            actions: [.next()], includedWhen: .atLeast("watches", 2)),
                        StepDefinition("done", StepContent(title: "Done", body: "Enjoy"), actions: [.next()]),
                    ],
                    triggers: [Trigger(.launch)])
            ]),
        handler: WatchHandler(), currentVersion: "1.0")

    @Test func aStepLeftOutOnADeviceFactIsReachedThroughItsVariant() async throws {
        let base = Subject(
            name: "Watchy", executable: "watchy", make: { _, _ in Self.product }, launchVersions: ["1.0"],
            maxDepth: 6)
        let plain = try await Explorer(base).run()
        #expect(plain.unreachedSteps == ["welcome/pairWatch", "welcome/twoWatches"])

        let walked = base.exploringContextVariants()
        #expect(walked.contextVariants == ["hasWatch=true", "watches=1", "watches=2", "watches=4"])
        let report = try await Explorer(walked).run()
        #expect(report.unreachedSteps.isEmpty, "\(report.unreachedSteps)")
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(Self.product.catalog.problems(declaring: Self.product.handler.vocabulary).isEmpty)
    }
}

/// The suite's products come from one place: the folders under Apps/ (Package.swift makes each a
/// product module this target depends on; `ProductRegistryPlugin` lists their registrations).
@Suite("One registry of products")
struct ProductRegistryTests {
    static let appsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Apps")

    @Test func everyFolderUnderAppsIsRegisteredAndExplored() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.appsFolder.path).filter {
            FileManager.default.fileExists(
                atPath: Self.appsFolder.appendingPathComponent("\($0)/Onboarding").path)
        }
        let unbuilt = Set(folders).subtracting(registeredProductFolders.values).sorted()
        #expect(
            unbuilt.isEmpty,
            """
            Apps/\(unbuilt.joined(separator: ", Apps/")) is not in the package that was built: SwiftPM \
            read Package.swift before the folder existed and keeps what it read; run \
            scripts/regen-product \(unbuilt.joined(separator: " ")) (it makes SwiftPM read it again), \
            then swift test
            """
        )
        #expect(Set(registeredProductFolders.values) == Set(folders))
        #expect(Set(Subject.all.map(\.executable)) == Set(registeredProducts.map(\.executable)))
        #expect(Subject.products.count == registeredProducts.count)
        #expect(Subject.tuned["moodtracker"] == nil, "Mood Tracker proves the defaults; keep it untuned")
    }

    /// A product with no tuned exploration (a new folder) is explored with defaults taken from what
    /// it declares. Mood Tracker runs on them in `explore`; here every product's defaults are sound.
    @Test(arguments: registeredProducts.map(\.executable))
    func theDefaultExplorationOfEveryProductIsSound(executable: String) throws {
        let registration = try #require(registeredProducts.first { $0.executable == executable })
        let subject = Subject(registration)
        let product = subject.make(":memory:", World())
        #expect(subject.name == registration.displayName)
        #expect(subject.launchVersions == [product.currentVersion])
        #expect(subject.maxDepth > 0)
        #expect(
            subject.usesNetwork == product.handler.declarations.deviceKeys.contains { $0.name == "online" })
    }

    /// Flows that show on an upgrade are explored by default, in a part of their own: the versions
    /// their conditions name, and one to upgrade from, are launched (Carrier Wave's What's New
    /// prompts name 2.0 and 2.5); a product without such flows is one exploration.
    @Test func theDefaultsLaunchTheVersionsTheConditionsName() throws {
        let carrierWave = try #require(registeredProducts.first { $0.executable == "carrierwave" })
        let parts = Subject.defaults(for: carrierWave)
        #expect(parts.map(\.launchVersions) == [["2.5"], ["0.1", "2.0", "2.5"]])
        #expect(parts.map(\.exploresTriggers) == [true, false])
        let finite = try #require(registeredProducts.first { $0.executable == "finite" })
        #expect(Subject.defaults(for: finite).map(\.launchVersions) == [["1.0"]])
    }

    /// Two equal states are one state to the explorer, whatever order their dictionaries iterate in
    /// (which depends on each dictionary's capacity and history, and on the process's hash seed).
    @Test func equalStatesHaveOneKeyWhateverTheirDictionariesOrder() throws {
        let flows: [(FlowID, FlowState)] = [
            "intro", "challenges", "pota_account", "activities", "logbook", "map",
        ]
        .enumerated().map { index, id in
            (
                FlowID(rawValue: id),
                index % 2 == 0
                    ? .record(status: .completed, version: "2.5")
                    : .notStarted(pendingStart: Date(timeIntervalSince1970: 1_767_603_600))
            )
        }
        let small = Dictionary(uniqueKeysWithValues: flows)
        // A dictionary equal to it whose iteration order differs (a larger capacity spreads the keys).
        let spread = try #require(
            (8...256).lazy.map { capacity -> [FlowID: FlowState] in
                var spread = [FlowID: FlowState](minimumCapacity: capacity)
                for (id, flow) in flows.reversed() { spread[id] = flow }
                return spread
            }.first { Array($0.keys) != Array(small.keys) })
        #expect(spread == small)
        let world = World(permissionsBefore: ["health": "granted", "screenTime": "denied"])
        #expect(
            Explorer.stateKey(Session(tour: TourState(flows: small, appVersion: "2.5")), world: world)
                == Explorer.stateKey(Session(tour: TourState(flows: spread, appVersion: "2.5")), world: world)
        )
    }

    /// A ranged number is explored at its bounds, not at every value: a field of 1-60 gives the
    /// moves 1 and 60 (and the one without the required parameter), a field bounded by a context
    /// value its minimum.
    @Test func aRangedFieldIsExploredAtItsBoundsNotEveryValue() {
        let action = StepAction(
            "setMinutes", fills: ["minutes"], requiredParameters: ["minutes"], outcome: .stay)
        func values(_ kind: FieldSpec.Kind) -> [String] {
            Explorer.variants(of: action, fields: [FieldSpec("minutes", kind)], gates: []).compactMap {
                move in
                if case .action(_, let parameters, _) = move { parameters["minutes"] ?? "-" } else { nil }
            }
        }
        #expect(values(.integer(minimum: 1, maximum: 60, maximumKey: nil)) == ["1", "60", "-"])
        #expect(values(.integer(minimum: 1, maximumKey: "markableWeeks")) == ["1", "-"])
        #expect(values(.integer(minimum: 5, maximum: 5, maximumKey: nil)) == ["5", "-"])
    }
}
