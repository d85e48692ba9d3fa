import Foundation
import OnboardingServer
import ServerSyncAPI
import ServerTokens
import TourFixtures

/// Section 7, insights at scale: accounts seeded and counted, every dashboard page and the report
/// API timed beside the full scan, and erasures checked against a recount. `option` reads the
/// command line (`--insight-accounts`).
func insightsSection(
    serverURL: String, databaseURL: String, secret: String, smoke: Bool, option: (String) -> String?,
    report: Report
) async throws {
    let accounts = option("--insight-accounts").flatMap(Int.init) ?? (smoke ? 2_000 : 1_000_000)
    let load = InsightsLoad(
        server: try URL(checking: serverURL), database: try DatabaseURL(databaseURL),
        signer: try TokenSigner(secret: secret),
        accounts: accounts)
    report.section(
        """
        7. Insights: \(accounts) accounts seeded (about ten facts each) and counted by the insights \
        job, then every dashboard page and the report API (20 requests each), beside the full scan \
        the report made before 0.13
        """
    )
    let seeded = try await load.seed()
    report.add("insights", "seeded facts", Double(seeded.facts), "facts")
    report.add("insights", "seeding and counting", Double(seeded.facts) / seeded.seconds, "facts/s")
    let (timings, perView) = try await load.pages(runs: 20)
    report.add(
        "insights", "the primary per page view: transaction ids used (writes)", perView.xids, "ids",
        note: "beyond the catch-up job's own, measured idle first")
    report.add(
        "insights", "the primary per page view: transactions ended (reads too)", perView.transactions,
        "transactions")
    report.goal("write transactions on the primary per page view", perView.xids, atMost: 0.1, "ids")
    for timing in timings {
        report.add("insights", "\(timing.name): p50", timing.p50, "ms")
        report.add("insights", "\(timing.name): p95", timing.p95, "ms")
        // The dashboard's goal: every page under 50 ms at p95, the drill-down (subjects and timelines)
        // under 100.
        let drill = timing.name.contains("drill-down") || timing.name.contains("timeline")
        report.goal("\(timing.name) p95 at \(accounts) accounts", timing.p95, atMost: drill ? 100 : 50, "ms")
    }
    let scan = try await load.scan(runs: 3)
    report.add("insights", "\(scan.name): p50", scan.p50, "ms")
    report.add("insights", "\(scan.name): slowest of 3", scan.p95, "ms")
    // Erasure: a thousand subjects, one transaction each, every aggregate corrected.
    let erasures = smoke ? 20 : 1_000
    let erased = try await load.erase(erasures)
    report.add("insights", "erase one of \(accounts) accounts: p50", percentile(erased.times, 0.5), "ms")
    report.add("insights", "erase one of \(accounts) accounts: p95", percentile(erased.times, 0.95), "ms")
    report.goal(
        "erasure p95 at \(accounts) accounts (\(erasures) erased)", percentile(erased.times, 0.95),
        atMost: 100, "ms")
    report.goal(
        "figures that differ from a recount after \(erasures) erasures", Double(erased.recountDiffers),
        atMost: 0, "figures")
    // Beside the scan, in the goals table: the slowest page over the full scan of every fact (what
    // /report took before the aggregates), which the aggregates keep at a tenth or less.
    if let slowest = timings.max(by: { $0.p95 < $1.p95 }) {
        report.goal(
            """
            slowest page p95 (\(Report.format(slowest.p95)) ms) / full scan p50 \
            (\(Report.format(scan.p50)) ms)
            """,
            slowest.p95 / scan.p50, atMost: 0.1, "×")
    }
}
