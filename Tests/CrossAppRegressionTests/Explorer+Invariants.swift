import Foundation
import Persistence
import TourCodec
import TourCore
import TourRuntime

/// The invariants checked on every accepted transition.
extension Explorer {

    func check(
        _ move: Move, path: [Move], place: String, before: Session, after: Session, product: Product,
        journalBefore: [JournalRow], journal: [JournalRow]
    ) {
        let catalog = product.catalog
        // The journal only grows.
        if Array(journal.prefix(journalBefore.count)) != journalBefore {
            fail(path, place, "changed or removed journal rows")
        }
        // Step indexes stay within the run.
        for (id, run) in after.tour.flows where run.status == .active {
            if run.plan.isEmpty || !run.plan.indices.contains(run.position) {
                fail(path, place, "left \(id) at step index \(run.position + 1) of \(run.plan.count)")
            }
        }
        // An action is one the showing step allows, and it moves the step only as the step allows.
        if case .action(let name, _, _) = move {
            if let flowID = before.tour.presentingFlow, let flow = catalog.flow(flowID),
                let stepID = before.tour[flow: flowID].currentStep,
                let step = flow.steps.first(where: { $0.id == stepID })
            {
                let run = before.tour[flow: flowID]
                let offered = step.actions.filter { !($0.outcome == .back && run.position == 0) }
                let allowed = offered.map(\.name) + step.passThrough
                if !offered.contains(where: { $0.answers(to: name) }) && !step.passThrough.contains(name) {
                    fail(
                        path, place,
                        """
                        was accepted, but the step's definition allows \
                        only \(allowed.joined(separator: ", "))
                        """
                    )
                }
                let now = after.tour[flow: flowID]
                if now.status == .active && now.activation == run.activation {
                    let moved = now.position - run.position
                    let back = step.action(named: name)?.outcome == .back
                    if back ? moved != -1 : !(0...1).contains(moved) {
                        fail(
                            path, place,
                            "moved the step index from \(run.position + 1) to \(now.position + 1)")
                    }
                }
            } else if !catalog.freeActions.contains(where: { $0.name == name }) {
                fail(
                    path, place,
                    "was accepted with no card showing, but it is not one of the product's free actions")
            }
        }
        // A finished flow is not presented again unless replayed or reset.
        for flow in catalog.flows {
            let was = before.tour[flow: flow.id].status
            if (was == .completed || was == .skipped), after.tour[flow: flow.id].status == .active,
                move != .replay(flow.id), move != .reset
            {
                fail(path, place, "presented \(flow.id) again after it was \(was.rawValue)")
            }
        }
        if case .relaunch = move {
            checkInterruption(path: path, place: place, before: before, after: after, catalog: catalog)
            // Never two update prompts (flows a launch starts on an upgrade) in one launch.
            let started = catalog.flows.filter { flow in
                flow.triggers.contains { $0.moment == .launch && $0.when != .always }
                    && after.tour[flow: flow.id].status == .active
                    && after.tour[flow: flow.id].activation != before.tour[flow: flow.id].activation
            }
            if started.count > 1 {
                fail(
                    path, place,
                    "started \(started.map(\.id.rawValue).joined(separator: " and ")) in one launch")
            }
        }
        // A visit belongs to its place: while another flow shows, it starts nothing, now or later.
        if case .visit = move, before.tour.presentingFlow != nil {
            for flow in catalog.flows
            where after.tour[flow: flow.id].pendingStart != before.tour[flow: flow.id].pendingStart
                || (after.tour[flow: flow.id].status == .active
                    && before.tour[flow: flow.id].status != .active)
            {
                fail(
                    path, place,
                    """
                    the visit triggered \(flow.id) while \(before.tour.presentingFlow?.rawValue ?? "") \
                    showed
                    """
                )
            }
        }
        checkSideEffects(
            move, path: path, place: place, before: before, after: after, catalog: catalog,
            rows: Array(journal.dropFirst(journalBefore.count)))
        if let problem = subject.invariant?(after.domain) { fail(path, place, problem) }
    }

    /// After a kill and a launch, a flow that was showing is where its interruption policy says.
    func checkInterruption(
        path: [Move], place: String, before: Session, after: Session, catalog: TourCatalog
    ) {
        for flow in catalog.flows where before.tour[flow: flow.id].status == .active {
            let was = before.tour[flow: flow.id]
            let now = after.tour[flow: flow.id]
            if let record = was.replayOf {
                let restarted = record.status == .notStarted && now.status == .active && now.position == 0
                if now.replayOf != nil || (now.status != record.status && !restarted) {
                    fail(
                        path, place,
                        """
                        \(flow.id): an interrupted replay did not give back the \
                        record \(record.status.rawValue)
                        """
                    )
                }
                continue
            }
            switch flow.interruption {
            case .resume:
                if now.status != .active || now.plan != was.plan || now.position != was.position {
                    fail(
                        path, place,
                        """
                        \(flow.id) should resume at step \(was.position + 1) after a relaunch; it \
                        is \(describe(now))
                        """
                    )
                }
            case .restart:
                if now.status != .active || now.position != 0 {
                    fail(
                        path, place,
                        "\(flow.id) should restart at its first step after a relaunch; it is \(describe(now))"
                    )
                }
            case .discard:
                // Dropped; its trigger may start it again at this launch, from its first step.
                if now.status == .active && now.position != 0 {
                    fail(
                        path, place, "\(flow.id) should drop its run after a relaunch; it is \(describe(now))"
                    )
                }
            }
        }
    }

