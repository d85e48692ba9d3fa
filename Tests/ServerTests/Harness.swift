import AccountSyncHTTP
import Foundation
import Testing
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

struct HarnessFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The PostgreSQL the server tests use: `$ONBOARDING_TEST_DATABASE_URL` (what `.ci/run` exports),
/// else the one `scripts/dev-postgres start` starts (or finds running). Without either, every
/// server test fails with one line saying how to start one: they are never skipped.
enum TestPostgres {
    static let url: Result<String, HarnessFailure> = {
        if let url = ProcessInfo.processInfo.environment["ONBOARDING_TEST_DATABASE_URL"], !url.isEmpty {
            return .success(url)
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/dev-postgres").path
        let result = try? Shell.run(script, ["start"])
        guard let result, result.status == 0, let line = result.stdout.split(separator: "\n").last else {
            return .failure(
                HarnessFailure(
                    """
                    the server tests need PostgreSQL 15: run scripts/dev-postgres start, or set \
                    ONBOARDING_TEST_DATABASE_URL to postgres://USER@HOST:PORT/DATABASE
                    """
                ))
        }
        return .success(String(line))
    }()

    /// The psql client beside the server binaries, else the one on the path. Debian's
    /// `/usr/bin/psql` is a Perl wrapper that picks a cluster's version: a Perl start for every
    /// query the tests send (hundreds a run).
    static let psql =
        FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/15/bin/psql")
        ? "/usr/lib/postgresql/15/bin/psql" : "/usr/bin/psql"

    /// A new, empty database on the test server, so tests run in parallel without sharing rows.
    /// Named after this test process (`t<pid>_…`), so a later run can drop those of ended runs.
    static func freshDatabase(on base: String? = nil) throws -> String {
        try newDatabase(on: base, template: nil)
    }

    /// A new database on the test server with the newest schema in it already: a copy of one this
    /// test process migrated once (``migratedTemplate``). For every test whose server or store
    /// would migrate its database anyway; a test of the migrations themselves, or of a server's
    /// first start, takes ``freshDatabase(on:)``. A copy costs PostgreSQL about 0.09 CPU-seconds
    /// here, where creating and migrating one cost 0.35, and a run makes about 400.
    static func migratedDatabase() throws -> String {
        try newDatabase(on: nil, template: migratedTemplate.get())
    }

    /// The database ``migratedDatabase()`` copies: made and migrated by the built
    /// `onboarding-server migrate` the first time a test asks, then never connected to (PostgreSQL
    /// copies only a database nobody is in). Named like every other database of this process, so
    /// it is dropped with them once the process has ended.
    static let migratedTemplate: Result<String, HarnessFailure> = {
        do {
            let url = try freshDatabase()
            var environment = ProcessInfo.processInfo.environment
            environment["DATABASE_URL"] = url
            let migrated = try Shell.run(
                BuiltExecutables.folder.appendingPathComponent("onboarding-server").path, ["migrate"],
                environment: environment)
            guard migrated.status == 0 else {
                return .failure(HarnessFailure("migrating the tests' template failed: \(migrated.stderr)"))
            }
            return .success(String(url.split(separator: "/").last?.split(separator: "?").first ?? ""))
        } catch let error as HarnessFailure {
            return .failure(error)
        } catch {
            return .failure(HarnessFailure("making the tests' template failed: \(error)"))
        }
    }()

    private static func newDatabase(on base: String?, template: String?) throws -> String {
        let base = try base ?? url.get()
        if base == (try? url.get()) { _ = databasesOfEndedRunsDropped }
        let name =
            "t\(getpid())_"
            + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let create = "CREATE DATABASE \(name)" + (template.map { " TEMPLATE \($0)" } ?? "")
        var result = try Shell.run(psql, [base, "-qtAc", create])
        // A copy waits up to 5 s for anyone in its template to leave (the migration's connections,
        // an autovacuum worker it stops); past that, once more.
        if result.status != 0, result.stderr.contains("is being accessed by other users") {
            result = try Shell.run(psql, [base, "-qtAc", create])
        }
        guard result.status == 0 else { throw HarnessFailure("\(create) failed: \(result.stderr)") }
        return base.replacingOccurrences(
            of: #"/[^/?]+(\?|$)"#, with: "/\(name)$1", options: .regularExpression)
    }
}

extension TestPostgres {
    /// Drops, once per test process and on a thread of its own, the databases that runs which have
    /// ended left on the test server (a run makes about 400 and drops none). They were never
    /// dropped: a developer's cluster held thousands, and its autovacuum, which visits every
    /// database once a minute, started a worker every few milliseconds beside everything else. A
    /// database of a run still going (its process alive) is kept. Those named before the name said
    /// whose they were (`t_` and 16 hex digits) cannot say, and go too.
    static let databasesOfEndedRunsDropped: Void = {
        guard let base = try? url.get() else { return }
        Thread.detachNewThread {
            let listed = try? Shell.run(
                psql,
                [base, "-qtAc", "SELECT datname FROM pg_database WHERE datname ~ '^t([0-9]+)?_[0-9a-f]+$'"])
            let ended = (listed?.stdout ?? "").split(separator: "\n").map(String.init).filter { name in
                guard let owner = pid_t(name.dropFirst().prefix { $0 != "_" }) else {
                    return name.hasPrefix("t_")
                }
                return Scratch.hasEnded(owner)
            }
            // One psql for a hundred: DROP DATABASE cannot share a transaction, so a -c each.
            for batch in stride(from: 0, to: ended.count, by: 100) {
                let commands = ended[batch..<min(batch + 100, ended.count)].flatMap {
                    ["-c", "DROP DATABASE IF EXISTS \($0) WITH (FORCE)"]
                }
                _ = try? Shell.run(psql, [base, "-q"] + commands, seconds: 300)
            }
        }
    }()
}

/// A real `onboarding-server` process on its own database and a free port: unless the test gives
/// one, a copy of this process's migrated template (``TestPostgres/migratedDatabase()``), so its
/// start finds the schema up to date.
final class ServerProcess: @unchecked Sendable {
    static let secret = "server-tests-secret-0123456789abcdef-0123456789"
    let databaseURL: String
    let port: Int
    let log: URL
    private var process: Process?
    /// Set for the server and for `token` (a key ring, an identity provider).
    var environment: [String: String]
    /// Further options for `serve` (`--push-queue 2`).
    var serveOptions: [String]

    let url: URL

    init(
        databaseURL: String? = nil, port: Int? = nil, environment: [String: String] = [:],
        serveOptions: [String] = []
    ) throws {
        self.environment = environment
        self.serveOptions = serveOptions
        self.databaseURL = try databaseURL ?? TestPostgres.migratedDatabase()
        self.port = port ?? Self.freePort()
        url = try URL(checking: "http://127.0.0.1:\(self.port)")
        log = Scratch.folder.appendingPathComponent("server-\(UUID().uuidString).log")
        try start()
    }

    deinit {
        stop(signal: SIGKILL)
        try? FileManager.default.removeItem(at: log)
    }

    func start() throws {
        let process = Process()
        process.executableURL = BuiltExecutables.folder.appendingPathComponent("onboarding-server")
        // Devices ask for publications on every command here (max-age 0), as they did before
        // 0.25: most tests publish and look at the very next command. InstallTests holds the
        // default max-age.
        let maxAge = serveOptions.contains("--publication-max-age") ? [] : ["--publication-max-age", "0"]
        process.arguments = ["serve", "--port", "\(port)", "--connections", "8"] + maxAge + serveOptions
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARDING_SERVER_SECRET"] = Self.secret
        environment["DATABASE_URL"] = databaseURL
        environment["LOG_LEVEL"] = "warning"
        environment.merge(self.environment) { _, given in given }
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try ChildProcess.spawning { try process.run() }
        self.process = process
        try waitUntilHealthy()
    }

    func stop(signal: Int32 = SIGTERM) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, signal)
        if !Shell.waitForExit(process, seconds: 30) {
            kill(process.processIdentifier, SIGKILL)
            _ = Shell.waitForExit(process, seconds: 10)
        }
    }

