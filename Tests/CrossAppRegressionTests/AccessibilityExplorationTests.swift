import Foundation
import Testing
import TourCodec
import TourCore

/// Every path through every product's flows again, for a person whose device reports accessibility
/// settings (Docs/Accessibility.md): every step is still reached, no step with an action moves on by
/// itself past a VoiceOver user, no haptic plays with haptics off, and every celebration is marked
/// for reduced motion (`Explorer.checkAccessibility`, on every transition).
///
/// One device with every setting at once: VoiceOver, Reduce Motion, haptics off and the largest
/// text. Haptics and motion change only effects, never which step comes next, and VoiceOver's
/// timing is the one setting that changes paths, so this walk holds each setting to its rule and
/// every path VoiceOver makes. A walk per setting would cost one more exploration of every product
/// each, and the suite's wall time is a goal (Docs/Performance.md, section 6).
@Suite("Every path with accessibility settings")
struct AccessibilityExplorationTests {
    static let devices: [(name: String, facts: [String: TourValue])] = [
        (
            "every setting at once",
            AccessibilitySettings(
                voiceOver: true, reducedMotion: true, hapticsEnabled: false,
                textSize: AccessibilitySettings.textSizes[AccessibilitySettings.textSizes.count - 1]
            ).context
        )
    ]

    @Test(arguments: Subject.products)
    func explore(_ product: ProductExploration) async throws {
        for device in Self.devices {
            let reports = try await withThrowingTaskGroup(of: ExplorationReport.self) { group in
                for var part in product.parts {
                    part.startingWorlds = part.startingWorlds.map { world in
                        var world = world
                        // The setting on every world, keeping each world's own device facts (the
                        // variants of the facts the product's conditions read).
                        world.deviceFacts = device.facts.merging(world.deviceFacts) { _, variant in variant }
                        return world
                    }
                    // What the settings change is timing and effects. The default walk already
                    // holds every transition to the general invariants, tries every refusal on
                    // disk, every loss of the network, replays and resets, and stacked triggers;
                    // none depends on the settings. This walk keeps what reaches every step (the
                    // check below: one trigger per path and a step shallower still reach them all)
                    // and holds each transition to the settings' rules, at about a third of the
                    // default walk's cost (the suite's wall time is a goal).
                    part.checksRefusalsOnDisk = false
                    part.checksInvariants = false
                    part.budget.remaining["trigger"] = 1
                    part.budget.remaining["replay or reset"] = 0
                    part.maxDepth -= 1
                    part.usesNetwork = false
                    group.addTask { [part] in try await Explorer(part).run() }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            var reached: Set<String> = []
            for report in reports {
                for violation in report.violations { Issue.record("\(device.name): \(violation)") }
                reached.formUnion(report.stepsReached)
            }
            let unreached = (reports.first?.definedSteps ?? []).filter { !reached.contains($0) }
            print("coverage · \(product.name) with \(device.name): steps \(reached.count)")
            #expect(
                unreached.isEmpty,
                """
                \(product.name) with \(device.name): steps no path \
                reaches: \(unreached.joined(separator: ", "))
                """
            )
        }
    }
}
