import AccountSync
import CatalogDocuments
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import TourCodec
import TourCore

/// An app's tracking plan: the flows, steps and experiments that some registered or published
/// catalog of the app declares, in any version (so old devices keep counting). Facts outside it
/// (a typo in a new build, a probe) are kept apart in `unplanned_facts`, never counted in a funnel,
/// and listed for the team ("facts no catalog declares"). An app with no catalog registered or
/// published has no plan yet: its facts are all taken.
public struct TrackingPlan: Sendable, Equatable {
    var flows: Set<String> = []
    /// "FLOW\u{1F}STEP" and "FLOW\u{1F}EXPERIMENT".
    var steps: Set<String> = []
    var experiments: Set<String> = []
    /// The app's plan generation these documents were read at (``HeldFacts``; 0 before v26): facts
    /// this plan sets apart are stamped with it, so those of an older plan are examined again.
    package var generation: Int64 = 0

    package init(documents: [String]) {
        for text in documents {
            guard let catalog = try? CatalogDocument(text: text).catalog else { continue }
            for flow in catalog.flows {
                flows.insert(flow.id.rawValue)
                for step in flow.steps { steps.insert(flow.id.rawValue + "\u{1F}" + step.id.rawValue) }
                if let experiment = flow.experiment {
                    experiments.insert(flow.id.rawValue + "\u{1F}" + experiment.id)
                }
            }
        }
    }

    /// Whether a fact (as a device pushes it) names only what the plan declares.
    package func declares(_ fact: TourValue) -> Bool {
        let object = fact.objectValue ?? [:]
        return declares(
            flow: object["flow"]?.stringValue, step: object["step"]?.stringValue,
            experiment: object["experiment"]?.stringValue)
    }

    /// Whether the plan declares a flow, and the step and experiment when they are named.
    func declares(flow: String?, step: String?, experiment: String?) -> Bool {
        guard let flow, flows.contains(flow) else { return false }
        if let step, !steps.contains(flow + "\u{1F}" + step) { return false }
        if let experiment, !experiments.contains(flow + "\u{1F}" + experiment) { return false }
        return true
    }

    /// v12: facts no catalog of the app declares, one row per (app, flow, step, kind, subject,
    /// device) with when it was first and last seen and how many came.
    package static let v12 = [
        """
        CREATE TABLE unplanned_facts (
            app TEXT NOT NULL,
            flow TEXT NOT NULL,
            step TEXT NOT NULL,
            kind TEXT NOT NULL,
            account TEXT NOT NULL,
            device TEXT NOT NULL,
            first_at DOUBLE PRECISION NOT NULL,
            last_at DOUBLE PRECISION NOT NULL,
            facts BIGINT NOT NULL,
            PRIMARY KEY (app, flow, step, kind, account, device)
        )
        """
    ]
}

/// A fact set apart: enough to list it (what, where, when), and the fact itself, held until a
/// plan declares it (``HeldFacts``).
package struct UnplannedFact: Sendable, Equatable {
    package var seq: Int64
    package var time: Double
    package var kind: String
    package var flow: String
    /// Its step, else its experiment, as the team's list names it.
    package var step: String
    package var held: HeldFact

    package init(seq: Int64, time: Double, kind: String, flow: String, step: String, held: HeldFact) {
        self.seq = seq
        self.time = time
        self.kind = kind
        self.flow = flow
        self.step = step
        self.held = held
    }
}

/// A fact as `held_facts` keeps it: its columns as `facts` would have them, and the plan
/// generation that set it apart.
package struct HeldFact: Sendable, Equatable {
    package var index: Int64
    package var kind: String
    package var flow: String
    package var step: String
    package var stepIndex: Int64
    package var ending: String
    package var body: String
    package var generation: Int64

    package init(index: Int64, fact: TourValue, generation: Int64) {
        let object = fact.objectValue ?? [:]
        self.index = index
        kind = object["fact"]?.stringValue ?? ""
        flow = object["flow"]?.stringValue ?? ""
        step = object["step"]?.stringValue ?? ""
        stepIndex = Int64(object["index"]?.intValue ?? 0)
        ending = object["ending"]?.stringValue ?? ""
        // A fact read from JSON has only finite numbers, so it always has a text.
        body = (try? fact.jsonText()) ?? "{}"
        self.generation = generation
    }
}
