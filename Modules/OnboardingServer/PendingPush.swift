import PostgresNIO
import Synchronization
import AccountSync

extension PendingPush {
    /// The writer's answer; a statement PostgreSQL cancelled (the writers' `statement_timeout`,
    /// SQLSTATE 57014) rolled back, so the push is answered as not stored: 503, try again. So is a
    /// push whose connection went (``DatabaseUnavailable/covers(_:)``): sent again, it is stored once.
    func answer(_ result: Result<PushAck?, any Error>) {
        if case .failure(let error) = result,
            (error as? PSQLError)?.serverInfo?[.sqlState] == "57014" || DatabaseUnavailable.covers(error)
        {
            finish(.failure(DatabaseUnavailable()))
        } else {
            finish(result)
        }
    }
}

/// One push waiting for its answer: queued, then written (claimed by a writer holding a
/// connection), then answered exactly once, by its transaction or, while still queued, by its
/// deadline, the queue's bound or the caller's cancellation.
final class PendingPush: Sendable {
    private enum Phase {
        case queued, writing, answered
    }

    private struct State {
        var phase = Phase.queued
        var continuation: CheckedContinuation<PushAck?, any Error>?
        var result: Result<PushAck?, any Error>?
    }

    let request: PushRequest
    let enqueued = ContinuousClock.now
    private let state = Mutex(State())

    init(_ request: PushRequest) { self.request = request }

    /// Sets where the answer goes; answers at once when it already has one.
    func wait(_ continuation: CheckedContinuation<PushAck?, any Error>) {
        let ready = state.withLock { state -> Result<PushAck?, any Error>? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(with: ready) }
    }

    /// Neither written nor answered yet.
    var isQueued: Bool { state.withLock { $0.phase == .queued } }

    /// A writer takes it: from now on only its transaction answers. False when already answered.
    func claim() -> Bool {
        state.withLock { state in
            guard state.phase == .queued else { return false }
            state.phase = .writing
            return true
        }
    }

    /// Answers with `error` unless a writer has it; whether it did.
    func abandon(_ error: any Error) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<PushAck?, any Error>?? in
            guard state.phase == .queued else { return .none }
            state.phase = .answered
            defer { state.continuation = nil }
            if state.continuation == nil { state.result = .failure(error) }
            return .some(state.continuation)
        }
        guard let continuation else { return false }
        continuation?.resume(throwing: error)
        return true
    }

    /// The writer's answer.
    func finish(_ result: Result<PushAck?, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<PushAck?, any Error>? in
            guard state.phase == .writing else { return nil }
            state.phase = .answered
            defer { state.continuation = nil }
            if state.continuation == nil { state.result = result }
            return state.continuation
        }
        continuation?.resume(with: result)
    }
}
