import AccountSync
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import OnboardingServer
import ServerControlPlane
import ServerTokens

/// Section 8: past one machine on PostgreSQL's own replication. Every figure is measured
/// on processes of its own (``ClusterProcesses``): a primary with a streaming standby, release
/// servers, nginx. Ratios are of the same run.
struct ClusterBench {
    let secret: String
    let signer: TokenSigner
    let report: Report
    /// Seconds each load runs.
    let duration: Double

    /// Synchronous replication against asynchronous, at a user's pace at each of `levels` devices
    /// and back to back at the smallest; then two servers behind nginx against one, with the CPU
    /// each process spent per accepted event.
    func replicationAndServers(levels: [Int]) async throws {
        let pair = try ClusterProcesses.Pair(synchronous: false)
        defer { pair.destroy() }
        let server = try ClusterProcesses.Server(database: pair.primary, secret: secret)
        defer { server.stop() }
        let load = ServerLoad(
            server: server.url, database: try DatabaseURL(pair.primary), signer: signer, duration: duration)
        let run = UUID().uuidString.prefix(6).lowercased()
        var paced: [Bool: [Int: ServerLoad.Figures]] = [:]
        var saturated: [Bool: ServerLoad.Figures] = [:]
        let smallest = levels.min() ?? 200
        // A warm-up, not recorded: the first measured run would otherwise pay for a cold server and
        // database (prepared statements, caches, the first pages of every index) alone.
        try pair.setSynchronous(false)
        try await load.settle()
        _ = try await load.throughServer(smallest, run: "\(run)w")
        // Asynchronous then synchronous at each level, so both see the database at the same size.
        for devices in levels {
            for synchronous in [false, true] {
                try pair.setSynchronous(synchronous)
                try await load.settle()
                paced[synchronous, default: [:]][devices] = try await load.throughServer(
                    devices, run: "\(run)\(synchronous ? "s" : "a")p\(devices)", pace: 1)
                if devices == smallest {
                    try await load.settle()
                    saturated[synchronous] = try await load.throughServer(
                        devices, run: "\(run)\(synchronous ? "s" : "a")b\(devices)")
                }
            }
        }
        for devices in levels {
            guard let off = paced[false]?[devices], let on = paced[true]?[devices] else { continue }
            for (name, figures) in [("asynchronous", off), ("synchronous", on)] {
                report.add(
                    "cluster", "\(devices) devices, one event a second, \(name): accepted",
                    figures.eventsPerSecond, "events/s",
                    note: "\(figures.accepted) of \(figures.offered) offered")
                report.add(
                    "cluster", "\(devices) devices, one event a second, \(name): push p99", figures.p99, "ms")
            }
            report.add(
                "cluster", "\(devices) devices, one event a second: push p99 synchronous / asynchronous",
                on.p99 / off.p99, "×")
            report.goal(
                "events not accepted at \(devices) devices, one a second, synchronous replication",
                Double(on.offered - on.accepted),
                atMost: 0, "events")
        }
        if let off = saturated[false], let on = saturated[true] {
            report.add(
                "cluster", "\(smallest) devices back to back, asynchronous: accepted", off.eventsPerSecond,
                "events/s")
            report.add(
                "cluster", "\(smallest) devices back to back, synchronous: accepted", on.eventsPerSecond,
                "events/s")
            report.add("cluster", "\(smallest) devices back to back, asynchronous: push p99", off.p99, "ms")
            report.add("cluster", "\(smallest) devices back to back, synchronous: push p99", on.p99, "ms")
            report.add(
                "cluster", "back to back: synchronous / asynchronous (events per second)",
                on.eventsPerSecond / off.eventsPerSecond, "×")
        }

        // Two servers behind nginx against one behind the same nginx (synchronous, as deployed).
        try pair.setSynchronous(true)
        let second = try ClusterProcesses.Server(database: pair.primary, secret: secret)
        defer { second.stop() }
        var served: [Int: (ServerLoad.Figures, cpu: [String: Double])] = [:]
        for count in [1, 2] {
            let balancer = try ClusterProcesses.Balancer(
                upstreams: Array([server.port, second.port].prefix(count)))
            defer { balancer.stop() }
            let through = ServerLoad(
                server: balancer.url, database: try DatabaseURL(pair.primary), signer: signer,
                duration: duration)
            try await through.settle()
            func cpu() -> [String: Double] {
                [
                    "servers": server.cpuSeconds + second.cpuSeconds, "primary": pair.cpuSeconds(),
                    "standby": pair.cpuSeconds(standby: true), "nginx": balancer.cpuSeconds,
                ]
            }
            let before = cpu()
            let figures = try await through.throughServer(smallest, run: "\(run)n\(count)")
            let after = cpu()
            served[count] = (figures, after.merging(before) { $0 - $1 })
        }
        for count in [1, 2] {
            guard let (figures, cpu) = served[count] else { continue }
            let events = Double(max(figures.accepted, 1))
            report.add(
                "cluster",
                """
                \(count) server\(count == 1 ? "" : "s") behind nginx, \(smallest) devices back to back: \
                accepted
                """,
                figures.eventsPerSecond, "events/s")
            report.add(
                "cluster", "\(count) server\(count == 1 ? "" : "s") behind nginx: push p99", figures.p99, "ms"
            )
            for part in ["servers", "primary", "standby", "nginx"] {
                report.add(
                    "cluster", "\(count) behind nginx: CPU per accepted event, \(part)",
                    (cpu[part] ?? 0) / events * 1e6, "µs")
            }
        }
        if let one = served[1], let two = served[2] {
            report.add(
                "cluster", "two servers / one behind nginx (events per second)",
                two.0.eventsPerSecond / one.0.eventsPerSecond, "×",
                note:
                    """
                    on \(ProcessInfo.processInfo.activeProcessorCount) cores shared by every process and \
                    the load generator
                    """
            )
            // The projection: what one core of each part takes, from its CPU per event (one server).
            let events = Double(max(one.0.accepted, 1))
            for part in ["servers", "primary"] {
                guard let cpu = one.cpu[part], cpu > 0 else { continue }
                report.add(
                    "cluster",
                    "projected: events/s one core of \(part == "servers" ? "server" : "the primary") takes",
                    events / cpu, "events/s")
            }
        }
    }

