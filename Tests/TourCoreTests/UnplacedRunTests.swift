import Foundation
import Testing
import TourCodec
import TourFixtures

/// A catalog change that reached users without a declaration (whatever its version says) strands
/// nobody: every run is placed by the flow's `unplacedStep` policy on the next event and in every
/// view, journalled as an undeclared `runMigrated`.
@Suite("Runs whose step nothing places")
struct UnplacedRunTests {
    static let walkPlan: [StepID] = ["intro", "tapTarget", "modal", "staged", "finale"]

    /// A user on `step` of the walk flow under version 1.
    static func state(on step: StepID, fingerprint: String? = "v1-document") -> TourState {
        let position = walkPlan.firstIndex(of: step) ?? 0
        var state = TourState()
        state[flow: "walk"] = .active(
            FlowRun(
                plan: walkPlan, position: position, activation: 1, catalogVersion: 1,
                catalogFingerprint: fingerprint))
        return state
    }

    static func engine(
        _ edit: (inout FlowDefinition) -> Void, version: Int = 1, fingerprint: String = "v1-changed"
    )
        -> TourEngine
    {
        var walk = Fixtures.walk
        edit(&walk)
        return TourEngine(
            catalog: TourCatalog(app: "test", version: version, flows: [walk]),
            fingerprint: CatalogFingerprint(known: fingerprint))
    }

    static func migration(_ facts: [TourFact]) -> (TourFact.MigrationOutcome, StepID?, Bool)? {
        for case .runMigrated(_, _, _, _, let to, _, let outcome, let undeclared) in facts {
            return (outcome, to, undeclared)
        }
        return nil
    }

