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
    let connections = option("--server-connections").flatMap(Int.init) ?? 16
    // `--overload-rate N`: only the open-loop phase, offering N pushes a second from 1,000 devices
    // (to study overload without the phases before it).
    let overloadRate = option("--overload-rate").flatMap(Double.init)
    let levels =
        overloadRate != nil
        ? []
        : option("--devices").map { $0.split(separator: ",").compactMap { Int($0) } }
            ?? (smoke ? [10] : [50, 200, 1_000])
    let load = ServerLoad(
        server: try URL(checking: serverURL), database: try DatabaseURL(databaseURL),
        signer: try TokenSigner(secret: secret),
        duration: smoke ? 1 : 10)
    report.section(
        """
        5. Account server: devices pushing their flows one event per request for \(load.duration) s, \
        back to back (saturation) and one a second (a user's pace), beside the floor (the same rows \
        straight into PostgreSQL, one transaction each, back to back); each after the insights job \
        has counted the last one's pushes
        """
    )
    let run = UUID().uuidString.prefix(8).lowercased()
    var capacity: (devices: Int, eventsPerSecond: Double)? = overloadRate.map { (1_000, $0 / 3) }
    for devices in levels {
        try await load.settle()
        let served = try await load.throughServer(devices, run: "\(run)s\(devices)")
        // The server's capacity: the most it took back to back at any level (at 1,000 devices it
        // sheds part of a back-to-back load, which would understate it).
        if served.eventsPerSecond > capacity?.eventsPerSecond ?? 0 {
            capacity = (levels.max() ?? devices, served.eventsPerSecond)
        }
        try await load.settle()
        let floor = try await load.floor(devices, run: "\(run)f\(devices)", connections: connections)
        try await load.settle()
        report.add(
            "server", "\(devices) devices: events accepted", served.eventsPerSecond, "events/s",
            note: served.failures == 0 ? nil : "\(served.failures) refused")
        report.add("server", "\(devices) devices: push p50", served.p50, "ms")
        report.add("server", "\(devices) devices: push p99", served.p99, "ms")
        let paced = try await load.throughServer(devices, run: "\(run)p\(devices)", pace: 1)
        report.add(
            "server", "\(devices) devices, one event a second each: accepted", paced.eventsPerSecond,
            "events/s",
            note: paced.failures == 0 ? nil : "\(paced.failures) refused")
        report.add("server", "\(devices) devices, one event a second each: push p50", paced.p50, "ms")
        report.add(
            "server", "\(devices) devices, one event a second each: push p99", paced.p99, "ms")
        report.add(
            "server", "\(devices) devices, one event a second each: push sent after its slot, p99",
            paced.lagP99, "ms",
            note: "waiting for the device's last answer or the load generator's timer; not in the push p99")
        report.add("server", "\(devices) devices: floor", floor.eventsPerSecond, "events/s")
        report.add("server", "\(devices) devices: floor p99", floor.p99, "ms")
        report.add(
            "server", "\(devices) devices: floor / server (events per second)",
            floor.eventsPerSecond / served.eventsPerSecond, "×")
        report.goal(
            "server ingest at \(devices) devices: floor / server",
            floor.eventsPerSecond / served.eventsPerSecond, atMost: 2, "×")
        report.add(
            "server", "\(devices) devices, one event a second each: offered, accepted, refused",
            Double(paced.offered), "events", note: "\(paced.accepted) accepted, \(paced.failures) refused")
        if devices == levels.max() {
            report.goal(
                "server push p99 at \(devices) devices, one event a second each", paced.p99, atMost: 20, "ms")
            report.goal(
                "events not accepted at \(devices) devices, one event a second each",
                Double(paced.offered - paced.accepted), atMost: 0, "events")
        }
    }
    // Installs without sign-in: enrolled through the server, then pushing at a user's pace.
    let installCount = overloadRate != nil ? 0 : smoke ? 10 : 1_000
    if installCount > 0 {
        try await load.settle()
        let enrolled = try await load.enroll(installCount)
        report.add(
            "server", "\(installCount) installs enrolling, 16 at a time: enrolled", enrolled.perSecond,
            "installs/s",
            note: enrolled.failures == 0
                ? nil : "\(enrolled.failures) refused (serve --enrollments-per-minute)")
        report.add("server", "\(installCount) installs enrolling: p50", enrolled.p50, "ms")
        report.add("server", "\(installCount) installs enrolling: p99", enrolled.p99, "ms")
        try await load.settle()
        let asInstalls = try await load.pushAsInstalls(enrolled.subjects, run: "\(run)i", pace: 1)
        report.add(
            "server", "\(enrolled.subjects.count) installs, one event a second each: accepted",
            asInstalls.eventsPerSecond, "events/s",
            note: asInstalls.failures == 0 ? nil : "\(asInstalls.failures) refused")
        report.add(
            "server", "\(enrolled.subjects.count) installs, one event a second each: push p99",
            asInstalls.p99, "ms")
        report.goal(
            "installs refused at enrollment (\(installCount))", Double(enrolled.failures), atMost: 0,
            "installs")
    }
    // Three times the most the server took back to back, offered on a schedule whatever the answers
    // (an open loop, as a thousand phones at a user's pace): it sheds the excess with 503 at once,
    // keeps the accepted fast, and stores exactly what it acknowledged.
    if let capacity {
        try await load.settle()
        let offered = capacity.eventsPerSecond * 3
        let (over, stored) = try await load.openLoop(
            capacity.devices, run: "\(run)o", eventsPerSecond: offered)
        let acceptedP99 =
            over.acceptedLatencies.isEmpty ? 0 : percentile(over.acceptedLatencies.sorted(), 0.99) * 1000
        report.add(
            "server",
            "3× load, open loop (\(Int(offered)) events/s offered by \(capacity.devices) devices): accepted",
            Double(over.accepted) / load.duration, "events/s",
            note: "\(over.connections) connections; \(over.unsent) not sent (the load generator's cap)")
        report.add(
            "server", "3× load: shed (503)",
            over.offered == 0 ? 0 : Double(over.shed) / Double(over.offered) * 100, "%",
            note:
                """
                \(over.shed) of \(over.offered) offered; \(over.otherFailures) other failures; by \
                status \(over.statuses.sorted { $0.key < $1.key })
                """
        )
        report.add("server", "3× load: push p99 of the accepted", acceptedP99, "ms")
        report.add(
            "server", "3× load: push sent after its slot, p99",
            over.lags.isEmpty ? 0 : percentile(over.lags.sorted(), 0.99) * 1000,
            "ms", note: "opening a connection when none was free; not in the latencies")
        report.add(
            "server", "3× load: acknowledged and not stored, or stored and not acknowledged",
            Double(abs(stored - over.accepted)), "pushes",
            note: "\(over.accepted) acknowledged, \(stored) stored")
        report.goal(
            "pushes acknowledged but lost (or stored but refused) at 3× load",
            Double(abs(stored - over.accepted)), atMost: 0, "pushes")
        report.goal("push p99 of the accepted at 3× load, open loop", acceptedP99, atMost: 50, "ms")
        report.goal(
            "pushes answered past their deadline at 3× load",
            Double(over.latencies.filter { $0 > 4.25 }.count), atMost: 0, "pushes")
    }
    // A migration's lock on `pushes` for five seconds while 200 devices push once a second each.
    if overloadRate == nil {
        try await load.settle()
        let fault = try await load.lockFault(smoke ? 20 : 200, run: "\(run)l", at: 2, hold: smoke ? 2 : 5)
        report.add(
            "server", "lock on pushes (\(smoke ? 2 : 5) s): first push accepted after the lock went",
            (fault.recovery ?? .infinity) * 1000, "ms",
            note: "\(fault.shed) answered 503 meanwhile")
        report.goal(
            "seconds from the lock's release to the first accepted push", fault.recovery ?? .infinity,
            atMost: 1, "s")
        report.goal(
            "pushes answered past their deadline through the lock", Double(fault.late), atMost: 0, "pushes")
    }
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
