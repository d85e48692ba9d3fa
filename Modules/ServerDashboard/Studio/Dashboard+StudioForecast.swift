import CatalogDocuments
import Foundation
import InsightsPages
import OnboardingServer
import ServerPublishing
import TourCodec
import TourCore

/// What a draft, a publication or a rollback does to the users of every version devices run now
/// (during a partial rollout, the new version's users and the rest, still on the one before), in
/// the studio's words and tables: where they go is ``PublicationForecast``'s (ServerPublishing).
extension Dashboard {
    /// For `flow`, every step any of `versions` has, its waiting journeys (the insights' counts),
    /// and where `target`'s migrations put each version's users on it (``PublicationForecast``).
    func fates(
        app: String, flow: FlowID, versions: [(CatalogStore.Entry, FlowDefinition)], target: TourCatalog
    ) async throws -> [PublicationForecast.StepFate] {
        let stages = try await (insights.journeyStages(app: app, flow: flow.rawValue, range: nil))
        let waiting = Dictionary(
            stages.filter { $0.measure == "step" }.map { ($0.step, $0.waiting) }, uniquingKeysWith: +)
        return PublicationForecast.fates(of: flow, versions: versions, under: target, waiting: waiting)
    }

    /// What publishing `document` does to users mid-flow, against every version devices run now:
    /// per flow that moves anyone, a line per moved step with its users and the step they go on
    /// at, and the table of every step (the confirmation page shows both).
    func publishForecast(app: String, live: [CatalogStore.Entry], document: CatalogDocument) async throws
        -> (lines: [String], tables: [InsightsPage.Table])
    {
        var lines: [String] = []
        var tables: [InsightsPage.Table] = []
        for flow in document.catalog.flows {
            let versions = PublicationForecast.flows(flow.id, of: live)
            let fates = try await fates(app: app, flow: flow.id, versions: versions, target: document.catalog)
            var moved = false
            for fate in fates {
                for ((entry, _), where_) in zip(versions, fate.fates) {
                    guard let where_, where_ != "stay on \(fate.step)" else { continue }
                    moved = true
                    lines.append(
                        """
                        \(flow.id) step \(fate.step) (\(Self.users(fate.waiting)) waiting there): \
                        from version \(entry.version) they \(where_).
                        """
                    )
                }
            }
            if moved, let table = Self.forecastTable(flow: flow.id, versions: versions, fates: fates) {
                tables.append(table)
            }
        }
        if lines.isEmpty {
            lines = ["Users mid-flow stay on their step: no step they can be on is removed or renamed."]
        }
        return (lines, tables)
    }

    /// What withdrawing (or lowering) `entry` does to the users who go back to `below`: a run on a
    /// step only `entry` has goes by its flow's policy; a run `entry`'s migrations moved, on a
    /// device that has not acted since, was only displayed moved (views move runs, the next event
    /// stores the move), so it goes back to where it was.
    func rollbackForecast(app: String, entry: CatalogStore.Entry, below: CatalogStore.Entry?) async throws
        -> [String]
    {
        guard let below, let new = try? CatalogDocument(text: entry.document).catalog,
            let old = try? CatalogDocument(text: below.document).catalog
        else { return [] }
        let to =
            below.source == .published
            ? "published version \(below.version)" : "version \(below.version) (in binaries)"
        var lines: [String] = []
        var displayed: [String] = []
        for flow in new.flows {
            // Users who took `entry` on a step only it has.
            for fate in try await fates(
                app: app, flow: flow.id, versions: PublicationForecast.flows(flow.id, of: [entry]),
                target: old)
            {
                guard let where_ = fate.fates.first ?? nil, where_ != "stay on \(fate.step)" else { continue }
                lines.append(
                    """
                    \(flow.id) step \(fate.step) is only in version \(entry.version) (\
                    \(Self.users(fate.waiting)) waiting there): on \(to) they \(where_).
                    """
                )
            }
            // Moves `entry` made that a device may only have displayed.
            for fate in try await fates(
                app: app, flow: flow.id, versions: PublicationForecast.flows(flow.id, of: [below]),
                target: new)
            {
                guard let where_ = fate.fates.first ?? nil, where_ != "stay on \(fate.step)" else { continue }
                displayed.append(
                    """
                    \(flow.id) \(fate.step), where version \(entry.version) has them \(where_) (\
                    \(Self.users(fate.waiting)) waiting)
                    """
                )
            }
        }
        if !displayed.isEmpty {
            lines.append(
                """
                A device that took version \(entry.version) has its runs on these steps moved as it shows \
                them, but the move is stored only with the user's next act: one that has not acted since \
                goes back to the step it was on in \(to): \(displayed.joined(separator: "; ")). \
                One that acted keeps its step where \(to) has it.
                """
            )
        }
        return lines.isEmpty
            ? [
                """
                No user mid-flow moves: \(to) has every step version \(entry.version) has, \
                and version \(entry.version) moved no one.
                """
            ] : lines
    }

    static func users(_ count: Int) -> String { count == 1 ? "1 user" : "\(count) users" }

    /// The forecast for users mid-flow: the journeys the server counts waiting at each step of
    /// every version devices run now (during a partial rollout, the users outside it too), and
    /// where the draft's migrations put the users of each version.
    func forecast(app: String, flow: FlowID, live: [CatalogStore.Entry], draft: TourCatalog) async throws
        -> InsightsPage.Table?
    {
        let versions = PublicationForecast.flows(flow, of: live)
        guard !versions.isEmpty else { return nil }
        return Self.forecastTable(
            flow: flow, versions: versions,
            fates: try await fates(app: app, flow: flow, versions: versions, target: draft))
    }

    static func forecastTable(
        flow: FlowID, versions: [(CatalogStore.Entry, FlowDefinition)], fates: [PublicationForecast.StepFate]
    )
        -> InsightsPage.Table?
    {
        guard !versions.isEmpty else { return nil }
        let names = versions.map { entry, _ in
            """
            From version \(entry.version) (\
            \(entry.source == .published ? "at \(entry.rollout)%" : "in binaries")) they
            """
        }
        return .init(
            caption:
                """
                Users mid-flow in \(flow) on the versions devices run now (\
                \(versions.map { String($0.0.version) }.joined(separator: ", "))), by step (journeys the \
                server counts waiting there), and where this draft puts them
                """,
            columns: ["Step", "Waiting there"] + names,
            rows: fates.map { fate in
                [.init(fate.step.rawValue), .number(fate.waiting)] + fate.fates.map { .init($0 ?? "–") }
            })
    }
}