    /// `runs` failovers, each on a pair of its own: devices pushing at a steady pace through one
    /// server (or two behind nginx), the primary SIGKILLed, the standby promoted.
    func failovers(runs: Int, devices: Int, balanced: Bool) async throws {
        var recoveries: [Double] = []
        var lost = 0
        let name = balanced ? "two servers behind nginx" : "one server"
        for index in 0..<runs {
            let secret = secret
            ClusterProcesses.progress(
                "failover \(index + 1) of \(runs), \(name): a primary and a synchronous standby")
            let pair = try await ClusterProcesses.blocking { try ClusterProcesses.Pair(synchronous: true) }
            defer { pair.destroy() }
            let servers = try await ClusterProcesses.blocking {
                try (0..<(balanced ? 2 : 1)).map { _ in
                    try ClusterProcesses.Server(database: pair.bothHosts, secret: secret)
                }
            }
            var finished = false
            defer {
                for server in servers {
                    // A run that failed says what its servers said last.
                    if !finished {
                        ClusterProcesses.progress(
                            "the server on \(server.port) said last:\n\(server.logTail())")
                    }
                    server.stop()
                }
            }
            let balancer =
                balanced
                ? try await ClusterProcesses.blocking {
                    try ClusterProcesses.Balancer(upstreams: servers.map(\.port))
                } : nil
            defer { balancer?.stop() }
            let killedAt = Locked<Double?>(nil)
            let load = FailoverLoad(
                server: balancer?.url ?? servers[0].url, signer: signer, devices: devices, pace: 0.1,
                duration: max(duration * 2, 16))
            let run = "f\(index)\(balanced ? "n" : "d")\(UUID().uuidString.prefix(4).lowercased())"
            ClusterProcesses.progress("failover \(index + 1): devices pushing; the primary dies in 4 s")
            let outcome = try await load.run(app: "failover", run: run) {
                try await Task.sleep(for: .seconds(4))
                try await ClusterProcesses.blocking { try pair.killPrimary() }
                killedAt.withLock { $0 = FailoverLoad.now() }
                try await ClusterProcesses.blocking { try pair.script("promote") }
                ClusterProcesses.progress("failover \(index + 1): killed and promoted")
            }
            ClusterProcesses.progress("failover \(index + 1): devices done; counting on the new primary")
            guard let killed = killedAt.withLock({ $0 }) else {
                throw BenchFailure("the primary was not killed")
            }
            // What the new primary holds, against what the devices hold acknowledged.
            let stored = Set(
                try await ClusterProcesses.blocking {
                    try pair.sql(
                        "SELECT device || ' ' || seq FROM pushes WHERE app = 'failover'", onStandby: true)
                }
                .split(separator: "\n").map(String.init))
            let acknowledged = outcome.acknowledged.flatMap { device, seqs in seqs.map { "\(device) \($0)" } }
            lost += acknowledged.filter { !stored.contains($0) }.count
            let duplicates = try await ClusterProcesses.blocking {
                try pair.sql(
                    "SELECT count(*) - count(DISTINCT (device, seq)) FROM pushes WHERE app = 'failover'",
                    onStandby: true)
            }
            if duplicates != "0" {
                throw BenchFailure("a push stored twice on the new primary (\(duplicates))")
            }
            guard let first = outcome.acceptedAt.filter({ $0 > killed }).min() else {
                throw BenchFailure("no push accepted after the primary died (run \(index + 1))")
            }
            recoveries.append(first - killed)
            report.add(
                "cluster",
                """
                failover \(index + 1)\(balanced ? ", two servers behind nginx" : ", one server"): first \
                accepted push after the kill
                """,
                first - killed, "s",
                note:
                    "\(outcome.refusedAt.filter { $0 > killed }.count) attempts refused meanwhile "
                    + "(kept and retried), \(acknowledged.count) acknowledged, \(stored.count) stored")
            finished = true
        }
        recoveries.sort()
        report.add(
            "cluster", "failover, \(name): first accepted push after the kill, median of \(runs)",
            percentile(recoveries, 0.5), "s")
        report.add("cluster", "failover, \(name): slowest of \(runs)", recoveries.last ?? 0, "s")
        report.goal(
            "acknowledged pushes lost in \(runs) failovers, \(name)", Double(lost), atMost: 0, "pushes")
    }

