import Logging
import PostgresNIO
import TourCore

extension Insights {
    /// A guarded rollout's evidence (``GuardedRollout/Evidence``): the subjects whose journey in
    /// `flow` started on `candidate` and on `baseline` at or after `since` (seconds since 1970, as
    /// the devices reported the start), and how many of each completed it or reached the step.
    ///
    /// Read from the journeys the catch-up counted (`insight_journeys`, one row per subject and
    /// flow: its first run), on the connection given: the rollout guard's, on the primary, so a
    /// decision is never taken on a replica's stale copy.
    public static func guardrailEvidence(
        app: String, guardrail: GuardedRollout.Guardrail, candidate: Int, baseline: Int, since: Double,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> GuardedRollout.Evidence {
        let step: String? = if case .step(let name) = guardrail.metric { name } else { nil }
        let rows = try await connection.query(
            """
            SELECT j.catalog_version, count(*)::bigint,
                count(*) FILTER (WHERE CASE WHEN \(step)::text IS NULL THEN j.completed ELSE EXISTS (
                    SELECT 1 FROM insight_firsts f
                    WHERE f.app = j.app AND f.flow = j.flow AND f.milestone = 'step'
                        AND f.step = \(step)::text
                        AND f.subject = j.subject) END)::bigint
            FROM insight_journeys j
            WHERE j.app = \(app) AND j.flow = \(guardrail.flow) AND j.started_at >= \(since)
                AND j.catalog_version IN (\(Int64(candidate)), \(Int64(baseline)))
            GROUP BY j.catalog_version
            """, logger: logger)
        var evidence = GuardedRollout.Evidence(
            candidate: Proportion(successes: 0, trials: 0), baseline: Proportion(successes: 0, trials: 0))
        for try await (version, trials, successes) in rows.decode((Int64, Int64, Int64).self) {
            let proportion = Proportion(successes: Int(successes), trials: Int(trials))
            if version == Int64(candidate) {
                evidence.candidate = proportion
            } else {
                evidence.baseline = proportion
            }
        }
        return evidence
    }
}
