import Dispatch
import Logging
import ServerDatabase
import ServerKit
import ServiceLifecycle
import Synchronization

/// Bounds a stop of the server's services, whatever a service does. A stop begins at SIGTERM or
/// when the database moved (``DatabaseWatch``); the services then have ``OnboardingServer``'s
/// graceful limit to finish what is in flight, and are cancelled after it. A service that ignores
/// its cancellation would hold the stop forever: the listener closed, nothing started again, the
/// process alive and answering nothing. Past `limit` from the stop's start the watchdog gives up
/// on them, names them in the log, and either starts the services again beside them (the database
/// moved) or ends the process (a SIGTERM: its supervisor is waiting for it).
///
/// Each service runs through ``tracked(_:_:)``, so the log can say which ones did not stop.
final class ServiceWatchdog: Sendable {
    enum Stop: Sendable, Equatable {
        /// The database moved to this host: the services start again on it.
        case moved(DatabaseURL.Endpoint)
        /// SIGTERM or SIGINT: the process ends.
        case shutdown
    }

    /// How the services' run ended.
    enum Outcome: Sendable {
        case finished(Result<Void, any Error>)
        /// They did not stop within the bound after `stop` began; `running` did not end.
        case stuck(Stop, running: [String])
    }

    private struct State {
        var running: [String: Int] = [:]
        var stop: Stop?
        var armed: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    let limit: Duration
    /// Where the watch on the services' end runs (nil: Swift's pool; tests give a thread of their
    /// own, so a suite that keeps the pool busy does not delay it past the bound).
    private let executor: (any TaskExecutor)?

    init(limit: Duration, executor: (any TaskExecutor)? = nil) {
        self.limit = limit
        self.executor = executor
    }

    /// `service`, counted as running under `name` while its `run()` has not returned.
    func tracked(_ name: String, _ service: any Service) -> any Service {
        TrackedService(name: name, service: service, watchdog: self)
    }

    /// The service that tells the watchdog a stop began: the last of the outer group, so the first
    /// to hear its graceful shutdown (a service group shuts its services down in reverse order).
    var sentinel: any Service { StopSentinel(watchdog: self) }

    /// The database moved: the stop that follows starts the services again on `to`.
    func moving(to endpoint: DatabaseURL.Endpoint) {
        state.withLock { if $0.stop == nil { $0.stop = .moved(endpoint) } }
    }

    /// A stop began (for a move, after ``moving(to:)``): the bound runs from now.
    fileprivate func stopBegan() {
        let fire: (@Sendable () -> Void)? = state.withLock { state in
            if state.stop == nil { state.stop = .shutdown }
            return state.armed
        }
        guard let fire else { return }
        DispatchQueue.global().asyncAfter(
            deadline: .now() + .nanoseconds(Int(clamping: limit.nanoseconds)), execute: fire)
    }

    fileprivate func started(_ name: String) { state.withLock { $0.running[name, default: 0] += 1 } }

    fileprivate func ended(_ name: String) {
        state.withLock { state in
            state.running[name, default: 1] -= 1
            if state.running[name] == 0 { state.running[name] = nil }
        }
    }

    /// Waits for `services` to end, or, once a stop began, for the bound to pass (the task is then
    /// left to itself). One run at a time: the watchdog starts afresh for the next.
    func outcome(of services: Task<Void, any Error>) async -> Outcome {
        let answer = Deadline.Answer<Outcome>()
        let begun = state.withLock { state in
            state.armed = { [self] in
                let (stop, running) = self.state.withLock { ($0.stop ?? .shutdown, $0.running.keys.sorted()) }
                answer.give(.success(.stuck(stop, running: running)))
            }
            return state.stop != nil
        }
        // A stop that began before this call (a SIGTERM as the services started) is bounded too.
        if begun { stopBegan() }
        Task(executorPreference: executor) {
            let result: Result<Void, any Error>
            do { result = .success(try await services.value) } catch { result = .failure(error) }
            answer.give(.success(.finished(result)))
        }
        let outcome =
            (try? await withCheckedThrowingContinuation { answer.wait($0) }) ?? .stuck(.shutdown, running: [])
        state.withLock { state in
            state.armed = nil
            state.stop = nil
            state.running = [:]
        }
        return outcome
    }
}

/// A service whose run the watchdog counts.
private struct TrackedService: Service, CustomStringConvertible {
    let name: String
    let service: any Service
    let watchdog: ServiceWatchdog
    var description: String { name }

    func run() async throws {
        watchdog.started(name)
        defer { watchdog.ended(name) }
        try await service.run()
    }
}

/// Returns at the group's graceful shutdown, telling the watchdog a stop began.
private struct StopSentinel: Service, CustomStringConvertible {
    let watchdog: ServiceWatchdog
    var description: String { "stop sentinel" }

    func run() async throws {
        try? await gracefulShutdown()
        watchdog.stopBegan()
    }
}

/// A shutdown the services did not finish within ``OnboardingServer/stopLimit``: the process ends
/// without them, with a failure its supervisor sees.
public struct ServicesDidNotStop: Error, CustomStringConvertible {
    public var running: [String]
    public var description: String {
        """
        the server's services did not stop within \(OnboardingServer.stopLimit) of the shutdown (still \
        running: \(running.joined(separator: ", ")))
        """
    }
}
