import AccountSync
import CatalogDocuments
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import ServerKit
import ServerPublishing
import TourCodec
import TourCore

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
