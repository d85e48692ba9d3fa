import CatalogDocuments
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import ServerInsights
import ServerPublishing
import TourCodec
import TourCore

/// `GET /v1/apps/{app}/report?by=variant`: every experiment the app's devices assigned, counted
/// from the aggregates of the pushed facts (distinct subjects per variant), with each experiment's
/// control and goal from the newest catalog document this server holds that declares it.
extension AccountStore {
    package func experimentReports(app: String, history: any PublicationHistory) async throws
        -> ExperimentReports
    {
        let (counts, flows, order) = try await reads.read(within: ReadOnlyDatabase.reportDeadline) {
            connection, logger in
            var counts: [String: [String: ExperimentReport.Counts]] = [:]
            var flows: [String: String] = [:]
            var order: [String] = []
            // The aggregates the catch-up keeps (`InsightsSchema`): each subject counted once per
            // variant and milestone; steps are those entered after the assignment, on its device.
            for arm in try await InsightsProgress.armCounts(app: app, on: connection, logger: logger) {
                let experiment = arm.experiment
                if !order.contains(experiment) { order.append(experiment) }
                flows[experiment] = flows[experiment] ?? arm.flow
                var tally = counts[experiment, default: [:]][arm.variant, default: ExperimentReport.Counts()]
                switch arm.milestone {
                case "assigned": tally.assigned = arm.subjects
                case "exposed": tally.exposed = arm.subjects
                case "goalReached": tally.goalReached = arm.subjects
                default: tally.steps.append((arm.step, arm.subjects))
                }
                counts[experiment, default: [:]][arm.variant] = tally
            }
            return (counts, flows, order)
        }
        // Each experiment as the newest document declaring it says (published or compiled).
        var declared: [String: (flow: FlowDefinition, experiment: Experiment)] = [:]
        for entry in try await history.all(app: app).reversed() where entry.withdrawnAt == nil {
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
                            (current.firstIndex(of: a.step) ?? Int.max, a.step) < (
                                current.firstIndex(of: b.step) ?? Int.max, b.step
                            )
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
