import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where tests put their files: a folder of this test process's own under the system's temporary
/// folder, removed when the process exits. A run that crashed or was killed leaves its folder, and
/// the next run removes every folder whose process is gone. (Each test made its own folders next to
/// everything else in `/tmp` and most never removed them: thousands of device and CLI folders a
/// full run.)
public enum Scratch {
    public static let folder: URL = {
        let base = FileManager.default.temporaryDirectory
        removeFoldersOfEndedRuns(in: base)
        let folder = base.appendingPathComponent(name(of: getpid()))
        // A process id can be reused: what a dead run of the same id left is not this run's.
        try? FileManager.default.removeItem(at: folder)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        atexit {
            try? FileManager.default.removeItem(
                at: FileManager.default.temporaryDirectory.appendingPathComponent(Scratch.name(of: getpid())))
        }
        return folder
    }()

    static let prefix = "onboarding-tests-"

    static func name(of process: pid_t) -> String { "\(prefix)\(process)" }

    /// Removes the folders whose test process no longer runs.
    static func removeFoldersOfEndedRuns(in base: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            guard let process = pid_t(name.dropFirst(prefix.count)), hasEnded(process) else { continue }
            try? FileManager.default.removeItem(at: base.appendingPathComponent(name))
        }
    }

    /// Whether `process` is another test process that no longer runs (what a run left can go).
    public static func hasEnded(_ process: pid_t) -> Bool {
        process != getpid() && kill(process, 0) != 0 && errno == ESRCH
    }
}
