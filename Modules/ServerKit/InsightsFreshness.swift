import Dispatch
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import ServerInsights
import ServiceLifecycle
import Synchronization
import TourCodec

/// How fresh the insights figures are, followed by one service per server instead of asked by
/// every page: the catch-up job (any server's) says after each run how far it counted
/// (`NOTIFY insights_counted`, heard on one connection), and a replica's own count is read once a
/// second (a standby hears no notification). Pages read what this knows and say how fresh their
/// figures are; no page view writes on the primary or waits. `/report`, which promises every push
/// answered before it was asked for, waits once: for the notification that its target is counted
/// (and, on a replica, for the replica to replay it), never by polling per request; it asks this
/// server's job for that run now (``InsightsCountRequests``) rather than at its next tick.
package final class InsightsFreshness: Service, Sendable {
    /// One run of the catch-up job as its notification tells it.
    struct Run: Sendable, Equatable {
        /// Every transaction below it is counted.
        var watermark: UInt64
        /// The run began when no transaction at or above this id had started.
        var startXmax: UInt64
        /// When the run began (PostgreSQL's clock, seconds since 1970).
        var startedAt: Double
        /// Every push committed before the run began is counted.
        var isComplete: Bool { watermark >= startXmax }

        init?(payload: String) {
            let parts = payload.split(separator: " ")
            guard parts.count == 3, let watermark = UInt64(parts[0]), let xmax = UInt64(parts[1]),
                let at = Double(parts[2])
            else { return nil }
            (self.watermark, startXmax, startedAt) = (watermark, xmax, at)
        }
    }

    private struct Waiter {
        var target: UInt64
        var onReplica: Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        /// The newest watermark heard from the primary, and the newest complete runs (for the
        /// time a watermark stands for).
        var primary: UInt64 = 0
        var complete: [Run] = []
        /// The replica's watermark when last read, and when.
        var replica: UInt64?
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
        var listening = false
    }

    static let channel = "insights_counted"

    private let state = Mutex(State())
    private let listen: PostgresConnection.Configuration
    private let replica: ReadOnlyDatabase?
    /// The replica's URL asks for a standby (`target_session_attrs=standby`): a host out of
    /// recovery is not counted as answering.
    private let replicaStandbyOnly: Bool
    /// Where a `/report` that must wait asks this server's catch-up job for a run now.
    package let countRequests = InsightsCountRequests()
    private let logger: Logger

    /// `listen` connects to the primary; `replica`, when the figures are read there (its reads fall
    /// back to the primary while it does not answer: ``ReadOnlyDatabase/fallback``).
    package init(
        listen: PostgresConnection.Configuration, replica: ReadOnlyDatabase?,
        replicaStandbyOnly: Bool = false, logger: Logger
    ) {
        self.listen = listen
        self.replica = replica
        self.replicaStandbyOnly = replicaStandbyOnly
        self.logger = logger
    }

    /// Whether pages read the replica now (one is configured, and it answers).
    package var readsReplica: Bool { replica.map { !$0.isFallingBack } ?? false }

    // MARK: - What pages read

    /// Until when every committed push is counted in the figures a page reads (the primary's, or
    /// the replica's when there is one), seconds since 1970; nil until it is known.
    var countedUntil: Double? {
        state.withLock { state in
            let watermark = readsReplica ? state.replica : state.primary
            guard let watermark else { return nil }
            return state.complete.last { $0.watermark <= watermark }?.startedAt
        }
    }

    /// A sentence for a page: how fresh its figures are, or nil while it is not known.
    package func notice(now: Date = Date()) -> String? {
        guard let until = countedUntil else { return nil }
        let age = max(0, now.timeIntervalSince1970 - until)
        let time = String(ISOTime.wholeSeconds(until).dropFirst(11).dropLast())
        if replica != nil, !readsReplica {
            return "The replica does not answer: these figures are read from the primary"
                + (age < 5
                    ? "."
                    : ", and count every push committed until \(time) UTC, \(Int(age.rounded())) s ago.")
        }
        let source = replica == nil ? "" : " (read from a replica)"
        return age < 5
            ? nil
            : """
            These figures count every push committed until \(time) UTC, \(Int(age.rounded())) s ago\
            \(source); reload for newer ones.
            """
    }

    // MARK: - What `/report` waits for

    /// Waits until every transaction below `target` is counted (on the replica too when
    /// `onReplica`), at most `limit`; whether it was.
    package func waitForCount(below target: UInt64, onReplica: Bool, within limit: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id: UInt64? = state.withLock { state in
                let reached = onReplica ? (state.replica ?? 0) >= target : state.primary >= target
                if reached { return nil }
                let id = state.nextWaiter
                state.nextWaiter += 1
                state.waiters[id] = Waiter(target: target, onReplica: onReplica, continuation: continuation)
                return id
            }
            guard let id else { return continuation.resume(returning: true) }
            countRequests.ask()
            DispatchQueue.global().asyncAfter(
                deadline: .now() + .nanoseconds(Int(clamping: limit.nanoseconds))
            ) { [self] in
                let late = state.withLock { $0.waiters.removeValue(forKey: id) }
                late?.continuation.resume(returning: false)
            }
        }
    }

    /// Seconds between now and what the replica counted, when it is known.
    package var replicaBehind: Double? {
        guard readsReplica, let until = countedUntil else { return nil }
        return max(0, Date().timeIntervalSince1970 - until)
    }

    /// Seconds between now and what the primary counted (every push committed before then is in
    /// its figures), when it is known.
    package var primaryBehind: Double? {
        state.withLock { state -> Double? in
            state.complete.last { $0.watermark <= state.primary }?.startedAt
        }.map { max(0, Date().timeIntervalSince1970 - $0) }
    }

    // MARK: - Following

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.listenForRuns() }
                if self.replica != nil { group.addTask { await self.followReplica() } }
            }
        }
    }

    /// Hears every run of the catch-up job, reconnecting when the connection goes.
    private func listenForRuns() async {
        var failures = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: listen, id: 0, logger: logger)
                defer { Task { try? await connection.close() } }
                try await connection.listen(on: Self.channel) { notifications in
                    if failures > 0 {
                        logger.info(
                            "following the insights' count again", metadata: ["after_failures": "\(failures)"]
                        )
                    }
                    failures = 0
                    for try await notification in notifications {
                        if let run = Run(payload: notification.payload) { heard(run) }
                    }
                }
            } catch {
                failures += 1
                if failures == 1 || failures % 60 == 0 {
                    logger.warning(
                        """
                        the insights' count is not followed: LISTEN failed; pages say so until it works again
                        """,
                        metadata: [
                            "cause": "\(DatabaseUnavailable.describe(error))",
                            "failures_in_a_row": "\(failures)",
                        ])
                }
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    private func heard(_ run: Run) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.primary = max(state.primary, run.watermark)
            if run.isComplete {
                state.complete.append(run)
                if state.complete.count > 1_000 { state.complete.removeFirst(state.complete.count - 1_000) }
            }
            return Self.resume(&state)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Reads each replica host's count once a second, and every 50 ms while a report waits for
    /// the replica (one query a host for all of them). A host that answers as its URL asks (with
    /// `target_session_attrs=standby`, in recovery: a primary after a failover is not a replica)
    /// is noted as answering; the count pages read is that of the first such host, the one reads go
    /// to (``ReadOnlyDatabase/read(within:_:)``).
    private func followReplica() async {
        // Each host itself, never its fallback: this read is what says whether it answers.
        guard let hosts = replica?.chain.dropLast(), !hosts.isEmpty else { return }
        let standbyOnly = replicaStandbyOnly
        while !Task.isCancelled {
            var watermark: UInt64?
            for (host, health) in hosts {
                do {
                    let (mark, recovering) = try await host.read(within: .seconds(2)) { connection, logger in
                        try await InsightsProgress.countedBelow(on: connection, logger: logger)
                    }
                    guard recovering || !standbyOnly else { continue }
                    health?.noteAnswer()
                    if watermark == nil, health?.isAnswering() ?? true { watermark = mark }
                } catch {
                    logger.debug(
                        "a replica's count was not read",
                        metadata: [
                            "replica": "\(host.name)", "cause": "\(DatabaseUnavailable.describe(error))",
                        ])
                }
            }
            if let watermark {
                let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                    state.replica = watermark
                    return Self.resume(&state)
                }
                for continuation in ready { continuation.resume(returning: true) }
            }
            let waiting = state.withLock { $0.waiters.values.contains { $0.onReplica } }
            try? await Task.sleep(for: waiting ? .milliseconds(50) : .seconds(1))
        }
    }

    private static func resume(_ state: inout State) -> [CheckedContinuation<Bool, Never>] {
        let reached = state.waiters.filter { _, waiter in
            waiter.onReplica ? (state.replica ?? 0) >= waiter.target : state.primary >= waiter.target
        }
        for id in reached.keys { state.waiters[id] = nil }
        return reached.values.map(\.continuation)
    }
}
