import Foundation
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import ServerInsights
import ServerKit
import ServiceLifecycle
import TourCodec
import TourCore

/// The service that moves guarded rollouts (``GuardedRollouts``): every `interval` it reads each
/// running rollout's evidence, asks ``GuardedRollout/decide(_:now:)`` what to do, and does it:
/// raises the publication to the next stage, completes the guard, or withdraws the publication
/// when the guardrail shows a drop. Each act is one transaction with its audit row, which names
/// the service, the server it ran on and the evidence.
///
/// One server at a time: the service holds a PostgreSQL session advisory lock on a connection of
/// its own while it leads. The other servers try the lock every interval; when the leader dies or
/// loses its connection (a failover), PostgreSQL frees the lock and the next to try takes it. It
/// reads the evidence and acts on that connection only: the primary (a host in recovery is left
/// at once), never a replica's copy that may be behind.
package struct RolloutGuard: Service {
    /// An arbitrary constant: the lock the leading server holds.
    static let lockID: Int64 = 0x0B0A_6A7D
    /// A look (every rollout's evidence read and acted on) abandoned past this, and the connection
    /// with it: a host that stopped answering does not hold the guard.
    static let lookLimit: Duration = .seconds(30)

    let configuration: PostgresConnection.Configuration
    let interval: Duration
    let ready: SchemaReady
    let logger: Logger

    package init(
        configuration: PostgresConnection.Configuration, interval: Duration, ready: SchemaReady,
        logger: Logger
    ) {
        self.configuration = configuration
        self.interval = interval
        self.ready = ready
        self.logger = logger
    }
    /// Who acts, in the audit trail: the service, and the server it runs on.
    let actor = Actor(
        name: "rollout guard",
        source:
            "server \(ProcessInfo.processInfo.hostName) (pid \(ProcessInfo.processInfo.processIdentifier))",
        person: nil)

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await ready.wait()
            while !Task.isCancelled {
                do { try await lead() } catch is CancellationError { return } catch {
                    logger.warning(
                        "the rollout guard lost its connection; trying again",
                        metadata: ["error": "\(String(reflecting: error).prefix(300))"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// Takes the lock if it is free and, while this server holds it, looks every interval.
    private func lead() async throws {
        let connection = try await PostgresConnection.connect(
            configuration: configuration, id: 1, logger: logger)
        do {
            try await connection.query("SET statement_timeout = '10s'", logger: logger)
            let rows = try await connection.query(
                "SELECT pg_try_advisory_lock(\(Self.lockID))", logger: logger)
            var leads = false
            for try await locked in rows.decode(Bool.self) { leads = locked }
            if leads {
                logger.notice("this server runs the rollout guard")
                while !Task.isCancelled {
                    let looked = await Bounded.answer(within: Self.lookLimit, otherwise: false) {
                        do {
                            try await look(on: connection)
                            return true
                        } catch {
                            logger.warning(
                                "a look of the rollout guard failed",
                                metadata: ["error": "\(String(reflecting: error).prefix(300))"])
                            return false
                        }
                    }
                    if !looked { break }
                    try await Task.sleep(for: interval)
                }
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    /// One look at every running guarded rollout.
    func look(on connection: PostgresConnection) async throws {
        let recovery = try await connection.query("SELECT pg_is_in_recovery()", logger: logger)
        for try await inRecovery in recovery.decode(Bool.self) where inRecovery {
            throw RolloutGuardError("the database is a standby; the guard acts on the primary only")
        }
        for record in try await GuardedRollouts.all(app: nil, on: connection, logger: logger, running: true) {
            let evidence = try await Insights.guardrailEvidence(
                app: record.app, guardrail: record.value.plan.guardrail, candidate: record.version,
                baseline: record.baseline,
                since: record.startedAt, on: connection, logger: logger)
            try await act(on: record, evidence, at: Date().timeIntervalSince1970, connection)
        }
    }

    /// Decides on `evidence` and does what was decided, in one transaction that holds the app's
    /// catalogs (a person's publish, withdraw or command waits for it, or it for them).
    private func act(
        on seen: GuardedRollouts.Record, _ evidence: GuardedRollout.Evidence, at now: Double,
        _ connection: PostgresConnection
    ) async throws {
        try await connection.query("BEGIN", logger: logger)
        do {
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext(\("catalogs/" + seen.app)))", logger: logger)
            // Read again under the lock: a person may have paused, ended or withdrawn it meanwhile.
            guard
                var record = try await GuardedRollouts.record(
                    app: seen.app, version: seen.version, on: connection, logger: logger),
                record.value.status == .running
            else {
                try await connection.query("ROLLBACK", logger: logger)
                return
            }
            let before = record.value
            let (next, decision) = before.decide(evidence, now: now)
            let difference = evidence.difference
            let details: TourValue = .members([
                "rollout": .int(next.percent), "previousRollout": .int(before.percent),
                "stage": .int(next.stage + 1),
                "guard": .string(before.plan.guardrail.text),
                "candidate": [
                    "version": .int(record.version), "subjects": .int(evidence.candidate.trials),
                    "reached": .int(evidence.candidate.successes),
                ],
                "baseline": [
                    "version": .int(record.baseline), "subjects": .int(evidence.baseline.trials),
                    "reached": .int(evidence.baseline.successes),
                ],
                "interval": difference.map {
                    .list([.double($0.interval.lowerBound), .double($0.interval.upperBound)])
                },
            ])
            let words: String
            switch decision {
            case .raise(let percent):
                try await connection.query(
                    """
                    UPDATE catalogs SET rollout = \(Int32(percent)), recorded_at = \(now),
                        recorded_by = \(actor.name)
                    WHERE app = \(record.app) AND version = \(Int64(record.version))
                    """, logger: logger)
                try await audit("rollout.raised", record, details, now, connection)
                words = "raised to \(percent)%"
            case .complete:
                try await audit("rollout.completed", record, details, now, connection)
                words = "complete at \(next.percent)%"
            case .rollBack:
                try await connection.query(
                    """
                    UPDATE catalogs SET withdrawn_at = \(now) WHERE app = \(record.app)
                        AND version = \(Int64(record.version))
                    """,
                    logger: logger)
                try await audit("rollout.rolled-back", record, details, now, connection)
                words =
                    """
                    rolled back: the guardrail shows a drop beyond \
                    \(GuardedRollout.Guardrail.points(before.plan.guardrail.tolerance))
                    """
            case .wait(let reason): words = "waits for \(reason)"
            case .none: words = "does nothing"
            }
            record.value = next
            if next != before {
                record.updatedAt = now
                try await GuardedRollouts.update(record, on: connection, logger: logger)
            }
            // A look is kept when it saw something new or did something: the interval over time.
            let last = try await GuardedRollouts.lastLook(
                app: record.app, version: record.version, on: connection, logger: logger)
            if next != before || last?.evidence != evidence {
                try await GuardedRollouts.insert(
                    GuardedRollouts.Look(
                        at: now, percent: next.percent, evidence: evidence, interval: difference?.interval,
                        decision: words),
                    app: record.app, version: record.version, on: connection, logger: logger)
            }
            try await connection.query("COMMIT", logger: logger)
            if next != before {
                logger.notice(
                    "guarded rollout \(words)",
                    metadata: ["app": "\(record.app)", "version": "\(record.version)"])
            }
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    private func audit(
        _ action: String, _ record: GuardedRollouts.Record, _ details: TourValue, _ now: Double,
        _ connection: PostgresConnection
    ) async throws {
        try await AuditLog.append(
            .init(
                at: now, actor: actor, app: record.app, action: action, target: "version \(record.version)",
                details: details),
            on: connection, logger: logger)
    }
}

struct RolloutGuardError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
