import Foundation

/// Starts the tests' child processes one at a time.
///
/// On Linux, Foundation's `Process.run()` keeps a child from inheriting the parent's descriptors
/// by listing the highest one open and closing every one up to it in the child. A descriptor that
/// another thread opens between that listing and the spawn leaks into the child. The tests run in
/// parallel, so a pipe being made for one command, or the socket by which `Process` learns that
/// its child exited, could leak into a server started at that moment: the command's output then
/// never ends, and its `Process` never sees the exit, until that server stops (one CI run waited
/// 120 s on a `scripts/dev-postgres start` that had long finished).
///
/// Every test that starts a process makes its pipes, pseudo-terminals and the process itself
/// inside `spawning`, so no descriptor is opened while another child is being spawned.
public enum ChildProcess {
    private static let lock = NSLock()

    /// Runs `body`, which opens the child's descriptors and calls `run()`, while no other test does.
    public static func spawning<Value>(_ body: () throws -> Value) rethrows -> Value {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Starts `process` with a pipe for its input and one for its output (its errors dropped), the
    /// pipes made under the same lock: a session a test talks to line by line.
    public static func runWithPipes(_ process: Process) throws -> (input: Pipe, output: Pipe) {
        try spawning {
            let (input, output) = (Pipe(), Pipe())
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            return (input, output)
        }
    }
}

#if canImport(Glibc)
    import Glibc
    private let systemRead = Glibc.read
#elseif canImport(Darwin)
    import Darwin
    private let systemRead = Darwin.read
#endif

/// Reading and writing a child's pipes without trapping.
///
/// Foundation's `write(_:)`, `readDataToEndOfFile()` and `availableData` end the whole test process
/// on any error: a child that exited before reading its input (EPIPE), or a read interrupted by a
/// signal on a loaded machine (EINTR), took every test down with it in one CI run. These retry an
/// interrupted read and report a closed pipe as the end of the conversation, so the test that
/// started the child sees what the child did and fails on its own expectations.
extension FileHandle {
    /// Writes `text`; a reader that has gone away is not an error here (its exit status says why).
    public func send(_ text: String) {
        try? write(contentsOf: Data(text.utf8))
    }

    /// Everything until end of file, retrying reads a signal interrupts.
    public func readUntilEnd() -> Data {
        var data = Data()
        while let chunk = readChunk(), !chunk.isEmpty { data.append(chunk) }
        return data
    }

    /// What one read returns: empty at end of file, nil on an error other than an interruption.
    public func readChunk(upTo count: Int = 65_536) -> Data? {
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let read = buffer.withUnsafeMutableBytes { systemRead(fileDescriptor, $0.baseAddress, count) }
            if read >= 0 { return Data(buffer[0..<read]) }
            if errno != EINTR { return nil }
        }
    }
}
