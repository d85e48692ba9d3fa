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

    private static func link(of descriptor: Int32, in pid: pid_t) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")
    }

    private static func links(of pid: pid_t) -> [String] {
        let folder = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)") }
    }
}
