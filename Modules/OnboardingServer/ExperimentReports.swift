import Foundation
import Logging
import PostgresNIO
import TourCodec
import TourCore

/// `GET /v1/apps/{app}/report?by=variant`: every experiment the app's devices assigned, counted
/// from the pushed facts (distinct subjects per variant), with each experiment's control and goal
/// from the newest catalog document this server holds that declares it.
extension AccountStore {
    public func experimentReports(app: String, catalogs: CatalogStore) async throws -> ExperimentReports {
        let logger = logger
        var counts: [String: [String: ExperimentReport.Counts]] = [:]
        var flows: [String: String] = [:]
        var order: [String] = []
        try await client.withConnection { connection in
            let arms = try await connection.query(
                """
                SELECT body->>'experiment', min(flow), body->>'variant', kind, count(DISTINCT body->>'subject')
                FROM facts WHERE app = \(app) AND kind IN ('assigned', 'exposed', 'goalReached')
                GROUP BY 1, 3, 4 ORDER BY 1, 3
                """, logger: logger)
            for try await (experiment, flow, variant, kind, subjects) in arms.decode(
                (String, String, String, String, Int64).self)
            {
                if !order.contains(experiment) { order.append(experiment) }
                flows[experiment] = flow
                var tally = counts[experiment, default: [:]][variant, default: ExperimentReport.Counts()]
                switch kind {
                case "assigned": tally.assigned = Int(subjects)
                case "exposed": tally.exposed = Int(subjects)
                default: tally.goalReached = Int(subjects)
                }
                counts[experiment, default: [:]][variant] = tally
            }
            // Steps each assigned subject entered on the device that assigned it, after the assignment.
            let steps = try await connection.query(
                """
                SELECT a.body->>'experiment', a.body->>'variant', s.step, min(s.step_index),
                    count(DISTINCT a.body->>'subject')
                FROM facts s JOIN facts a
                    ON a.app = s.app AND a.account = s.account AND a.device = s.device AND a.flow = s.flow
                    AND a.kind = 'assigned' AND (a.seq, a.idx) < (s.seq, s.idx)
                WHERE s.app = \(app) AND s.kind = 'stepEntered'
                GROUP BY 1, 2, 3 ORDER BY 1, 2, 4, 3
                """, logger: logger)
            for try await (experiment, variant, step, _, subjects) in steps.decode(
                (String, String, String, Int64, Int64).self)
            {
                counts[experiment, default: [:]][variant, default: ExperimentReport.Counts()].steps.append(
                    (step, Int(subjects)))
            }
        }
        // Each experiment as the newest document declaring it says (published or compiled).
        var declared: [String: (flow: FlowDefinition, experiment: Experiment)] = [:]
        for entry in try await catalogs.all(app: app).reversed() where entry.withdrawnAt == nil {
            guard let document = try? CatalogDocument(text: entry.document) else { continue }
            for (flow, experiment) in document.catalog.experiments where declared[experiment.id] == nil {
                declared[experiment.id] = (flow, experiment)
            }
        }
        return ExperimentReports(
            app: app,
            experiments: order.map { id in
                var byVariant = counts[id] ?? [:]
                if let flow = declared[id]?.flow {
                    // Steps in the flow's order, then steps it no longer has.
                    let current = flow.steps.map(\.id.rawValue)
                    byVariant = byVariant.mapValues { tally in
                        var tally = tally
                        tally.steps.sort { a, b in
                            (current.firstIndex(of: a.step) ?? Int.max, a.step) < (current.firstIndex(of: b.step) ?? Int.max, b.step)
                        }
                        return tally
                    }
                }
                return ExperimentReport(
                    experiment: id, flow: declared[id]?.flow.id.rawValue ?? flows[id] ?? "",
                    declared: declared[id]?.experiment, counts: byVariant)
            })
    }
}

/// The body of `GET /v1/apps/{app}/report?by=variant`.
public struct ExperimentReports: Equatable, Sendable, TourValueEncodable {
    public var app: String
    public var experiments: [ExperimentReport]

    public var tourValue: TourValue {
        ["app": .string(app), "experiments": .list(experiments.map(\.tourValue))]
    }
}
