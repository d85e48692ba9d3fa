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
}
