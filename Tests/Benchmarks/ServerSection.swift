import Foundation
import OnboardingServer
import ServerSyncAPI
import ServerTokens
import TourFixtures

/// Section 5, the account server: devices pushing back to back and at a user's pace beside the
/// floor (the same rows straight into PostgreSQL), installs enrolling, three times the server's
/// capacity offered in an open loop, and a migration's lock on `pushes`. `option` reads the
/// command line (`--server-connections`, `--overload-rate`, `--devices`).
func serverSection(
    serverURL: String, databaseURL: String, secret: String, smoke: Bool, option: (String) -> String?,
    report: Report
) async throws {
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
}
