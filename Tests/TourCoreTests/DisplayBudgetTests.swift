import CatalogDocuments
import Foundation
import Testing
import TourFixtures

@testable import TourCore

/// The family's display budget (Docs/DisplayBudget.md): the verdict's rules, the ledger as a join,
/// and the engine holding a triggered flow back.
@Suite("Display budget")
struct DisplayBudgetTests {
    static let t0 = Fixtures.t0
    static let budget = DisplayBudget(flowsPerDay: 2, coolDown: 3600)

    static func ledger(starts: [Double], device: String = "d") -> BudgetLedger {
        var ledger = BudgetLedger()
        for offset in starts { ledger.count(on: device, at: t0.addingTimeInterval(offset)) }
        return ledger
    }

    /// With one flow a day, a low flow never starts by itself, even on an empty day (the doc's
    /// "the day's last start is kept for a higher priority"); normal and high still do.
    @Test func withOneADayALowFlowLeavesTheOnlyStart() {
        let one = DisplayBudget(flowsPerDay: 1, coolDown: 3600)
        let now = Self.t0.addingTimeInterval(600)
        #expect(
            one.verdict(for: .low, ledger: BudgetLedger(), now: now)
                == .held(
                    until: nil,
                    reason: "a low-priority flow leaves the day's only start (1 a day) to a higher priority"))
        #expect(one.verdict(for: .normal, ledger: BudgetLedger(), now: now) == .free)
        #expect(one.verdict(for: .high, ledger: BudgetLedger(), now: now) == .free)
        #expect(one.verdict(for: .exempt, ledger: BudgetLedger(), now: now) == .free)
    }

    @Test func theCapTheCoolDownAndPrioritiesDecide() {
        let now = Self.t0.addingTimeInterval(600)
        let empty = BudgetLedger()
        for priority in BudgetPriority.allCases {
            #expect(Self.budget.verdict(for: priority, ledger: empty, now: now) == .free, "\(priority)")
        }
        // One start ten minutes ago: normal and low wait for the cool-down, high does not.
        let one = Self.ledger(starts: [0])
        #expect(
            Self.budget.verdict(for: .normal, ledger: one, now: now)
                == .held(
                    until: Self.t0.addingTimeInterval(3600),
                    reason: "cool-down of 1 h after the last flow started"))
        #expect(Self.budget.verdict(for: .high, ledger: one, now: now) == .free)
        #expect(
            Self.budget.verdict(for: .normal, ledger: one, now: Self.t0.addingTimeInterval(3600)) == .free)
        // A low flow leaves the day's last start to a higher priority.
        guard
            case .held(let until, let reason) = Self.budget.verdict(
                for: .low, ledger: one, now: Self.t0.addingTimeInterval(7200))
        else {
            Issue.record("low not held")
            return
        }
        #expect(until == BudgetDay(Self.t0).next.start && reason.contains("kept for a higher priority"))
        // Two starts today: only an exempt flow, until tomorrow.
        let two = Self.ledger(starts: [0, 4000])
        let later = Self.t0.addingTimeInterval(9000)
        for priority in [BudgetPriority.high, .normal] {
            #expect(
                Self.budget.verdict(for: priority, ledger: two, now: later)
                    == .held(until: BudgetDay(later).next.start, reason: "2 of 2 flows started today"))
        }
        #expect(
            Self.budget.verdict(for: .low, ledger: two, now: later)
                == .held(
                    until: BudgetDay(later).next.start,
                    reason: "2 of 2 flows started today (the last is kept for a higher priority)"))
        #expect(Self.budget.verdict(for: .exempt, ledger: two, now: later) == .free)
        #expect(Self.budget.verdict(for: .normal, ledger: two, now: BudgetDay(later).next.start) == .free)
        // A budget of zero holds every counted flow for good.
        let zero = DisplayBudget(flowsPerDay: 0, coolDown: 0)
        #expect(
            zero.verdict(for: .high, ledger: empty, now: now)
                == .held(until: nil, reason: "the display budget allows no flow to start by itself (0 a day)")
        )
        #expect(zero.verdict(for: .exempt, ledger: empty, now: now) == .free)
    }

    @Test func ledgersMergeAsAJoin() {
        var random = SplitMix64(seed: 27)
        func ledger() -> BudgetLedger {
            var ledger = BudgetLedger()
            for _ in 0..<Int(random.next() % 6) {
                let device = random.pick(["a", "b", "c"])
                ledger.count(on: device, at: Self.t0.addingTimeInterval(Double(random.next() % 200_000)))
            }
            return ledger
        }
        for _ in 0..<200 {
            let (x, y, z) = (ledger(), ledger(), ledger())
            #expect(x.merged(with: y) == y.merged(with: x))
            #expect(x.merged(with: y).merged(with: z) == x.merged(with: y.merged(with: z)))
            #expect(x.merged(with: x) == x)
            #expect(x.merged(with: y).merged(with: y) == x.merged(with: y))
        }
        // Two devices' counts of one day add up; one device's repeated report does not.
        let a = Self.ledger(starts: [0], device: "a")
        let b = Self.ledger(starts: [10, 20], device: "b")
        #expect(a.merged(with: b).merged(with: b).starts(on: BudgetDay(Self.t0)) == 3)
    }

    static let flows = [
        FlowDefinition(
            "tour", name: "Tour",
            steps: [StepDefinition("one", StepContent(title: "One", body: ""), actions: [.next()])],
            triggers: [Trigger(.launch)], replay: .presentWithoutRecording),
        FlowDefinition(
            "tips", name: "Tips",
            steps: [StepDefinition("tip", StepContent(title: "Tip", body: ""), actions: [.next()])],
            triggers: [Trigger(.launch)], budget: .low),
    ]

    @Test func theEngineHoldsATriggeredFlowBackAndCountsTheOnesItStarts() throws {
        let engine = TourEngine(catalog: TourCatalog(app: "test", flows: Self.flows))
        var input = BudgetInput(budget: Self.budget, device: "d")
        var state = TourState()
        var now = Self.t0
        var transition = try engine.reduce(state, .appLaunched(version: nil), at: now, budget: input)
        state = transition.state
        #expect(state.presentingFlow == "tour")
        #expect(transition.record.facts.contains(.budgetSpent(flow: "tour")))
        input.ledger.count(on: "d", at: now)
        transition = try engine.reduce(
            state, .actionPerformed("next", parameters: [:]), at: now, budget: input)
        state = transition.state
        // Tips was due behind the tour. It is low: the day's one start left is kept for a higher
        // priority, so it is held until tomorrow, and its trigger stays eligible.
        let tomorrow = BudgetDay(now).next.start
        let held = transition.record.facts.first { if case .budgetHeld = $0 { true } else { false } }
        #expect(
            held
                == .budgetHeld(
                    flow: "tips", until: tomorrow,
                    reason: "1 of 2 flows started today (the last is kept for a higher priority)"))
        #expect(state.presentingFlow == nil && state[flow: "tips"].status == .notStarted)
        let explained = engine.explain(state, budget: input, at: now).first { $0.flow == "tips" }
        #expect(explained?.verdict == "heldByBudget")
        #expect(explained?.budgetFreeAt == tomorrow.timeIntervalSince1970)
        #expect(
            explained?.reason.contains("free again at \(tomorrow.formatted(.iso8601))") == true,
            "\(explained?.reason ?? "")")
        // A normal flow would wait for the cool-down instead.
        #expect(
            Self.budget.verdict(for: .normal, ledger: input.ledger, now: now)
                == .held(
                    until: now.addingTimeInterval(3600),
                    reason: "cool-down of 1 h after the last flow started"))
        // A replay is the user's asking: the budget does not hold it, nor count it.
        transition = try engine.reduce(state, .replayRequested("tour"), at: now, budget: input)
        #expect(transition.state.presentingFlow == "tour")
        #expect(!transition.record.facts.contains { if case .budgetSpent = $0 { true } else { false } })
        // After the cool-down the day's one start left is kept for higher priorities: tips is low.
        now = now.addingTimeInterval(3600)
        transition = try engine.reduce(state, .appLaunched(version: nil), at: now, budget: input)
        #expect(transition.state.presentingFlow == nil)
        #expect(
            transition.record.facts.contains(
                .budgetHeld(
                    flow: "tips", until: BudgetDay(now).next.start,
                    reason: "1 of 2 flows started today (the last is kept for a higher priority)")))
        // The next day's launch starts it, and counts it.
        now = BudgetDay(now).next.start.addingTimeInterval(8 * 3600)
        transition = try engine.reduce(transition.state, .appLaunched(version: nil), at: now, budget: input)
        #expect(transition.state.presentingFlow == "tips")
        #expect(transition.record.facts.contains(.budgetSpent(flow: "tips")))
    }

    @Test func aFlowsPriorityIsInItsDocumentOnlyWhenNotNormal() throws {
        let catalog = TourCatalog(app: "test", flows: Self.flows)
        let text = try CatalogDocument(catalog, declarations: CatalogDeclarations()).text()
        #expect(text.components(separatedBy: "\"budget\"").count == 2, "only tips declares one")
        #expect(try CatalogDocument(text: text).catalog == catalog)
        let bad = text.replacingOccurrences(of: "\"budget\":\"low\"", with: "\"budget\":\"urgent\"")
        #expect(throws: CatalogDocumentError.self) { try CatalogDocument(text: bad) }
    }
    /// A release that changes a flow's priority (or any other policy of its document, such as its
    /// accessibility rules) says so in the diff, by the member's name.
    @Test func aChangedPriorityIsInTheCatalogDiff() throws {
        let before = TourCatalog(app: "test", flows: Self.flows)
        var flows = Self.flows
        flows[0].budget = .high
        flows[0].accessibility.voiceOverTimedSteps = .scaleDuration
        let after = TourCatalog(app: "test", version: 2, flows: flows)
        let diff = CatalogDiff(
            from: CatalogDocument(before, declarations: CatalogDeclarations()),
            to: CatalogDocument(after, declarations: CatalogDeclarations()))
        let policies = diff.changes.filter { $0.kind == .policyChanged && $0.flow == flows[0].id }.map(
            \.detail)
        #expect(policies.contains { $0.hasPrefix("budget: (none) → \"high\"") }, "\(diff.changes)")
        #expect(policies.contains { $0.hasPrefix("accessibility:") }, "\(diff.changes)")
    }
}
