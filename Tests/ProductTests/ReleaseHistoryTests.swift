import CatalogDocuments
import Foundation
import Testing
import TourCore
import TourRuntime

/// Every product's catalog against its recorded release history, and what an undeclared change to
/// any of them would do: refused by the check (naming the product, flow and step), and if shipped
/// anyway, harmless (no run is left on a step that is gone). Runs over every registered product, so
/// a sixth product is covered by existing.
@Suite("Every product's release history")
struct ReleaseHistoryTests {
    struct Subject: Sendable, CustomStringConvertible {
        var registration: ProductRegistration
        var product: Product
        var description: String { registration.executable }

        var history: CatalogHistory { CatalogHistory(registration.releases, app: product.catalog.app) }

        /// The history problems of this product with its catalog edited.
        func problems(_ edit: (inout TourCatalog) -> Void) -> [CatalogProblem] {
            var changed = product
            edit(&changed.catalog)
            return history.problems(today: changed.document)
        }
    }

    static let subjects: [Subject] = registeredProducts.map {
        Subject(registration: $0, product: $0.make(RunEnvironment(databasePath: "/dev/null", offline: true)))
    }

    /// The suite's gate: today's catalog of every product agrees with what it recorded.
    @Test(arguments: subjects)
    func todaysCatalogAgreesWithItsHistory(_ subject: Subject) {
        let problems = subject.problems { _ in }
        #expect(problems.isEmpty, "\(subject.product.catalog.name): \(problems.map(\.description))")
    }

    /// Each step of each flow removed, renamed or moved, without a new version: refused, naming
    /// the product, the flow and the step.
    @Test(arguments: subjects)
    func anUndeclaredChangeIsRefusedNamingProductFlowAndStep(_ subject: Subject) throws {
        let name = subject.product.catalog.name
        guard !subject.registration.releases.isEmpty else {
            // A product that has shipped nothing (scripts/new-product's, until
            // scripts/record-catalog records its first version) has no history to hold a change
            // against: its first recording is the reference.
            let removed = subject.problems { $0.flows[0].steps.removeLast() }
            #expect(removed.isEmpty, "\(name) has recorded no release, yet: \(removed)")
            return
        }
        for (index, flow) in subject.product.catalog.flows.enumerated() {
            for (position, step) in flow.steps.enumerated() {
                let removed = subject.problems { $0.flows[index].steps.remove(at: position) }
                let renamed = subject.problems {
                    $0.flows[index].steps[position].id = StepID(step.id.rawValue + "Renamed")
                }
                for (what, problems) in [("removed", removed), ("renamed", renamed)] {
                    let named = problems.first { $0.flow == flow.id && $0.step == step.id }
                    #expect(named != nil, "\(name) \(flow.id)/\(step.id) \(what): \(problems)")
                    #expect(named?.detail.contains(name) == true)
                    #expect(named?.detail.contains("raise the catalog's version") == true)
                    // With earlier versions recorded, their users on the step are unplaced too.
                    #expect(
                        problems.allSatisfy {
                            $0.kind == .changedWithoutVersion
                                || ($0.kind == .unplacedStep && $0.step == step.id)
                        }, "\(problems)")
                    #expect(problems.contains { $0.kind == .changedWithoutVersion })
                }
                // Raised, but undeclared: the users on it are not placed.
                let bumped = subject.problems {
                    $0.version += 1
                    $0.flows[index].steps.remove(at: position)
                }
                #expect(
                    bumped.contains {
                        $0.kind == .unplacedStep && $0.flow == flow.id && $0.step == step.id
                            && $0.detail.contains("declare CatalogMigration(from:")
                    },
                    "\(name) \(flow.id)/\(step.id): \(bumped)")
            }
            guard flow.steps.count > 1 else { continue }
            let reordered = subject.problems { $0.flows[index].steps.swapAt(0, 1) }
            #expect(
                reordered.contains {
                    $0.kind == .changedWithoutVersion && $0.flow == flow.id && $0.step != nil
                        && $0.detail.contains("reordered")
                })
            // A reorder with a new version needs no declaration.
            #expect(
                subject.problems {
                    $0.version += 1; $0.flows[index].steps.swapAt(0, 1)
                }.isEmpty)
        }
    }

    /// If such a build ran anyway: a user on any step of any flow is placed, never left on a step
    /// that is gone, and the move is journalled as undeclared.
    @Test(arguments: subjects)
    func anUndeclaredChangeThatShipsAnywayStrandsNobody(_ subject: Subject) throws {
        let product = subject.product
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let context = product.context(domain: [:], now: now, device: [:])
        for (index, flow) in product.catalog.flows.enumerated() {
            for (position, step) in flow.steps.enumerated() {
                var state = TourState(appVersion: product.currentVersion)
                state[flow: flow.id] = .active(
                    FlowRun(
                        plan: flow.steps.map(\.id), position: position, activation: 1,
                        catalogVersion: product.catalog.version,
                        catalogFingerprint: product.fingerprint))
                for change in ["removed", "renamed"] {
                    var changed = product
                    if change == "removed" {
                        changed.catalog.flows[index].steps.remove(at: position)
                    } else {
                        changed.catalog.flows[index].steps[position].id = StepID(step.id.rawValue + "Renamed")
                    }
                    let engine = changed.engine
                    let place = "\(product.catalog.name) \(flow.id)/\(step.id) \(change)"
                    // Every view already shows the user somewhere that exists, or the flow done.
                    let card = engine.card(in: state, context: context)
                    let summary = engine.summaries(of: state, context: context).first { $0.id == flow.id }
                    #expect(
                        card != nil || summary?.status == .completed,
                        "\(place): \(String(describing: summary))")
                    if let card {
                        #expect(changed.catalog.flow(card.flow)?.step(card.step) != nil, "\(place)")
                    }
                    // The next event moves it, journalled as undeclared.
                    let transition = try engine.reduce(state, .clockAdvanced, at: now, context: context)
                    let undeclared = transition.record.facts.contains {
                        if case .runMigrated(flow.id, _, _, step.id, _, _, _, true) = $0 {
                            true
                        } else {
                            false
                        }
                    }
                    #expect(undeclared, "\(place): \(transition.record.facts)")
                    if let moved = transition.state[flow: flow.id].currentStep {
                        #expect(changed.catalog.flow(flow.id)?.step(moved) != nil, "\(place): on \(moved)")
                    }
                    #expect(!engine.needsMigration(transition.state), "\(place)")
                }
            }
        }
    }
}
