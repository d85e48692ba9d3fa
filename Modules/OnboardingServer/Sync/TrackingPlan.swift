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
    var generation: Int64 = 0

    init(documents: [String]) {
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
    func declares(_ fact: TourValue) -> Bool {
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
    static let v12 = [
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

/// Each app's plan, read from its catalogs and kept in this process: looked at again at most every
/// five seconds (one cheap query: the count and newest time of the app's catalogs), and **always**
/// before a fact outside the held plan is set apart: a device runs a new flow or experiment only
/// after its catalog was published (committed), so a plan read after the push arrived, on the
/// primary, declares whatever the push can carry; a fact is set apart only when the newest
/// committed plan does not declare it. Plans only grow, so a held plan never sets apart what a read
/// one would take. (A push with facts that no catalog declares pays the cheap query each time; the
/// documents are read again only when a catalog was added.)
final class TrackingPlans: Sendable {
    private struct Cached {
        var signature: String
        var plan: TrackingPlan?
        var checkedAt: ContinuousClock.Instant
    }

    private let cache = Locked<[String: Cached]>([:])
    let reads: ReadOnlyDatabase

    init(reads: ReadOnlyDatabase) { self.reads = reads }

    /// The app's plan (nil: none yet, every fact is taken), no older than `maximumAge`, read within
    /// `deadline`.
    func plan(app: String, maximumAge: Duration, within deadline: Duration) async throws -> TrackingPlan? {
        let now = ContinuousClock.now
        let cached = cache.withLock { $0[app] }
        if let cached, now - cached.checkedAt < maximumAge { return cached.plan }
        let held = cached?.signature
        let (signature, generation, documents) = try await reads.read(within: deadline) {
            connection, logger -> (String, Int64, [String]?) in
            var signature = ""
            var generations = false
            for try await (count, newest, exists) in try await connection.query(
                """
                SELECT count(*)::bigint, coalesce(max(recorded_at), 0)::float8,
                    to_regclass('tracking_plan_generations') IS NOT NULL
                FROM catalogs WHERE app = \(app)
                """, logger: logger
            ).decode((Int64, Double, Bool).self) {
                signature = "\(count)/\(newest)"
                generations = exists
            }
            if signature == held { return (signature, 0, nil) }
            // The generation is read before the documents: they are at least as new, so a fact is
            // never stamped with a generation newer than the plan that set it apart. (A database
            // not yet migrated to v26 has none.)
            var generation: Int64 = 0
            if generations {
                for try await current in try await connection.query(
                    "SELECT generation FROM tracking_plan_generations WHERE app = \(app)", logger: logger
                ).decode(Int64.self) {
                    generation = current
                }
            }
            var documents: [String] = []
            for try await document in try await connection.query(
                "SELECT document FROM catalogs WHERE app = \(app)", logger: logger
            )
            .decode(String.self) {
                documents.append(document)
            }
            return (signature, generation, documents)
        }
        guard let documents else {
            cache.withLock { $0[app]?.checkedAt = now }
            return cached?.plan
        }
        var plan = documents.isEmpty ? nil : TrackingPlan(documents: documents)
        plan?.generation = generation
        cache.withLock { $0[app] = Cached(signature: signature, plan: plan, checkedAt: now) }
        return plan
    }

    /// `request` with the facts its app's plan does not declare moved to its `unplanned` list:
    /// split by the plan held when it is fresh enough (``splitWithoutReading(_:now:)`` holds the
    /// rules), else by the plan read now, within `deadline`.
    func split(_ request: PushRequest, within deadline: Duration) async throws -> PushRequest {
        if let split = splitWithoutReading(request) { return split }
        // Read now, after the push arrived: it declares whatever was committed before.
        let plan = try await plan(app: request.app, maximumAge: .zero, within: deadline)
        return plan.map { Self.apply($0, to: request) } ?? request
    }

    /// What ``split(_:)`` answers, when the plan held answers it; nil when it must read. The rules:
    /// a plan is held five seconds for facts it declares; "no plan yet" (every fact taken) is
    /// looked at again every second, so the first catalog registered starts it soon; and a fact
    /// outside the held plan is never set apart by it: the plan is read first (a catalog may have
    /// been published a moment ago, by this process or another). The server's pushes nearly always
    /// find their plan held, and so skip the bound on the read (a task, a timer and two hops of the
    /// push between threads), which only a read needs.
    func splitWithoutReading(_ request: PushRequest, now: ContinuousClock.Instant = .now) -> PushRequest? {
        guard let cached = cache.withLock({ $0[request.app] }), now - cached.checkedAt < .seconds(5) else {
            return nil
        }
        guard let plan = cached.plan else { return now - cached.checkedAt >= .seconds(1) ? nil : request }
        if Self.hasUndeclaredFacts(request, plan) { return nil }
        return Self.apply(plan, to: request)
    }

    private static func hasUndeclaredFacts(_ request: PushRequest, _ plan: TrackingPlan) -> Bool {
        request.batch.items.contains { $0.facts.contains { !plan.declares($0) } }
    }

    /// `request` with the facts `plan` does not declare moved to its `unplanned` list.
    private static func apply(_ plan: TrackingPlan, to request: PushRequest) -> PushRequest {
        var request = request
        for index in request.batch.items.indices {
            let item = request.batch.items[index]
            guard item.facts.contains(where: { !plan.declares($0) }) else { continue }
            for (index, fact) in item.facts.enumerated() where !plan.declares(fact) {
                let object = fact.objectValue ?? [:]
                request.unplanned.append(
                    UnplannedFact(
                        seq: item.seq, time: item.time,
                        kind: String((object["fact"]?.stringValue ?? "").prefix(64)),
                        flow: String((object["flow"]?.stringValue ?? "").prefix(128)),
                        step: String(
                            (object["step"]?.stringValue ?? object["experiment"]?.stringValue ?? "").prefix(
                                128)),
                        held: HeldFact(index: Int64(index), fact: fact, generation: plan.generation)))
            }
            request.keptFactIndexes[item.seq] = item.facts.indices.filter { plan.declares(item.facts[$0]) }
                .map(Int64.init)
            request.batch.items[index].facts = item.facts.filter(plan.declares)
        }
        return request
    }
}

/// A fact set apart: enough to list it (what, where, when), and the fact itself, held until a
/// plan declares it (``HeldFacts``).
struct UnplannedFact: Sendable, Equatable {
    var seq: Int64
    var time: Double
    var kind: String
    var flow: String
    /// Its step, else its experiment, as the team's list names it.
    var step: String
    var held: HeldFact
}

/// A fact as `held_facts` keeps it: its columns as `facts` would have them, and the plan
/// generation that set it apart.
struct HeldFact: Sendable, Equatable {
    var index: Int64
    var kind: String
    var flow: String
    var step: String
    var stepIndex: Int64
    var ending: String
    var body: String
    var generation: Int64

    init(index: Int64, fact: TourValue, generation: Int64) {
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
