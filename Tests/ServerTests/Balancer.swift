import Foundation
import TourFixtures

/// nginx (Debian's) in front of several servers, from scripts/nginx.conf.template, as
/// scripts/cluster runs it: a real balancer process for the tests of several servers.
final class Balancer {
    let port: Int
    let folder: URL
    private var process: Process?

    let url: URL

    static var nginx: String? {
        ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The template with its folder and port filled in, and its `@UPSTREAM@` line repeated once per
    /// server (as scripts/cluster renders it).
    static func render(_ template: String, folder: String, port: Int, upstreams: [Int]) -> String {
        template.replacingOccurrences(of: "@DIR@", with: folder).replacingOccurrences(
            of: "@PORT@", with: String(port)
        )
        .split(separator: "\n", omittingEmptySubsequences: false).flatMap { line -> [String] in
            line.contains("@UPSTREAM@")
                ? upstreams.map { line.replacingOccurrences(of: "@UPSTREAM@", with: "127.0.0.1:\($0)") }
                : [String(line)]
        }.joined(separator: "\n")
    }

    init(upstreams: [Int]) throws {
        guard let nginx = Self.nginx else {
            throw HarnessFailure("nginx is not installed (apt-get install nginx; .ci/run does)")
        }
        port = ServerProcess.freePort()
        url = try URL(checking: "http://127.0.0.1:\(port)")
        folder = Scratch.folder.appendingPathComponent("nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // nginx's workers drop to nobody when the master is root: its folder is theirs to write.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let template = try String(
            contentsOf: root.appendingPathComponent("scripts/nginx.conf.template"), encoding: .utf8)
        let config = Self.render(template, folder: folder.path, port: port, upstreams: upstreams)
        let file = folder.appendingPathComponent("nginx.conf")
        try config.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = [
            "-c", file.path, "-p", folder.path, "-e", folder.appendingPathComponent("error.log").path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcess.spawning { try process.run() }
        self.process = process
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if HTTP.status(url.appendingPathComponent("v1/health")) == 200 { return }
            if !process.isRunning {
                throw HarnessFailure("nginx exited \(process.terminationStatus): \(errorLog)")
            }
            usleep(100_000)
        }
        throw HarnessFailure("nginx did not answer within 20 s: \(errorLog)")
    }

    /// Its upstream made `upstreams` and nginx told to reload (`nginx -s reload`), as the runbook
    /// "adding a server" says: new requests go to the new list, those in flight end where they are.
    func reload(upstreams: [Int]) throws {
        guard let nginx = Self.nginx else { throw HarnessFailure("nginx is not installed") }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let template = try String(
            contentsOf: root.appendingPathComponent("scripts/nginx.conf.template"), encoding: .utf8)
        let file = folder.appendingPathComponent("nginx.conf")
        try Self.render(template, folder: folder.path, port: port, upstreams: upstreams).write(
            to: file, atomically: true, encoding: .utf8)
        let result = try Shell.run(
            nginx,
            [
                "-c", file.path, "-p", folder.path, "-e", folder.appendingPathComponent("error.log").path,
                "-s", "reload",
            ])
        guard result.status == 0 else {
            throw HarnessFailure("nginx -s reload: \(result.stderr) \(errorLog)")
        }
    }

    var errorLog: String {
        (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    deinit {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGQUIT)
            if !Shell.waitForExit(process, seconds: 10) { kill(process.processIdentifier, SIGKILL) }
        }
        try? FileManager.default.removeItem(at: folder)
    }
}
