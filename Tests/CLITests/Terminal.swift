import Foundation
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

/// A product's executable on a pseudo-terminal, as a person at a keyboard runs it: what it
/// writes is read from the terminal's other side, and keys are typed into it.
final class TerminalSession {
    let process: Process
    private let master: Int32
    private var seen = ""

    init(_ cli: CLI, arguments: [String]) throws {
        let process = cli.process(arguments)
        self.process = process
        master = try ChildProcess.spawning {
            let pty = PseudoTerminalCalls()
            let master = pty.open(O_RDWR | O_NOCTTY)
            guard master >= 0, pty.grant(master) == 0, pty.unlock(master) == 0, let name = pty.name(master)
            else {
                throw CLIFailure("no pseudo-terminal")
            }
            let slave = open(String(cString: name), O_RDWR | O_NOCTTY)
            guard slave >= 0 else { throw CLIFailure("cannot open \(String(cString: name))") }
            let handle = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
            process.standardInput = handle
            process.standardOutput = handle
            process.standardError = handle
            defer { close(slave) }  // the child has its own copies
            try process.run()
            return master
        }
    }

    deinit {
        if process.isRunning { process.terminate() }
        close(master)
    }

    /// Types `text` as keystrokes.
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { write(master, $0.baseAddress, $0.count) }
    }

    /// Whether `text` has appeared after the first `offset` characters shown, within the timeout.
    /// Reads only what `poll` says is there, so it never blocks past the timeout.
    @discardableResult
    func waitFor(_ text: String, after offset: Int = 0, timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var quietAfterExit = 0
        while true {
            if seen.count > offset, seen.dropFirst(offset).contains(text) { return true }
            guard Date() < deadline else { return false }
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 100)
            if ready > 0 {
                guard descriptor.revents & Int16(POLLIN) != 0, readAvailable() else { return false }
            } else if !process.isRunning {
                // The process is gone and nothing more arrives.
                quietAfterExit += 1
                if quietAfterExit > 3 { return false }
            }
        }
    }

    var output: String { seen }

    private func readAvailable() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(master, &buffer, buffer.count)
        guard count > 0 else { return false }
        seen += String(decoding: buffer[0..<count], as: UTF8.self)
        return true
    }

    /// Waits for the process to end; its exit status, or nil after the timeout.
    func exitStatus(timeout: Double = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline {
            _ = waitFor("\u{0}", after: seen.count, timeout: 0.1)
        }
        return process.isRunning ? nil : process.terminationStatus
    }
}

/// posix_openpt, grantpt, unlockpt and ptsname, looked up in the C library (Glibc's Swift module
/// leaves them out: they need _XOPEN_SOURCE).
private struct PseudoTerminalCalls {
    typealias Call = @convention(c) (Int32) -> Int32
    typealias Name = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
    let open: Call
    let grant: Call
    let unlock: Call
    let name: Name

    init() {
        let library = dlopen(nil, RTLD_NOW)
        func symbol<T>(_ name: String, as type: T.Type) -> T { unsafeBitCast(dlsym(library, name), to: type) }
        open = symbol("posix_openpt", as: Call.self)
        grant = symbol("grantpt", as: Call.self)
        unlock = symbol("unlockpt", as: Call.self)
        name = symbol("ptsname", as: Name.self)
    }
}
