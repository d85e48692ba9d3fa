import Foundation
import TestThreads
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
        let inodes = [held.fileHandleForReading, held.fileHandleForWriting].map {
            Self.link(of: $0.fileDescriptor, in: getpid())
        }
        #expect(inodes.allSatisfy { $0?.hasPrefix("pipe:") == true }, "\(inodes)")
        let browser = try Browser()
        let inherited = Self.links(of: browser.pid).filter { inodes.contains($0) }
        #expect(inherited.isEmpty, "chromium holds the test's pipe: \(inherited)")
        #expect(
            Self.links(of: browser.pid).contains { $0.hasPrefix("pipe:") }, "its own DevTools pipes are there"
        )
    }

    /// `scripts/dev-postgres` and `scripts/auto-failover` leave daemons behind. A parent that hands
    /// one a descriptor (as `Process` hands every child the socket by which it learns of the exit)
    /// must see that descriptor at its end when the script exits, and not before:
    /// - not before: a script that closed it at its start was seen to end while it ran, and
    ///   `Process` then waited for it on the one thread that sees every child's exit, so no other
    ///   child of the test process was seen to end meanwhile (a cluster's start stalled them all);
    /// - not after: a PostgreSQL that kept a copy kept the script from being seen to end at all.
    ///   It happened when the test process had descriptor 255 open (bash then reads the script
    ///   through a lower one, and the script had kept 255 as its own).
    /// The parent here hands `dev-postgres start` a socket, at 255 with 3 to 253 taken or wherever
    /// it falls, and reads it until its end.
    @Test(arguments: [true, false])
    func aScriptThatStartsPostgreSQLHoldsItsParentsDescriptorExactlyUntilItExits(at255: Bool) throws {
        let folder = Scratch.folder.appendingPathComponent("descriptors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let parent = """
            import os, socket, subprocess, sys, time
            held = []
            while sys.argv[1] == "at255":
                fd = os.open("/dev/null", os.O_RDONLY)
                if fd >= 254:
                    os.close(fd)
                    break
                held.append(fd)
            mine, theirs = socket.socketpair()
            assert sys.argv[1] != "at255" or theirs.fileno() == 255, theirs.fileno()
            child = subprocess.Popen(sys.argv[2:], pass_fds=[theirs.fileno()], stdout=subprocess.DEVNULL)
            theirs.close()
            mine.settimeout(120)
            try:
                ended = mine.recv(1) == b""
            except socket.timeout:
                ended = False
            at_end = time.monotonic()
            still_running = child.poll() is None
            status = child.wait(timeout=120)
            if not ended:
                print("held by a daemon, exit", status)
            elif still_running and time.monotonic() - at_end > 0.5:
                print("ended %.1f s before the script, exit %d" % (time.monotonic() - at_end, status))
            else:
                print("end at exit", status)
            """
        let scriptPath = ReplicaTests.root.appendingPathComponent("scripts/dev-postgres").path
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARDING_PG_DIR"] = folder.path
        defer { _ = try? Shell.run(scriptPath, ["destroy"], environment: environment) }
        let result = try Shell.run(
            "/usr/bin/python3", ["-c", parent, at255 ? "at255" : "anywhere", scriptPath, "start"],
            environment: environment, seconds: 240)
        #expect(result.stdout == "end at exit 0\n", "dev-postgres start: \(result.stdout) \(result.stderr)")
    }

    private static func link(of descriptor: Int32, in pid: pid_t) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")
    }

    private static func links(of pid: pid_t) -> [String] {
        let folder = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")
        }
    }
}