    @Test func aRemovedStepRestartsTheFlowByDefaultAndSaysItWasUndeclared() throws {
        let engine = Self.engine { $0.steps.removeAll { $0.id == "modal" } }
        let state = Self.state(on: "modal")
        // The view shows where the next event will put the user.
        #expect(engine.needsMigration(state))
        #expect(engine.card(in: state)?.step == "intro")
        let transition = try engine.reduce(state, .clockAdvanced, at: Fixtures.t0)
        let moved = try #require(Self.migration(transition.record.facts))
        #expect(moved.0 == .restarted && moved.2)
        #expect(
            transition.record.outcome.contains("modal is not in this catalog and no migration declares it"))
        #expect(transition.state[flow: "walk"].currentStep == "intro")
        // The restarted run is stamped with the catalog it now runs under.
        #expect(transition.state[run: "walk"]?.catalogFingerprint == "v1-changed")
        #expect(!engine.needsMigration(transition.state))
    }

    @Test func aFlowMayGoOnAtTheNextStepInstead() throws {
        let engine = Self.engine {
            $0.steps.removeAll { $0.id == "modal" }
            $0.unplacedStep = .goOnAtNext
        }
        let transition = try engine.reduce(Self.state(on: "modal"), .clockAdvanced, at: Fixtures.t0)
        let moved = try #require(Self.migration(transition.record.facts))
        #expect(moved.0 == .moved && moved.1 == "staged" && moved.2)
        #expect(engine.card(in: transition.state)?.step == "staged")
        // The last step gone with nothing after it: the flow completes.
        let last = Self.engine {
            $0.steps.removeAll { $0.id == "finale" }
            $0.unplacedStep = .goOnAtNext
        }
        let finished = try last.reduce(Self.state(on: "finale"), .clockAdvanced, at: Fixtures.t0)
        #expect(Self.migration(finished.record.facts)?.0 == .finished)
        #expect(finished.state[flow: "walk"].status == .completed)
    }

    @Test func aRenamedStepIsUnknownWithoutADeclarationAndPlacedWithOne() throws {
        let renamed = Self.engine { $0.steps[3].id = "press" }
        #expect(renamed.card(in: Self.state(on: "staged"))?.step == "intro")
        var walk = Fixtures.walk
        walk.steps[3].id = "press"
        let declared = TourEngine(
            catalog: TourCatalog(
                app: "test", version: 2, flows: [walk],
                migrations: [
                    CatalogMigration(from: 1, ["walk": FlowChanges(renamedSteps: ["staged": "press"])])
                ]))
        let transition = try declared.reduce(Self.state(on: "staged"), .clockAdvanced, at: Fixtures.t0)
        let moved = try #require(Self.migration(transition.record.facts))
        #expect(moved.0 == .moved && moved.1 == "press" && !moved.2)
    }

    @Test func aStepRemovedAheadOfTheUserReplansTheRunWhereItIs() throws {
        let engine = Self.engine { $0.steps.removeAll { $0.id == "staged" } }
        let transition = try engine.reduce(Self.state(on: "tapTarget"), .clockAdvanced, at: Fixtures.t0)
        let moved = try #require(Self.migration(transition.record.facts))
        #expect(moved.0 == .moved && moved.1 == "tapTarget" && moved.2)
        #expect(transition.state[flow: "walk"].plan == ["intro", "tapTarget", "modal", "finale"])
        #expect(transition.record.outcome.contains("the catalog changed without a new version"))
    }

    /// A reorder (or an added step) shipped under the same version: the run's fingerprint is not
    /// the catalog's, so it is re-planned in the new order where it is, journalled as undeclared.
    @Test func aReorderUnderTheSameVersionReplansTheRunWhereItIs() throws {
        let engine = Self.engine { $0.steps.swapAt(2, 3) }
        let state = Self.state(on: "tapTarget")
        #expect(engine.needsMigration(state))
        let transition = try engine.reduce(state, .clockAdvanced, at: Fixtures.t0)
        let moved = try #require(Self.migration(transition.record.facts))
        #expect(moved.0 == .moved && moved.1 == "tapTarget" && moved.2)
        #expect(transition.state[flow: "walk"].plan == ["intro", "tapTarget", "staged", "modal", "finale"])
        #expect(transition.state[run: "walk"]?.catalogFingerprint == "v1-changed")
        #expect(transition.record.outcome.contains("the catalog changed without a new version"))
        #expect(!engine.needsMigration(transition.state))
        // A run written under this very document, or with no fingerprint known, is left as it is.
        let same = Self.state(on: "tapTarget", fingerprint: "v1-changed")
        #expect(!engine.needsMigration(same))
        #expect(!engine.needsMigration(Self.state(on: "tapTarget", fingerprint: nil)))
        #expect(try engine.reduce(same, .clockAdvanced, at: Fixtures.t0).state == same)
    }

    @Test func aRunOfARemovedFlowEndsDeclaredOrNot() throws {
        var state = Self.state(on: "modal")
        state[flow: "tip"] = .finished(FlowRecord(.completed, version: "1.0"))
        let undeclared = TourEngine(catalog: TourCatalog(app: "test", flows: [Fixtures.tip]))
        #expect(undeclared.card(in: state) == nil)
        let transition = try undeclared.reduce(state, .clockAdvanced, at: Fixtures.t0)
        let ended = try #require(Self.migration(transition.record.facts))
        #expect(ended.0 == .dropped && ended.2)
        #expect(transition.state[flow: "walk"].status == .notStarted)
        #expect(transition.effects.contains(.dismissed("walk")))
        // A record of another flow is untouched.
        #expect(transition.state[flow: "tip"].status == .completed)
        let declared = TourEngine(
            catalog: TourCatalog(
                app: "test", version: 2, flows: [Fixtures.tip],
                migrations: [CatalogMigration(from: 1, removedFlows: ["walk"])]))
        let declaredEnd = try declared.reduce(state, .clockAdvanced, at: Fixtures.t0)
        #expect(Self.migration(declaredEnd.record.facts).map { $0.0 == .dropped && !$0.2 } == true)
    }

    @Test func runsAreStampedWithTheFingerprintTheyStartUnder() throws {
        let engine = TourEngine(
            catalog: TourCatalog(app: "test", flows: [Fixtures.tip]),
            fingerprint: CatalogFingerprint(known: "abc"))
        let started = try engine.reduce(TourState(), .featureVisited("feature"), at: Fixtures.t0)
        let due = try engine.reduce(started.state, .clockAdvanced, at: Fixtures.t0)
        #expect(due.state[run: "tip"]?.catalogFingerprint == "abc")
        #expect(due.state[run: "tip"]?.catalogVersion == 1)
        // It is kept in the stored form, and read back.
        let stored = try FlowState(jsonText: try due.state[flow: "tip"].jsonText())
        #expect(stored.run?.catalogFingerprint == "abc")
    }
}
