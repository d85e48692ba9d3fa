import AccountSyncHTTP
import Foundation
import Testing
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

/// One device of an account: a product's real executable on its own database file, syncing with
/// the server through `--server` and `$ONBOARDING_TOKEN`; or an install of an app without sign-in
/// (`asInstall`), syncing with no token at all (it enrolls itself).
struct Device {
    let executable: String
    let database: URL
    let account: String
    let server: ServerProcess
    let token: String?
    /// More environment for every command (a virtual clock, a device kind), over the defaults.
    var environment: [String: String] = [:]

    init(_ executable: String, account: String, server: ServerProcess) throws {
        self.executable = executable
        self.account = account
        self.server = server
        token = try server.token(account: account, app: executable)
        let folder = Scratch.folder.appendingPathComponent("device-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        database = folder.appendingPathComponent("\(executable).sqlite")
    }

    /// A new install of `executable` with no sign-in (the local user `default`).
    init(asInstall executable: String, server: ServerProcess) throws {
        self.executable = executable
        account = "default"
        self.server = server
        token = nil
        let folder = Scratch.folder.appendingPathComponent("install-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        database = folder.appendingPathComponent("\(executable).sqlite")
    }

    @discardableResult
    func run(_ arguments: String..., offline: Bool = false) throws -> Shell.Result {
        try run(arguments, offline: offline)
    }

    func run(_ arguments: [String], offline: Bool = false) throws -> Shell.Result {
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARDING_SERVER"] = server.url.absoluteString
        environment["ONBOARDING_TOKEN"] = token
        environment["ONBOARDING_CLOCK"] = "wall"
        environment["ONBOARDING_TRUSTED_KEYS_FILE"] = server.trustedKeysFile.path
        environment.merge(self.environment) { _, given in given }
        return try Shell.run(
            BuiltExecutables.folder.appendingPathComponent(executable).path,
            arguments + ["--db", database.path, "--user", account] + (offline ? ["--offline"] : []),
            environment: environment)
    }

    /// `status --json`, parsed.
    func status(offline: Bool = false) throws -> [String: Any] {
        let result = try run("status", "--json", offline: offline)
        guard result.status == 0,
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        else { throw HarnessFailure("\(executable) status exited \(result.status): \(result.stderr)") }
        return object
    }

    func flowStatus(_ flow: String, offline: Bool = false) throws -> String? {
        let flows = try status(offline: offline)["flows"] as? [[String: Any]] ?? []
        return flows.first { $0["id"] as? String == flow }?["status"] as? String
    }

    func waiting() throws -> Int {
        ((try status(offline: true)["sync"] as? [String: Any])?["waiting"] as? Int) ?? -1
    }
}
