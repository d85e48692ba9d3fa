import Foundation
import Testing
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

/// The harness itself: a child a test starts must not hold descriptors of the test process, or a
/// pipe another test reads (or the socket by which `Process` learns that a child exited) stays
/// open as long as that child lives, and that other test waits for it.
@Suite("Test harness", .ownThread)
struct HarnessTests {
    @Test func theBrowserInheritsNoPipeOfTheTestProcess() throws {
        guard Browser.executable != nil else { throw HarnessFailure("chromium is not installed") }
        let held = Pipe()  // open in this process while the browser starts, as another test's would be
        let inodes = [held.fileHandleForReading, held.fileHandleForWriting].map { Self.link(of: $0.fileDescriptor, in: getpid()) }
        #expect(inodes.allSatisfy { $0?.hasPrefix("pipe:") == true }, "\(inodes)")
        let browser = try Browser()
        let inherited = Self.links(of: browser.pid).filter { inodes.contains($0) }
        #expect(inherited.isEmpty, "chromium holds the test's pipe: \(inherited)")
        #expect(Self.links(of: browser.pid).contains { $0.hasPrefix("pipe:") }, "its own DevTools pipes are there")
    }

    /// `scripts/dev-postgres` and `scripts/auto-failover` start daemons that outlive them, so they
    /// close every descriptor they inherit but bash's copy of the script. Bash keeps that at 255,
    /// unless the parent already had 255 open: a busy test process had, with `Process`'s exit socket
    /// there, and PostgreSQL kept it, so a cluster's start was never seen to end. A parent with its
    /// descriptors 3 to 253 taken hands `dev-postgres start` a socket at 254 and 255; once the script
    /// has exited, the socket must be at its end although the PostgreSQL it started runs on.
    /// (`auto-failover` closes its descriptors with the same lines.)
    @Test func aScriptThatStartsPostgreSQLKeepsNoDescriptorOfItsParentEvenAt255() throws {
        let folder = Scratch.folder.appendingPathComponent("descriptors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let parent = """
            import os, socket, subprocess, sys
            held = []
            while True:
                fd = os.open("/dev/null", os.O_RDONLY)
                if fd >= 254:
                    os.close(fd)
                    break
                held.append(fd)
            mine, theirs = socket.socketpair()
            assert theirs.fileno() == 255, theirs.fileno()
            child = subprocess.run(sys.argv[1:], pass_fds=[theirs.fileno()], capture_output=True)
            theirs.close()
            mine.settimeout(5)
            try:
                print("end" if mine.recv(1) == b"" else "data", child.returncode)
            except socket.timeout:
                print("held", child.returncode)
            """
        let scriptPath = ReplicaTests.root.appendingPathComponent("scripts/dev-postgres").path
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARDING_PG_DIR"] = folder.path
        defer { _ = try? Shell.run(scriptPath, ["destroy"], environment: environment) }
        let result = try Shell.run("/usr/bin/python3", ["-c", parent, scriptPath, "start"], environment: environment)
        #expect(result.stdout.hasPrefix("end "), "dev-postgres start: \(result.stdout) \(result.stderr)")
    }

    private static func link(of descriptor: Int32, in pid: pid_t) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")
    }

    private static func links(of pid: pid_t) -> [String] {
        let folder = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)") }
    }
}
