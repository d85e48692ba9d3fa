import Foundation
import OnboardingServer
import ServerSyncAPI
import ServerTokens
import TourFixtures
import TourRuntime

// The onboarding benchmarks: engine only, durable commits against raw SQLite and the seeds'
// UserDefaults, scale to a million users, and CLI cold start. Not a test: it measures.
// Run: scripts/bench (release build; figures in Docs/Performance.md). CI runs `--smoke`.

let arguments = CommandLine.arguments
let smoke = arguments.contains("--smoke")
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
let sizes =
    option("--sizes").map { $0.split(separator: ",").compactMap { Int($0) } }
    ?? (smoke ? [1_000] : [10_000, 100_000, 1_000_000])
let journalEvents = option("--journal").flatMap(Int.init) ?? (smoke ? 10_000 : 1_000_000)
/// `--sections 2,4` runs only those sections (for profiling one of them); all by default.
let sections = Set(
    option("--sections").map { $0.split(separator: ",").compactMap { Int($0) } } ?? [1, 2, 3, 4, 5, 6, 7, 8])
/// `--ours-only` / `--floor-only`: section 2 measures only our durable path, or only the raw SQLite
/// floor (to profile or trace one of them alone).
let oursOnly = arguments.contains("--ours-only")
let floorOnly = arguments.contains("--floor-only")
/// `--guard`: CI's guard (scripts/bench-guard): the device sections at a size that takes a minute
/// or two, and the run fails (exit 1) when a guarded ratio is over its line (``Guard``).
let guarding = arguments.contains("--guard")
/// `--suite-wall SECONDS`: the cross-app suite's wall time, measured by scripts/bench-guard beside
/// this run, judged in units of section 1's engine event time (a ratio of the same run).
let suiteWall = option("--suite-wall").flatMap(Double.init)
let engineRounds = smoke ? 200 : 5_000
/// Section 1's engine, all five products: events per second (the suite's yardstick).
var engineEventsPerSecond: Double?
/// Users per product in section 2 (`--durable-users N`): enough that a stall of the disk or a burst of
/// other work on the machine is a small part of either side of the ratio.
let durableUsers = option("--durable-users").flatMap(Int.init) ?? (smoke ? 5 : 500)
let start = Date(timeIntervalSince1970: 1_767_603_600)
let report = Report()
let folder = URL(fileURLWithPath: option("--dir") ?? NSTemporaryDirectory()).appendingPathComponent(
    "onboarding-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

// MARK: 1. Engine only

if sections.contains(1) {
    report.section("1. Engine only: each product's whole flow through the pure engine, no I/O")
    var engineTotals = (events: 0, seconds: 0.0)
    for journey in Journey.all {
        let engine = journey.product.engine
        let events = journey.events.count
        // The best of three timings: the suite's guard divides by this rate, and a moment the machine was
        // busy elsewhere halved one product's single timing in a guard run (2026-11-29).
        var elapsed = Double.infinity
        for _ in 0..<3 {
            elapsed = min(
                elapsed,
                try await time {
                    for _ in 0..<engineRounds { _ = try journey.steps(engine: engine, from: start) }
                })
        }
        report.add(
            "engine", "\(journey.name) (\(events) events per flow)", Double(engineRounds * events) / elapsed,
            "events/s")
        engineTotals.events += engineRounds * events
        engineTotals.seconds += elapsed
    }
    engineEventsPerSecond = Double(engineTotals.events) / engineTotals.seconds
    report.add("engine", "all five", engineEventsPerSecond ?? 0, "events/s")
    if let suiteWall, let engineEventsPerSecond {
        // The suite's wall in a yardstick of the same run and machine: how many of the engine's own
        // events (release, no I/O) the machine reduces in that time.
        report.add("suite", "cross-app suite wall (scripts/bench-guard)", suiteWall, "s")
        report.goal(
            "cross-app suite wall, in engine events", suiteWall * engineEventsPerSecond, atMost: 3_900_000,
            "events")
    }
}

// MARK: 2. Durable

if sections.contains(2) {
    try await DurableSection.run(
        report: report, users: durableUsers, folder: folder, start: start,
        oursOnly: oursOnly, floorOnly: floorOnly)
}

// MARK: 3. Scale

if sections.contains(3) { report.section("3. Scale: users across the five products in one file") }
var largest: (path: String, users: Int)?
for size in sizes where sections.contains(3) || sections.contains(4) {
    let path = folder.appendingPathComponent("scale-\(size).sqlite").path
    let build = try await time { try Scale.populate(path: path, users: size, start: start) }
    report.add("scale", "\(size) users: build the file", build, "s")
    report.add("scale", "\(size) users: bytes per user", Double(fileSize(path)) / Double(size), "bytes")
    let latencies = try Scale.lookups(path: path, users: size, samples: smoke ? 500 : 5_000)
    report.add("scale", "\(size) users: launch lookup p50", percentile(latencies, 0.5) * 1e6, "µs")
    report.add(
        "scale", "\(size) users: launch lookup p99", percentile(latencies, 0.99) * 1e6, "µs")
    largest = (path, size)
    if size == sizes.max() {
        report.goal(
            "launch lookup p99 at \(size) users", percentile(latencies, 0.99) * 1000, atMost: 0.5, "ms")
    }
}
if sections.contains(3) {
    let path = folder.appendingPathComponent("journal.sqlite").path
    let rows = try Scale.populateJournal(path: path, events: journalEvents, start: start)
    // The floor first, then the rebuild, then the floor again: both see the file equally warm.
    var scan = try await time { _ = try Scale.scanRecordedStates(path: path) }
    let rebuild = try await time { _ = try Scale.rebuild(path: path) }
    scan = min(scan, try await time { _ = try Scale.scanRecordedStates(path: path) })
    report.add("scale", "rebuild from a \(rows)-event journal", rebuild, "s")
    report.add("scale", "rebuild per journal row", rebuild / Double(rows) * 1e6, "µs")
    report.add("scale", "raw SQLite scan of the same rows, per row", scan / Double(rows) * 1e6, "µs")
    report.goal("rebuild / raw scan of the same rows", rebuild / scan, atMost: 2, "×")
    report.goal(
        rows >= 1_000_000
            ? "rebuild 1,000,000 journal rows" : "rebuild 1,000,000 rows (from \(rows) rows, linear)",
        rebuild / Double(rows) * 1_000_000, atMost: 3, "s")
    try? FileManager.default.removeItem(atPath: path)
}

// MARK: 4. CLI cold start

if let largest, sections.contains(4) {
    report.section("4. CLI cold start on the \(largest.users)-user file (median of 15 runs)")
    let cli = ColdStart.run(
        executable: URL(fileURLWithPath: arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "lockedin"
        ).path,
        arguments: ["status", "--json", "--db", largest.path, "--user", "u\(largest.users / 2)"])
    let shell = ColdStart.run(
        executable: "/usr/bin/sqlite3",
        arguments: [largest.path, ColdStart.equivalentQuery(user: "u\(largest.users / 2)")])
    report.add("cold start", "lockedin status --json: wall", cli.seconds * 1000, "ms")
    report.add("cold start", "lockedin status --json: peak memory", Double(cli.peakKB) / 1024, "MiB")
    report.add("cold start", "sqlite3 shell, the same reads: wall", shell.seconds * 1000, "ms")
    report.add("cold start", "sqlite3 shell, the same reads: peak memory", Double(shell.peakKB) / 1024, "MiB")
    report.add("cold start", "lockedin / sqlite3 (wall)", cli.seconds / shell.seconds, "×")
    report.goal(
        "lockedin status --json cold start / sqlite3 (wall)", cli.seconds / shell.seconds, atMost: 2, "×")
    report.goal(
        "lockedin status --json / sqlite3 (peak memory)", Double(cli.peakKB) / Double(max(shell.peakKB, 1)),
        atMost: 2.5, "×")
    // What a signed publication costs a launch that runs one (swift-crypto's Ed25519), and the
    // binary that links it.
    let signature = try SignatureCheck.run(folder: folder, rounds: smoke ? 20 : 500)
    report.add(
        "cold start", "Ed25519 check of a \(signature.documentBytes)-byte catalog: median",
        signature.verify * 1e6, "µs")
    report.add(
        "cold start", "catalog choice with a kept signed publication: median", signature.chooseSigned * 1e6,
        "µs")
    report.add(
        "cold start", "catalog choice keeping none (no signature checked): median",
        signature.chooseNone * 1e6, "µs")
    let binary = URL(fileURLWithPath: arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "lockedin"
    ).path
    report.add("cold start", "lockedin binary", Double(fileSize(binary)) / 1_048_576, "MiB")
}

// MARK: 5. Account server

if sections.contains(5), let serverURL = option("--server-url"),
    let databaseURL = ProcessInfo.processInfo.environment["DATABASE_URL"],
    let secret = ProcessInfo.processInfo.environment["ONBOARDING_SERVER_SECRET"]
{
    try await serverSection(
        serverURL: serverURL, databaseURL: databaseURL, secret: secret, smoke: smoke, option: option,
        report: report)
} else {
    report.section(
        """
        5. Account server: skipped (give --server-url, and DATABASE_URL and ONBOARDING_SERVER_SECRET in \
        the environment; scripts/bench does)
        """
    )
}

// MARK: 7. Insights at scale

if sections.contains(7), let serverURL = option("--server-url"),
    let databaseURL = ProcessInfo.processInfo.environment["DATABASE_URL"],
    let secret = ProcessInfo.processInfo.environment["ONBOARDING_SERVER_SECRET"]
{
    try await insightsSection(
        serverURL: serverURL, databaseURL: databaseURL, secret: secret, smoke: smoke, option: option,
        report: report)
} else if sections.contains(7) {
    report.section(
        """
        7. Insights: skipped (give --server-url, and DATABASE_URL and ONBOARDING_SERVER_SECRET in the \
        environment; scripts/bench does)
        """
    )
}

// MARK: 8. Past one machine (ClusterBench)
if sections.contains(8), let secret = ProcessInfo.processInfo.environment["ONBOARDING_SERVER_SECRET"] {
    let levels =
        option("--devices").map { Array($0.split(separator: ",").compactMap { Int($0) }.suffix(2)) }
        ?? (smoke ? [10] : [200, 1_000])
    let failovers = option("--failovers").flatMap(Int.init) ?? (smoke ? 1 : 3)
    let accounts = option("--replica-accounts").flatMap(Int.init) ?? (smoke ? 2_000 : 1_000_000)
    let cluster = ClusterBench(
        secret: secret, signer: try TokenSigner(secret: secret), report: report, duration: smoke ? 2 : 10)
    report.section(
        """
        8. Past one machine: a primary and a streaming standby, servers, nginx; \(failovers) failovers \
        each way; the dashboard on the replica
        """
    )
    let parts = Set(
        option("--cluster-parts").map { $0.split(separator: ",").map(String.init) } ?? [
            "replication", "failover", "auto-failover", "replica",
        ])
    if parts.contains("replication") { try await cluster.replicationAndServers(levels: levels) }
    if parts.contains("failover") {
        try await cluster.failovers(runs: failovers, devices: smoke ? 5 : 20, balanced: false)
        try await cluster.failovers(runs: failovers, devices: smoke ? 5 : 20, balanced: true)
    }
    if parts.contains("auto-failover") {
        try await cluster.autoFailovers(
            runs: option("--auto-failovers").flatMap(Int.init) ?? (smoke ? 1 : 10), devices: smoke ? 5 : 20)
    }
    if parts.contains("replica") {
        try await cluster.replicaPages(accounts: accounts, devices: smoke ? 10 : 200)
    }
} else if sections.contains(8) {
    report.section(
        "8. Past one machine: skipped (ONBOARDING_SERVER_SECRET in the environment; scripts/bench sets it)")
}

// MARK: 6. Cross-app regression suite

if sections.contains(6), let suiteFile = option("--suite") {
    // Timed by scripts/bench-suite (it runs the test suite, so not from here): one line per run,
    // "products wall-seconds states transitions", the products as they are, then with one added.
    let runs = try String(contentsOfFile: suiteFile, encoding: .utf8).split(separator: "\n").compactMap(
        SuiteRun.init)
    report.section("6. Cross-app regression suite (scripts/bench-suite: a debug build, as CI runs it)")
    for run in runs {
        report.add("suite", "\(run.products) products: wall", run.seconds, "s")
        report.add("suite", "\(run.products) products: states explored", Double(run.states), "states")
        report.add("suite", "\(run.products) products: wall per state", run.secondsPerState * 1000, "ms")
    }
    if let before = runs.first, let after = runs.last, after.products > before.products {
        report.add(
            "suite", "product added: wall added / the others' mean per product",
            (after.seconds - before.seconds) / (before.seconds / Double(before.products)), "×")
        report.goal("cross-app suite wall with \(after.products) products", after.seconds, atMost: 60, "s")
        // Sub-linear growth: what the suite costs per state explored does not rise as products are added.
        report.goal(
            "cross-app suite wall per state, \(after.products) products / \(before.products)",
            after.secondsPerState / before.secondsPerState,
            atMost: 1, "×")
    }
} else if sections.contains(6) {
    report.section("6. Cross-app regression suite: skipped (scripts/bench times it with scripts/bench-suite)")
}

report.printGoals(smoke: smoke)

let jsonPath = option("--json") ?? ".build/bench.json"
struct Output: Encodable {
    var figures: [Figure]
    var goals: [Goal]
}
let output = try JSONEncoder().encode(Output(figures: report.figures, goals: report.goals))
try output.write(to: URL(fileURLWithPath: jsonPath))
say("\nfigures written to \(jsonPath)")

if guarding {
    let failures = Guard.failures(report.goals)
    if failures.isEmpty {
        say("\nguard: every guarded ratio is within its line")
    } else {
        say("\nguard: FAILED, a device ratio slid past its line:")
        for failure in failures { say("  " + failure) }
        exit(1)
    }
}
