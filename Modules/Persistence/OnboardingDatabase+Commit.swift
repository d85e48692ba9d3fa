#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TourCore

/// Committing: one event's rows (flow state, journal, side effects) in one immediate transaction.
extension OnboardingDatabase {
    /// Loads the session, lets `body` change it, and commits the changed rows and the journal row
    /// `body` returns in one immediate transaction. If `body` throws, nothing is written.
    ///
    /// Every accepted event goes through here: flow state, journal row and product domain state
    /// land together or not at all.
    @discardableResult
    public func commit<T>(
        _ key: SessionKey, scopes: Scopes, _ body: (inout Session) throws -> (T, JournalAppend?)
    ) throws -> T {
        try state.withLock { state in
            if let connection = try existing(&state) {
                return try Self.commit(on: connection, key, scopes: scopes, cache: &state.cache, keep: true, body).value
            }
            // No file yet: the event runs on an empty database, where nothing is kept. Refused (or
            // changing nothing), it created nothing; accepted, the file is created and the outcome
            // of that one run is written to it: `body` runs once, its effects are not repeated.
            var none: SessionCache?
            let trial = try Self.commit(on: emptyDatabase(&state), key, scopes: scopes, cache: &none, keep: false, body)
            guard trial.wrote, let outcome = trial.outcome else { return trial.value }
            return try Self.commit(
                on: created(&state), key, scopes: scopes, cache: &state.cache, keep: true,
                replaying: (trial.value, outcome), body
            ).value
        }
    }

    /// What one run of a commit's body did: the session before and after, and its journal row.
    private struct Outcome {
        var before: Session
        var after: Session
        var journal: JournalAppend?
    }

    /// One event's transaction: committed and the session it leaves remembered in `cache` when
    /// `keep`, rolled back otherwise (the trial on an empty database).
    ///
    /// With `replaying`, the outcome of the body's run on the empty database is written instead of
    /// running the body again, as long as the new file holds the same session that run started
    /// from. Only when another process created the file and wrote this session in between does the
    /// body run again, on what is there now (as any transaction retried after a conflict would).
    private static func commit<T>(
        on connection: SQLiteConnection, _ key: SessionKey, scopes: Scopes, cache: inout SessionCache?, keep: Bool,
        replaying: (value: T, outcome: Outcome)? = nil,
        _ body: (inout Session) throws -> (T, JournalAppend?)
    ) throws -> (value: T, wrote: Bool, outcome: Outcome?) {
        var remembered: SessionCache?
        let result: (T, Bool, Outcome) = try connection.transaction(.immediate) {
            let stamp = try SessionCache.Stamp(connection)
            let before = try cache?.session(for: key, scopes: scopes, at: stamp) ?? Self.load(connection, key, scopes: scopes)
            var session = before
            let value: T
            let journal: JournalAppend?
            if let replaying, replaying.outcome.before == before {
                (value, session, journal) = (replaying.value, replaying.outcome.after, replaying.outcome.journal)
            } else {
                (value, journal) = try body(&session)
            }
            let changed = try Self.save(connection, key, scopes: scopes, before: before, after: session)
            if let journal { try Self.append(connection, key, journal, states: changed) }
            remembered = SessionCache(
                key: key, scopes: scopes, session: session,
                stamp: SessionCache.Stamp(dataVersion: stamp.dataVersion, changes: connection.totalChanges))
            let outcome = Outcome(before: before, after: session, journal: journal)
            return ((value, journal != nil || session != before, outcome), commit: keep)
        }
        // Remembered only once the commit succeeded.
        if keep { cache = remembered }
        return result
    }
}