    /// `runs` failovers with nobody acting: pg_auto_failover's formation, two servers
    /// behind nginx on the URL it prints, devices pushing all along. Each time, once the formation
    /// has a primary and a secondary, the primary's node dies as a machine does; the monitor
    /// promotes the secondary, and the dead node rejoins as the new primary's secondary.
    func autoFailovers(runs: Int, devices: Int) async throws {
        ClusterProcesses.progress("automatic failover: pg_auto_failover's monitor and two nodes")
        let formation = try await ClusterProcesses.blocking { try ClusterProcesses.Formation() }
        defer { formation.destroy() }
        let secret = secret
        let servers = try await ClusterProcesses.blocking {
            try (0..<2).map { _ in try ClusterProcesses.Server(database: formation.url, secret: secret) }
        }
        var finished = false
        defer {
            for server in servers {
                if !finished {
                    ClusterProcesses.progress("the server on \(server.port) said last:\n\(server.logTail())")
                }
                server.stop()
            }
        }
        let balancer = try await ClusterProcesses.blocking {
            try ClusterProcesses.Balancer(upstreams: servers.map(\.port))
        }
        defer { balancer.stop() }
        let kills = Locked<[Double]>([])
        let stopped = Locked(false)
        let load = FailoverLoad(
            server: balancer.url, signer: signer, devices: devices, pace: 0.1, duration: Double(runs) * 120,
            stopped: stopped)
        let run = "af\(UUID().uuidString.prefix(4).lowercased())"
        let outcome = try await load.run(app: "failover", run: run) {
            defer { stopped.withLock { $0 = true } }
            for index in 0..<runs {
                try await Task.sleep(for: .seconds(4))
                let dead = try await ClusterProcesses.blocking { try formation.script("primary") }
                try await ClusterProcesses.blocking { try formation.script("kill", dead) }
                kills.withLock { $0.append(FailoverLoad.now()) }
                ClusterProcesses.progress("automatic failover \(index + 1) of \(runs): node \(dead) killed")
                // Nobody promotes: wait for the monitor to have, then bring the machine back.
                for _ in 0..<600 {
                    let primary = try? await ClusterProcesses.blocking { try formation.script("primary") }
                    if let primary, !primary.isEmpty, primary != dead { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                try await ClusterProcesses.blocking { try formation.script("rejoin", dead) }
                try await ClusterProcesses.blocking { try formation.script("wait-ready") }
            }
            try await Task.sleep(for: .seconds(4))
        }
        ClusterProcesses.progress("automatic failover: devices done; counting on the last primary")
        let stored = Set(
            try await ClusterProcesses.blocking {
                try formation.sql("SELECT device || ' ' || seq FROM pushes WHERE app = 'failover'")
            }
            .split(separator: "\n").map(String.init))
        let acknowledged = outcome.acknowledged.flatMap { device, seqs in seqs.map { "\(device) \($0)" } }
        let lost = acknowledged.filter { !stored.contains($0) }.count
        let duplicates = try await ClusterProcesses.blocking {
            try formation.sql(
                "SELECT count(*) - count(DISTINCT (device, seq)) FROM pushes WHERE app = 'failover'")
        }
        if duplicates != "0" { throw BenchFailure("a push stored twice (\(duplicates))") }
        var recoveries: [Double] = []
        for killed in kills.withLock({ $0 }) {
            guard let first = outcome.acceptedAt.filter({ $0 > killed }).min() else {
                throw BenchFailure("no push accepted after a kill")
            }
            recoveries.append(first - killed)
        }
        recoveries.sort()
        let name = "automatic (pg_auto_failover), two servers behind nginx"
        report.add(
            "cluster", "failover, \(name): first accepted push after the kill, median of \(recoveries.count)",
            percentile(recoveries, 0.5), "s",
            note: "\(acknowledged.count) acknowledged, \(stored.count) stored; each: "
                + recoveries.map { String(format: "%.1f", $0) }.joined(separator: ", "))
        report.add("cluster", "failover, \(name): slowest of \(recoveries.count)", recoveries.last ?? 0, "s")
        report.goal(
            "acknowledged pushes lost in \(runs) automatic failovers", Double(lost), atMost: 0, "pushes")
        // Every server followed every failover: one move each time (its log says so).
        let moves = servers.map(\.moves)
        report.add(
            "cluster", "automatic failover: moves each server said it made", Double(moves.min() ?? 0),
            "moves",
            note: "each server: \(moves.map(String.init).joined(separator: ", ")) of \(runs) failovers")
        report.goal(
            "failovers a server did not follow, of \(runs) (two servers)",
            Double(moves.map { max(0, runs - $0) }.reduce(0, +)),
            atMost: 0, "failovers")
        report.goal(
            """
            pushes answered past \(FailoverLoad.answerBound) s (or not at all) in \(runs) automatic \
            failovers
            """,
            Double(outcome.late),
            atMost: 0, "pushes")
        finished = true
    }
}
