import Foundation
import TourFixtures

/// Section 8's real processes: a PostgreSQL primary with a streaming standby
/// (`scripts/dev-postgres`, in a folder of its own), release `onboarding-server` processes, and
/// Debian's nginx in front of them (`scripts/nginx.conf.template`), as `scripts/cluster` and the
/// failover tests start them. The bench runs from the repository's root (`scripts/bench` does).
enum ClusterProcesses {
    static let psql = "/usr/lib/postgresql/15/bin/psql"
    /// `--server-binary PATH`: the server section 8 starts (default the release build scripts/bench
    /// makes; CI's smoke run gives its debug build).
    static let serverBinary: String = {
        let arguments = CommandLine.arguments
        return arguments.firstIndex(of: "--server-binary").flatMap {
            arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
        }
            ?? ".build/release/onboarding-server"
    }()

    /// `body`, which blocks (it waits for processes), on a thread of its own rather than one of the
    /// few the async tasks share: the device tasks go on meanwhile.
    @discardableResult
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// A line on standard error with the time: where a long section is.
    static func progress(_ line: String) {
        FileHandle.standardError.write(
            Data("[\(ISO8601DateFormatter().string(from: Date()))] section 8: \(line)\n".utf8))
    }

    /// Runs a program to its end: its standard output, trimmed; a failure throws with its errors.
    @discardableResult
    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws
        -> String
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        (process.arguments, process.environment) = passwordsMovedToEnvironment(
            arguments, ProcessInfo.processInfo.environment.merging(environment) { _, given in given })
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bench-run-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        try handle.close()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw BenchFailure("\(path) \(arguments.joined(separator: " ")): \(text.suffix(800))")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func freePort() throws -> Int {
        let text = try run(
            "/usr/bin/python3",
            ["-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
        guard let port = Int(text) else { throw BenchFailure("no free port: \(text)") }
        return port
    }

    /// CPU seconds (user and system) a process has used, with the children it has waited for.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let fields = stat.split(separator: ")").last?.split(separator: " ")
        else { return 0 }
        // After the name: state is field 3, utime 14, stime 15, cutime 16, cstime 17 (1-based).
        let ticks = [11, 12, 13, 14].compactMap { fields.indices.contains($0) ? Double(fields[$0]) : nil }
            .reduce(0, +)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func children(_ pid: Int32) -> [Int32] {
        ((try? run("/usr/bin/pgrep", ["-P", String(pid)])) ?? "").split(separator: "\n").compactMap {
            Int32($0)
        }
    }

    /// A primary and a streaming standby of it, in a folder of their own.
    final class Pair: @unchecked Sendable {
        let folder: String
        private(set) var primary = ""
        private(set) var standby = ""

        init(synchronous: Bool) throws {
            folder = NSTemporaryDirectory() + "bench-pair-\(UUID().uuidString)"
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
            primary = try script("start").components(separatedBy: "\n").last ?? ""
            standby =
                try (synchronous ? script("standby", "--synchronous") : script("standby")).components(
                    separatedBy: "\n"
                ).last ?? ""
        }

        @discardableResult
        func script(_ arguments: String...) throws -> String {
            try ClusterProcesses.run(
                "scripts/dev-postgres", arguments, environment: ["ONBOARDING_PG_DIR": folder])
        }

        /// Both hosts in one URL, the primary first, as the servers follow them.
        var bothHosts: String {
            let port = { (url: String) in
                url.components(separatedBy: ":").last?.components(separatedBy: "/").first ?? ""
            }
            return
                """
                postgres://onboarding@127.0.0.1:\(port(primary)),127.0.0.1:\(port(standby))/onboarding?ta\
                rget_session_attrs=read-write
                """
        }

        @discardableResult
        func sql(_ query: String, onStandby: Bool = false) throws -> String {
            try ClusterProcesses.run(ClusterProcesses.psql, [onStandby ? standby : primary, "-qtAc", query])
        }

        /// The primary's commits wait for the standby (`synchronous_standby_names`), or not.
        func setSynchronous(_ on: Bool) throws {
            try sql("ALTER SYSTEM SET synchronous_standby_names = '\(on ? "standby" : "")'")
            try sql("SELECT pg_reload_conf()")
            for _ in 0..<200 {
                let state = try sql(
                    "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'")
                if state == (on ? "sync" : "async") { return }
                usleep(50_000)
            }
            throw BenchFailure("the standby did not become \(on ? "synchronous" : "asynchronous")")
        }

        func postmaster(standby: Bool = false) -> Int32? {
            let file = folder + (standby ? "/standby/postmaster.pid" : "/data/postmaster.pid")
            return (try? String(contentsOfFile: file, encoding: .utf8))?.split(separator: "\n").first.flatMap
            { Int32($0) }
        }

        /// CPU seconds of the primary's (or the standby's) postmaster, the backends it reaped and those
        /// alive.
        func cpuSeconds(standby: Bool = false) -> Double {
            guard let pid = postmaster(standby: standby) else { return 0 }
            return ClusterProcesses.cpuSeconds(pid)
                + ClusterProcesses.children(pid).map(ClusterProcesses.cpuSeconds).reduce(0, +)
        }

        /// The primary dies as a machine does: its postmaster and every backend, with SIGKILL.
        func killPrimary() throws {
            guard let pid = postmaster() else { throw BenchFailure("no primary to kill") }
            try ClusterProcesses.run("/bin/sh", ["-c", "kill -9 \(pid); pkill -9 -P \(pid); true"])
            for _ in 0..<100 {
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
                let alive =
                    stat.map { $0.split(separator: ")").last?.split(separator: " ").first != "Z" } ?? false
                if !alive, ClusterProcesses.children(pid).isEmpty { return }
                usleep(20_000)
            }
            throw BenchFailure("the primary (pid \(pid)) did not die")
        }

        func destroy() {
            _ = try? script("destroy")
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// pg_auto_failover's monitor, a primary and a synchronous secondary (`scripts/auto-failover`,
    /// in a folder of its own): the monitor promotes when the primary's node dies.
    final class Formation: @unchecked Sendable {
        let folder = NSTemporaryDirectory() + "bench-formation-\(UUID().uuidString)"
        /// The servers' `DATABASE_URL`, both nodes, `target_session_attrs=read-write`.
        private(set) var url = ""

        init() throws {
            url = try script("start").components(separatedBy: "\n").last ?? ""
        }

        @discardableResult
        func script(_ arguments: String...) throws -> String {
            try ClusterProcesses.run(
                "scripts/auto-failover", arguments, environment: ["ONBOARDING_PG_DIR": folder])
        }

        /// On the primary of now.
        func sql(_ query: String) throws -> String {
            try ClusterProcesses.run(ClusterProcesses.psql, [url, "-qtAc", query])
        }

        func destroy() { _ = try? script("destroy") }
    }

    /// A release `onboarding-server` on a free port (secrets in its environment only).
    final class Server: @unchecked Sendable {
        let process = Process()
        let port: Int
        /// Its warnings and errors, removed when it stops.
        let log: String
        let url: URL

        init(database: String, secret: String, readDatabase: String? = nil) throws {
            port = try ClusterProcesses.freePort()
            url = try URL(checking: "http://127.0.0.1:\(port)")
            log = NSTemporaryDirectory() + "bench-server-\(port).log"
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.executableURL = URL(fileURLWithPath: ClusterProcesses.serverBinary)
            process.arguments = ["serve", "--port", String(port), "--enrollments-per-minute", "1000000"]
            var environment = ProcessInfo.processInfo.environment
            environment["DATABASE_URL"] = database
            environment["ONBOARDING_SERVER_SECRET"] = secret
            environment["LOG_LEVEL"] = "warning"
            environment["READ_DATABASE_URL"] = readDatabase
            process.environment = environment
            let output = FileHandle(forWritingAtPath: log)
            process.standardOutput = output
            process.standardError = output
            try process.run()
            try output?.close()
            try ClusterProcesses.waitUntilHealthy(url, what: "the server on \(port)")
        }

        var cpuSeconds: Double { ClusterProcesses.cpuSeconds(process.processIdentifier) }

        /// How many times it said it started again on a new primary.
        var moves: Int {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
                .components(separatedBy: "the database moved: starting again on it").count - 1
        }

        /// The last lines of its log.
        func logTail(_ lines: Int = 30) -> String {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").suffix(lines).map { String($0.prefix(400)) }.joined(
                separator: "\n")
        }

        func stop() {
            ClusterProcesses.stop(process)
            try? FileManager.default.removeItem(atPath: log)
        }
    }

    /// nginx in front of `upstreams`, from the template the cluster script and the tests render.
    final class Balancer: @unchecked Sendable {
        let process = Process()
        let folder = NSTemporaryDirectory() + "bench-nginx-\(UUID().uuidString)"
        let port: Int
        let url: URL

        init(upstreams: [Int]) throws {
            port = try ClusterProcesses.freePort()
            url = try URL(checking: "http://127.0.0.1:\(port)")
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
            // The template's `@UPSTREAM@` line once per server, as scripts/cluster renders it.
            let configuration = try String(contentsOfFile: "scripts/nginx.conf.template", encoding: .utf8)
                .replacingOccurrences(of: "@DIR@", with: folder).replacingOccurrences(
                    of: "@PORT@", with: String(port)
                )
                .split(separator: "\n", omittingEmptySubsequences: false).flatMap { line -> [String] in
                    line.contains("@UPSTREAM@")
                        ? upstreams.map {
                            line.replacingOccurrences(of: "@UPSTREAM@", with: "127.0.0.1:\($0)")
                        } : [String(line)]
                }.joined(separator: "\n")
            try configuration.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
            let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first {
                FileManager.default.isExecutableFile(atPath: $0)
            }
            guard let nginx else { throw BenchFailure("section 8 needs nginx (apt-get install nginx)") }
            process.executableURL = URL(fileURLWithPath: nginx)
            process.arguments = ["-c", folder + "/nginx.conf", "-p", folder, "-e", folder + "/error.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            try ClusterProcesses.waitUntilHealthy(url, what: "nginx")
        }

        /// nginx's master and its worker.
        var cpuSeconds: Double {
            let pid = process.processIdentifier
            return ClusterProcesses.cpuSeconds(pid)
                + ClusterProcesses.children(pid).map(ClusterProcesses.cpuSeconds).reduce(0, +)
        }

        func stop() {
            ClusterProcesses.stop(process)
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// SIGTERM, then up to 10 s for the process to be gone (or a zombie), then SIGKILL. Reads
    /// /proc rather than waiting on Foundation's notice of the exit.
    static func stop(_ process: Process) {
        let pid = process.processIdentifier
        guard pid > 0 else { return }
        func gone() -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else {
                return true
            }
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        kill(pid, SIGTERM)
        for _ in 0..<200 where !gone() { usleep(50_000) }
        if !gone() { kill(pid, SIGKILL) }
    }

    static func waitUntilHealthy(_ url: URL, what: String) throws {
        for _ in 0..<600 {
            if (try? run("/usr/bin/curl", ["-sf", "-o", "/dev/null", url.absoluteString + "/v1/health"]))
                != nil
            {
                return
            }
            usleep(100_000)
        }
        throw BenchFailure("\(what) did not start")
    }
}

/// A PostgreSQL URL's password moved off the command line (where `ps` shows it to everyone) into
/// `PGPASSWORD`, which libpq's programs (psql, pg_basebackup) read: the arguments without it, and
/// the environment with it. URLs without a password are left as they are.
func passwordsMovedToEnvironment(_ arguments: [String], _ environment: [String: String]) -> (
    [String], [String: String]
) {
    var environment = environment
    let arguments = arguments.map { argument -> String in
        guard argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://"),
            var components = URLComponents(string: argument), let password = components.password
        else { return argument }
        environment["PGPASSWORD"] = password
        components.password = nil
        return components.string ?? argument
    }
    return (arguments, environment)
}