    /// Product side effects happen exactly once: the edge's journal holds each effect the definition
    /// promises for what happened in it (an action's effects, a completion's, a skip's, a reset's,
    /// a reported domain event) exactly as many times, and no other.
    func checkSideEffects(
        _ move: Move, path: [Move], place: String, before: Session, after: Session, catalog: TourCatalog,
        rows: [JournalRow]
    ) {
        var expected: [String: Int] = [:]
        func expect(_ templates: [EffectTemplate]) {
            for case .product(let name, _) in templates { expected[name, default: 0] += 1 }
        }
        var actual: [String: Int] = [:]
        for row in rows {
            guard let effects = try? [TourEffect](tourValue: TourValue(jsonText: row.effectsJSON)),
                let event = try? TourEvent(jsonText: row.eventJSON)
            else {
                fail(path, place, "journal row \(row.id) does not decode")
                continue
            }
            for case .product(let effect) in effects { actual[effect.name, default: 0] += 1 }
            if case .domainEvent(let name, _) = event { expected[name, default: 0] += 1 }
            // The journal's facts, not its prose, say which gate an answer reached.
            for case .gateAnswered(let flowID, let stepID, let gateID, .granted) in row.facts ?? [] {
                if let gate = catalog.flow(flowID)?.step(stepID)?.gate(gateID) { expect(gate.onGranted) }
            }
        }
        if case .action(let name, _, _) = move {
            if let flowID = before.tour.presentingFlow, let flow = catalog.flow(flowID),
                let step = before.tour[flow: flowID].currentStep.flatMap({ id in
                    flow.steps.first { $0.id == id }
                })
            {
                if let action = step.actions.first(where: { $0.name == name }) {
                    expect(action.effects)
                } else if step.passThrough.contains(name),
                    let free = catalog.freeActions.first(where: { $0.name == name })
                {
                    expect(free.effects)
                }
            } else if let free = catalog.freeActions.first(where: { $0.name == name }) {
                expect(free.effects)
            }
        }
        for flow in catalog.flows {
            let was = before.tour[flow: flow.id]
            let now = after.tour[flow: flow.id]
            if move == .reset {
                expect(flow.onReset)
                continue
            }
            if case .relaunch = move { continue }
            guard was.status == .active, now.status != .active, was.replayOf == nil else { continue }
            let skipped: Bool
            if case .action(let name, _, _) = move {
                let step = was.currentStep.flatMap { id in flow.steps.first { $0.id == id } }
                skipped = step?.action(named: name)?.outcome.endsFlow == true
            } else {
                skipped = false
            }
            expect(skipped ? flow.onSkip : flow.onComplete)
        }
        if expected != actual {
            fail(
                path, place,
                "side effects \(describe(actual)) where the definition promises \(describe(expected))")
        }
    }

    /// The accessibility settings of the world hold on every transition: for a VoiceOver user a
    /// step that waits for an action has no timer (so it cannot move on before they act); with
    /// haptics off no haptic is played; with reduced motion every celebration says so.
    func checkAccessibility(
        _ transitions: [Transition], after: Session, world: World, product: Product, path: [Move],
        place: String
    ) {
        let settings = AccessibilitySettings(world.deviceFacts)
        let effects = transitions.flatMap(\.effects)
        if !settings.hapticsEnabled, effects.contains(where: { if case .haptic = $0 { true } else { false } })
        {
            fail(path, place, "played a haptic with haptics off")
        }
        for case .celebration(let flow, let step, let reduced) in effects
        where reduced != settings.reducedMotion {
            fail(
                path, place,
                """
                celebrated \(flow)/\(step) with reducedMotion \(reduced), the device \
                says \(settings.reducedMotion)
                """
            )
        }
        guard settings.voiceOver else { return }
        for (id, run) in after.tour.flows where run.status == .active {
            guard let flow = product.catalog.flow(id), let stepID = run.currentStep,
                let step = flow.step(stepID),
                case .active(let active) = run
            else { continue }
            let waits = flow.accessibility.autoAdvance(step, for: settings) == nil
            if waits && active.deadline != nil {
                fail(
                    path, place, "left \(id)/\(stepID) on a timer, but it waits for a VoiceOver user's action"
                )
            }
        }
        for record in transitions.map(\.record) where record.outcome.contains("timed out") {
            if let flowID = record.flow, let stepID = record.step, let flow = product.catalog.flow(flowID),
                let step = flow.step(stepID), !step.actions.isEmpty,
                flow.accessibility.voiceOverTimedSteps == .waitForAction
            {
                fail(path, place, "\(flowID)/\(stepID) moved on by itself past a VoiceOver user")
            }
        }
    }
}
