import Logging
import PostgresNIO

/// The catch-up's watermark (`insight_progress`: pushes below it are counted) and the reads of the
/// aggregates that other parts of the server need, so every statement on the insights' tables is
/// this module's.
package enum InsightsProgress {
    /// Takes the watermark's lock until the end of `connection`'s transaction: no catch-up counts
    /// while it is held (erasure, the held facts' admission: each takes it first, as the catch-up
    /// does, so none waits on another in the opposite order).
    package static func lock(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "SELECT 1 FROM insight_progress WHERE singleton FOR UPDATE", logger: logger)
    }

    /// The watermark as `connection`'s server has it, and whether that server is a standby
    /// replaying the primary (`pg_is_in_recovery()`).
    package static func countedBelow(on connection: PostgresConnection, logger: Logger) async throws
        -> (watermark: UInt64, inRecovery: Bool)
    {
        var answer: (UInt64, Bool) = (0, false)
        for try await (value, recovering) in try await connection.query(
            "SELECT counted_below::text, pg_is_in_recovery() FROM insight_progress WHERE singleton",
            logger: logger
        ).decode((String, Bool).self) { answer = (UInt64(value) ?? 0, recovering) }
        return answer
    }

    /// One experiment arm's count (`insight_arm_counts`): distinct subjects per variant and
    /// milestone (`assigned`, `exposed`, `goalReached`, or `step` with the step entered after the
    /// assignment, on its device).
    package struct ArmCount: Equatable, Sendable {
        package var experiment: String
        /// The flow that assigned it (the first by name, when several did).
        package var flow: String
        package var variant: String
        package var milestone: String
        package var step: String
        package var subjects: Int
    }

    /// Every arm count of `app`, by experiment, variant, then the step's place in the run.
    package static func armCounts(app: String, on connection: PostgresConnection, logger: Logger)
        async throws -> [ArmCount]
    {
        var counts: [ArmCount] = []
        let arms = try await connection.query(
            """
            SELECT experiment, min(flow), variant, milestone, step, min(step_index), sum(subjects)::bigint
            FROM insight_arm_counts WHERE app = \(app)
            GROUP BY experiment, variant, milestone, step ORDER BY 1, 3, 6, 5
            """, logger: logger)
        for try await (experiment, flow, variant, milestone, step, _, subjects) in arms.decode(
            (String, String, String, String, String, Int64, Int64).self)
        {
            counts.append(
                ArmCount(
                    experiment: experiment, flow: flow, variant: variant, milestone: milestone, step: step,
                    subjects: Int(subjects)))
        }
        return counts
    }

    /// A subject's experiment assignments as its export lists them (JSON text, one per row).
    package static func exportedAssignments(
        app: String, subject: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> [String] {
        var rows: [String] = []
        for try await text in try await connection.query(
            """
            SELECT json_build_object('device', device, 'flow', flow, 'experiment', experiment, 'variant',
                variant)::text
            FROM insight_assignments WHERE app = \(app) AND account = \(subject) ORDER BY device, flow,
                experiment
            """, logger: logger
        ).decode(String.self) { rows.append(text) }
        return rows
    }
}
