import Foundation
import Testing

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
        for part in product.parts {
            let clock = ContinuousClock()
            let started = clock.now
            let report = try await Explorer(part).run()
            print("coverage · \(report.summary) · \(clock.now - started)")
            for violation in report.violations { Issue.record("\(violation)") }
            reached.formUnion(report.stepsReached)
            taken.formUnion(report.pairsAccepted)
            defined = (report.definedSteps, report.definedPairs)
        }
        let unreached = defined.steps.filter { !reached.contains($0) }
        let untaken = defined.pairs.filter { !taken.contains($0) }
        print(
            "coverage · \(product.name) in all: steps \(defined.steps.count - unreached.count)/\(defined.steps.count), "
                + "(step, action) pairs \(defined.pairs.count - untaken.count)/\(defined.pairs.count)")
        #expect(
            unreached.isEmpty, "\(product.name): steps no path reaches: \(unreached.joined(separator: ", "))")
        #expect(
            untaken.isEmpty,
            "\(product.name): (step, action) pairs no path takes: \(untaken.joined(separator: ", "))")
    }
}
