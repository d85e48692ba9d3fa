import Foundation

/// Section 2: each product's flow committed event by event through ours (`TourSession` on a WAL
/// file) and through the raw SQLite floor, user by user in turn (``DurablePair``), beside two
/// stores a device could use instead (UserDefaults, a JSON file rewritten).
enum DurableSection {
    static func run(report: Report, users: Int, folder: URL, start: Date, oursOnly: Bool, floorOnly: Bool)
        async throws
    {
        report.section("2. Durable: each accepted event committed to a WAL file (\(users) users per product)")
        var totals = (ours: 0.0, raw: 0.0, defaults: 0.0, file: 0.0, events: 0)
        var allPairRatios: [Double] = []
        for journey in Journey.all {
            let product = journey.perUser
            let app = product.catalog.app
            let paired = try await DurablePair.measure(
                journey, users: users, folder: folder, start: start, withFloor: !oursOnly,
                withOurs: !floorOnly)
            let (ours, committed, rawTime) = (paired.ours, paired.committed, paired.raw)
            allPairRatios += paired.pairRatios
            if oursOnly {
                report.add(
                    "durable", "\(journey.name): ours (TourSession)", Double(committed) / ours, "events/s")
                continue
            }
            if floorOnly {
                report.add(
                    "durable", "\(journey.name): raw SQLite floor",
                    Double(users * journey.events.count) / rawTime, "events/s")
                continue
            }
            let writes = try journey.writes(from: start)
            let states = try journey.steps(engine: product.engine, from: start)
            // The baselines keep every user in one store, as a device keeps its one user: beyond 100 users
            // the store's own growth (one property list rewritten whole) would be what they measure.
            let baselineUsers = min(users, 100)
            let baselineEvents = Double(baselineUsers * writes.count)
            let defaults = DefaultsBaseline()
            defer { defaults.remove() }
            let defaultsTime = try await time {
                for user in 0..<baselineUsers {
                    for step in states {
                        try defaults.commit(
                            app: app, user: "u\(user)", state: step.transition.state, domain: step.domain)
                    }
                }
            }
            let files = JSONFileBaseline(folder: folder)
            let fileTime = try await time {
                for user in 0..<baselineUsers {
                    for step in states {
                        try files.commit(
                            app: app, user: "u\(user)", state: step.transition.state, domain: step.domain)
                    }
                }
            }
            let events = Double(users * writes.count)
            report.add("durable", "\(journey.name): ours (TourSession)", Double(committed) / ours, "events/s")
            report.add("durable", "\(journey.name): raw SQLite floor", events / rawTime, "events/s")
            report.add(
                "durable", "\(journey.name): UserDefaults + synchronize", baselineEvents / defaultsTime,
                "events/s")
            report.add(
                "durable", "\(journey.name): JSON file rewritten", baselineEvents / fileTime, "events/s")
            report.add(
                "durable", "\(journey.name): ours / raw (time per event, the sums)",
                (ours / Double(committed)) / (rawTime / events), "×")
            let medianOfPairs = median(paired.pairRatios)
            report.add(
                "durable", "\(journey.name): ours / raw (median of the users' pairs)", medianOfPairs, "×")
            report.goal("durable event, \(journey.name): ours / raw SQLite", medianOfPairs, atMost: 1.2, "×")
            totals.ours += ours / Double(committed) * events
            totals.raw += rawTime
            totals.defaults += defaultsTime / baselineEvents * events
            totals.file += fileTime / baselineEvents * events
            totals.events += Int(events)
        }
        if !oursOnly && !floorOnly {
            report.add(
                "durable", "all five: ours / raw (time per event, the sums)", totals.ours / totals.raw, "×")
            let medianOfAll = median(allPairRatios)
            report.add("durable", "all five: ours / raw (median of the users' pairs)", medianOfAll, "×")
            report.goal("durable event, all five: ours / raw SQLite", medianOfAll, atMost: 1.2, "×")
            report.add(
                "durable", "all five: UserDefaults / ours (time per event)", totals.defaults / totals.ours,
                "×")
            report.add(
                "durable", "all five: JSON file / ours (time per event)", totals.file / totals.ours, "×")
        }
    }
}