    func restart() throws {
        stop()
        try start()
    }

    /// The server's process id while it runs.
    var pid: Int32? { process?.isRunning == true ? process?.processIdentifier : nil }

    var exitStatus: Int32? {
        guard let process, !process.isRunning else { return nil }
        return process.terminationStatus
    }

    func waitUntilHealthy(seconds: Double = 60) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if HTTP.status(url.appendingPathComponent("v1/health")) == 200 { return }
            if let process, !process.isRunning {
                throw HarnessFailure("onboarding-server exited \(process.terminationStatus): \(logText)")
            }
            usleep(100_000)
        }
        throw HarnessFailure("onboarding-server did not answer within \(seconds) s: \(logText)")
    }

    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Every thread's stack of the running server (gdb, as scripts/report-hang reads a hung test
    /// run), for a failure that says where a server that stopped answering waits.
    func threadStacks() -> String {
        guard let pid, FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") else {
            return "(no gdb, or not running)"
        }
        let result = try? Shell.run(
            "/usr/bin/gdb", ["-p", "\(pid)", "-batch", "-ex", "thread apply all bt 30"], seconds: 120)
        return (result?.stdout ?? "").split(separator: "\n").filter {
            $0.hasPrefix("Thread") || $0.hasPrefix("#")
        }
        .joined(separator: "\n")
    }

    /// A token for `account` in `app`, minted by the real `token` command.
    func token(account: String, app: String = "growth", days: Int = 1) throws -> String {
        let result = try command(["token", "--account", account, "--app", app, "--days", "\(days)"])
        guard result.status == 0 else { throw HarnessFailure("token: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The credential of a person with `role` in `app` (every app when nil), added by the real
    /// `people add` command: by default an operator who owns every app.
    func credential(_ name: String = "operator", role: String = "owner", app: String? = nil) throws -> String
    {
        let scope = app.map { ["--app", $0] } ?? ["--every-app"]
        let result = try command(["people", "add", "--name", name, "--role", role] + scope)
        guard result.status == 0 else { throw HarnessFailure("people add: \(result.stderr)") }
        let credential = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !credential.isEmpty else {
            throw HarnessFailure(
                "people add printed no credential (\(name) exists already?): \(result.stderr)")
        }
        return credential
    }

    private var cachedOperator: String?

    /// An operator's credential (the owner role in every app), added once per server.
    func operatorCredential() throws -> String {
        if let cachedOperator { return cachedOperator }
        let made = try credential("operator")
        cachedOperator = made
        return made
    }

    /// `onboarding-server ARGUMENTS` against this server's database and keys (`DATABASE_URL` and
    /// the secret in the environment, never on the command line).
    func command(_ arguments: [String], extraEnvironment: [String: String] = [:]) throws -> Shell.Result {
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARDING_SERVER_SECRET"] = Self.secret
        environment["DATABASE_URL"] = databaseURL
        environment.merge(self.environment) { _, given in given }
        environment.merge(extraEnvironment) { _, given in given }
        return try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("onboarding-server").path, arguments,
            environment: environment)
    }

    /// The file of publication keys the devices of this server trust (ONBOARDING_TRUSTED_KEYS_FILE,
    /// read by debug builds only): the public halves of the keys ``publicationKey(app:)`` made.
    lazy var trustedKeysFile: URL = Scratch.folder.appendingPathComponent("trusted-\(UUID().uuidString).json")
    private var trustedKeys: [String] = []

    /// A publication key for `app`, made by the real `keys new`, registered with `keys register`
    /// and trusted by this server's devices: the path of its private half.
    func publicationKey(app: String, trustedByDevices: Bool = true, registered: Bool = true) throws -> String
    {
        let folder = Scratch.folder.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let made = try command(["keys", "new", "--app", app, "--out", folder.path])
        guard made.status == 0 else { throw HarnessFailure("keys new: \(made.stderr)") }
        let id = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let publicFile = folder.appendingPathComponent("\(id).json")
        if registered {
            let registering = try command(["keys", "register", "--app", app, publicFile.path])
            guard registering.status == 0 else {
                throw HarnessFailure("keys register: \(registering.stderr)")
            }
        }
        if trustedByDevices {
            trustedKeys.append(
                try String(contentsOf: publicFile, encoding: .utf8).trimmingCharacters(
                    in: .whitespacesAndNewlines))
            try ("[" + trustedKeys.joined(separator: ",") + "]").write(
                to: trustedKeysFile, atomically: true, encoding: .utf8)
        }
        return folder.appendingPathComponent("\(id).signing-key.json").path
    }

    /// Accepts `executable`'s compiled-in enrollment key (the real `enrollment-keys add`): its
    /// installs can enroll from now on. The key.
    @discardableResult
    func acceptEnrollments(of executable: String) throws -> String {
        guard let registration = registeredProducts.first(where: { $0.executable == executable }),
            let key = registration.enrollmentKey
        else { throw HarnessFailure("\(executable) has no enrollment key") }
        let added = try command(["enrollment-keys", "add", "--app", executable, key])
        guard added.status == 0 else { throw HarnessFailure("enrollment-keys add: \(added.stderr)") }
        return key
    }

    /// Runs SQL on the server's database through psql; rows as lines.
    func sql(_ query: String) throws -> [String] { try TestPostgres.sql(query, on: databaseURL) }

    /// Ports handed out in this test process: the kernel may give a port again once it was
    /// closed, and two servers told the same port answered each other's tests (one failed to
    /// bind and exited; the other, another test's, answered its health check).
    private static let handedOut = Locked<Set<Int>>([])

    static func freePort() -> Int {
        for _ in 0..<100 {
            let port = kernelPort()
            if handedOut.withLock({ $0.insert(port).inserted }) { return port }
        }
        return kernelPort()
    }

    private static func kernelPort() -> Int {
        // Close-on-exec: a child started meanwhile must not keep the port bound.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
