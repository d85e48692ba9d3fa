import AccountSync
import AsyncHTTPClient
import Foundation
import NIOCore
import OnboardingServer
import ServerKit
import ServerTokens
import TourCodec

/// Section 8's failover load: devices pushing at a steady pace while the primary dies. Unlike the
/// throughput load (``PushDevice``), a device here behaves as the app does when a push fails: it
/// keeps the event and sends the same seq again at its next slot (a new connection if the old one
/// closed: the servers restart their listener when the database moves). So every push a device
/// held acknowledged must be stored exactly once, and what it never had acknowledged is retried.
struct FailoverLoad {
    let server: URL
    let signer: TokenSigner
    let devices: Int
    /// Seconds between one device's pushes.
    let pace: Double
    let duration: Double
    /// Set to end the run before `duration` (a run of several failovers ends when they are done).
    var stopped: Locked<Bool>? = nil
    /// An attempt answered (or left without an answer) later than this after it was sent is past
    /// its deadline: the server answers a push within 4 s of its arrival (Reliability.md), and
    /// nginx and the client are given half a second more.
    static let answerBound = 4.5

    struct Outcome: Sendable {
        /// Per device: the seqs it had acknowledged (200).
        var acknowledged: [String: [Int64]] = [:]
        /// Monotonic seconds of each acknowledgement, and of each refused or failed attempt.
        var acceptedAt: [Double] = []
        var refusedAt: [Double] = []
        /// Attempts answered past ``answerBound``, or not at all within the client's 5 s.
        var late = 0
    }

    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Runs the devices for `duration`; `during` is started beside them (the kill and the promotion).
    func run(app: String, run: String, during: @escaping @Sendable () async throws -> Void) async throws
        -> Outcome
    {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { Task { try? await client.shutdown() } }
        let runs = try ServerLoad.devices(devices, run: run, app: app)
        let expires = Int64(Date().timeIntervalSince1970) + 3600
        let end = Self.now() + duration
        // Where a stuck run is: devices still going 10 s after the end, said every 10 s.
        let going = Locked(devices)
        let watchdog = Task {
            try await Task.sleep(for: .seconds(duration + 10))
            while true {
                ClusterProcesses.progress(
                    "\(going.withLock { $0 }) of \(devices) devices still pushing, past the end")
                try await Task.sleep(for: .seconds(10))
            }
        }
        defer { watchdog.cancel() }
        return try await withThrowingTaskGroup(of: Outcome.self) { group in
            for device in runs {
                let token = await signer.sign(
                    TokenClaims(subject: device.account, scope: .account, app: app, expires: expires))
                let url =
                    server.absoluteString + SyncAPI.accountPath(app: app, account: device.account) + "/push"
                group.addTask {
                    var device = device
                    var outcome = Outcome()
                    var item = device.item()
                    // A random phase, then one slot every `pace`.
                    var slot = Self.now() + Double.random(in: 0..<pace)
                    while slot < end, !(stopped?.withLock { $0 } ?? false) {
                        let wait = slot - Self.now()
                        if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
                        var request = HTTPClientRequest(url: url)
                        request.method = .POST
                        request.headers.add(name: "Authorization", value: "Bearer \(token)")
                        request.headers.add(name: "Content-Type", value: "application/json")
                        request.body = .bytes(
                            ByteBuffer(
                                bytes: try PushBatch(device: device.device, items: [item]).tourValue
                                    .jsonUTF8()))
                        var accepted = false
                        // The whole attempt under a deadline of our own: a connection the server
                        // closed while it started again on the new primary once held an answer's
                        // body forever (AsyncHTTPClient's timeout ends at the head).
                        let attempt = request
                        let sent = Self.now()
                        do {
                            accepted = try await answered(within: .seconds(5)) {
                                let response = try await client.execute(attempt, timeout: .seconds(5))
                                _ = try await response.body.collect(upTo: 1 << 20)
                                return response.status == .ok
                            }
                        } catch {}
                        if Self.now() - sent > Self.answerBound { outcome.late += 1 }
                        if accepted {
                            outcome.acknowledged[device.device, default: []].append(item.seq)
                            outcome.acceptedAt.append(Self.now())
                            item = device.item()
                        } else {
                            outcome.refusedAt.append(Self.now())
                        }
                        // The next slot still ahead: an attempt that took its whole deadline
                        // skips the slots it spent, as a device keeps its pace.
                        slot += pace
                        let now = Self.now()
                        if slot < now { slot += (((now - slot) / pace).rounded(.down) + 1) * pace }
                    }
                    going.withLock { $0 -= 1 }
                    return outcome
                }
            }
            group.addTask {
                try await during()
                return Outcome()
            }
            var all = Outcome()
            for try await outcome in group {
                all.acknowledged.merge(outcome.acknowledged) { $0 + $1 }
                all.acceptedAt += outcome.acceptedAt
                all.refusedAt += outcome.refusedAt
                all.late += outcome.late
            }
            return all
        }
    }
}

/// A value shared between tasks, behind a lock.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// The first of `operation`'s answer and `limit`: the operation runs in a task of its own, cancelled
/// at the limit and left to end (a load generator's HTTP exchange, never a database write).
func answered<T: Sendable>(within limit: Duration, _ operation: @escaping @Sendable () async throws -> T)
    async throws -> T
{
    let box = FirstAnswer<T>()
    return try await withCheckedThrowingContinuation { continuation in
        box.set(continuation)
        let work = Task { box.give(await Result(catching: operation)) }
        Task {
            try? await Task.sleep(for: limit)
            box.give(.failure(CancellationError()))
            work.cancel()
        }
    }
}

private final class FirstAnswer<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        lock.withLock { self.continuation = continuation }
    }

    func give(_ result: Result<T, any Error>) {
        let taken = lock.withLock { () -> CheckedContinuation<T, any Error>? in
            defer { continuation = nil }
            return continuation
        }
        taken?.resume(with: result)
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
