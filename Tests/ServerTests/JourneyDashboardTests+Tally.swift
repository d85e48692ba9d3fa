import Foundation
import InsightsPages
import Testing

/// The test's own tally: each device's first run of a flow read from its journal, and the stages
/// the flow page should show for them.
extension JourneyDashboardTests {
    /// One device's first run of a flow, from its own journal.
    struct Journey {
        var account: String
        var start: Double?
        var reaches: [String: Double] = [:]
        var indexes: [String: Int] = [:]
        var completedAt: Double?
        var skippedAt: String?
        /// The first run's first ending: nothing after it counts in the journey (v17).
        var endedAt: Double?
        var furthest: String = ""
        var variant: String?
        var facts = 0

        var standing: String { completedAt != nil ? "completed" : skippedAt != nil ? "skipped" : "waiting" }
    }

    static func journey(_ device: Device, flow: String) throws -> Journey {
        let text = try device.run("journal", "--json", offline: true).stdout
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        var journey = Journey(account: device.account)
        var furthestIndex = 0
        for row in rows {
            let time = try #require(row["time"] as? Double)
            let facts = row["facts"] as? [[String: Any]] ?? []
            journey.facts += facts.count
            for fact in facts where fact["flow"] as? String == flow {
                switch fact["fact"] as? String {
                case "flowStarted":
                    if journey.start == nil, fact["replay"] as? Bool != true { journey.start = time }
                case "stepEntered" where journey.endedAt == nil:
                    let step = fact["step"] as? String ?? ""
                    let index = fact["index"] as? Int ?? 0
                    if journey.reaches[step] == nil { journey.reaches[step] = time }
                    journey.indexes[step] = min(journey.indexes[step] ?? index, index)
                    if journey.start != nil, index > furthestIndex {
                        furthestIndex = index
                        journey.furthest = step
                    }
                case "flowEnded" where journey.start != nil && journey.endedAt == nil:
                    journey.endedAt = time
                    let ending = fact["ending"] as? String
                    if ending == "completed" { journey.completedAt = time }
                    if ending == "skipped" || ending == "dismissed" { journey.skippedAt = journey.furthest }
                case "assigned": journey.variant = journey.variant ?? fact["variant"] as? String
                default: break
                }
            }
        }
        return journey
    }

    /// The stages the page should show for `journeys`, in its order, each with reached, skipped,
    /// abandoned and the two time percentiles (ms, bucketed as the server keeps them).
    static func expectedStages(_ journeys: [Journey]) -> [(
        label: String, reached: Int, skipped: Int, abandoned: Int, p50: Int?, p75: Int?
    )] {
        let started = journeys.filter { $0.start != nil }
        var steps: [String: Int] = [:]
        for journey in started {
            for (step, index) in journey.indexes { steps[step] = min(steps[step] ?? index, index) }
        }
        let ordered = steps.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
        func times(_ reach: (Journey) -> Double?) -> [(millis: Int, count: Int)] {
            started.compactMap { journey in
                guard let at = reach(journey), let start = journey.start, at >= start else { return nil }
                return (StageTimes.bucket(milliseconds: Int(((at - start) * 1000).rounded())), 1)
            }
        }
        func stage(_ label: String, _ step: String?, reach: (Journey) -> Double?) -> (
            String, Int, Int, Int, Int?, Int?
        ) {
            let reached = started.filter { reach($0) != nil }.count
            let here = step ?? ""
            let skipped = label == "completed" ? 0 : started.filter { $0.skippedAt == here }.count
            let abandoned =
                label == "completed"
                ? 0 : started.filter { $0.standing == "waiting" && $0.furthest == here }.count
            let histogram = label == "started" ? [] : times(reach)
            return (
                label, reached, skipped, abandoned, StageTimes.percentile(histogram, 0.5),
                StageTimes.percentile(histogram, 0.75)
            )
        }
        return [stage("started", nil) { $0.start }]
            + ordered.map { step in stage("step \(step)", step) { $0.reaches[step] } }
            + [stage("completed", nil) { $0.completedAt }]
    }
}
