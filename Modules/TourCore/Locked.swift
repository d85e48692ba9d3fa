#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a mutex, for state several tasks reach at the edge (the database connection, the
/// stub providers, the CLI's effect log); the engine itself keeps no state to lock. A POSIX mutex
/// rather than Foundation's `NSLock`, which lives in swift-corelibs-foundation on Linux and would
/// bring it (and ICU) into every CLI binary; rather than the standard library's
/// `Mutex`, which needs iOS 18.
public final class Locked<State>: @unchecked Sendable {
    private var state: State
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, alone.
    public func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
