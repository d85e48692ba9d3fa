import Logging
import PostgresNIO
import ServerTokens

/// Once an erasure or a sign-out everywhere commits, no push under its subject commits with a token
/// issued before it.
///
/// Checking the cut-off in the push's statement is not enough: under READ COMMITTED a statement
/// reads as of its start, so a push that began before the erasure committed, and wrote after it,
/// stored rows of an erased subject. The fence is a lock both take, per subject (an advisory lock
/// keyed by app and subject): a push takes it shared and only then reads the cut-off
/// (`push_fence`, a VOLATILE function, so its read sees what committed before the lock was
/// granted); an erasure or a sign-out takes it exclusive before it changes anything. A push that
/// got the lock first commits before the erasure reads what to delete; one that came after sees
/// the cut-off and stores nothing (401).
package enum SubjectFence {
    /// A seed of the lock's key, so the subjects' keys stay apart from other advisory locks'.
    static let seed: Int64 = 0x5EB_1EC7

    /// v21: the function every push statement calls once per subject it writes.
    package static let v21 = [
        """
        CREATE OR REPLACE FUNCTION push_fence(p_app text, p_account text, p_issued_at float8) RETURNS boolean
        LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock_shared(hashtextextended(p_app || '/' || p_account, \(seed)));
            RETURN NOT EXISTS (
                SELECT 1 FROM token_cutoffs WHERE app = p_app AND account = p_account \
        AND not_before > p_issued_at);
        END
        $$
        """
    ]

    /// v22: cut-offs are kept under the subject's pseudonyms
    /// (``TokenSigner/subjectPseudonyms(app:subject:)``), never its id: the fence locks on the id
    /// (a lock keeps nothing) and reads the cut-off under any of `p_names`, the pseudonyms under
    /// each key of the ring, separated by commas.
    package static let v22 = [
        """
        CREATE OR REPLACE FUNCTION push_fence(p_app text, p_account text, p_names text, \
        p_issued_at float8) RETURNS boolean
        LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock_shared(hashtextextended(p_app || '/' || p_account, \(seed)));
            RETURN NOT EXISTS (
                SELECT 1 FROM token_cutoffs
                WHERE app = p_app AND account = ANY(string_to_array(p_names, ',')) AND not_before > \
        p_issued_at);
        END
        $$
        """
    ]

    /// Takes `subject`'s fence exclusive for the rest of the transaction: pushes of the subject in
    /// flight commit first, later ones wait and then see what this transaction commits.
    static func close(app: String, subject: String, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtextextended(\(app) || '/' || \(subject), \(seed)))",
            logger: logger)
    }
}
