import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        // The transaction's own code is not generic (generic code across modules runs
        // unspecialised, making the metadata of its tuples at run time): the body's value is kept
        // here. It holds the value of the body's last run.
        var value: T?
        func run(_ session: inout Session) throws -> JournalAppend? {
            let (result, journal) = try body(&session)
            value = result
            return journal
        }
        try state.withLock { state in
            if let connection = try existing(&state) {
                _ = try Self.commit(on: connection, key, scopes: scopes, cache: &state.cache, keep: true, run)
                return
            }
            // No file yet: the event runs on an empty database, where nothing is kept. Refused (or
            // changing nothing), it created nothing; accepted, the file is created and the outcome
            // of that one run is written to it: `body` runs once, its effects are not repeated.
            var none: SessionCache?
            let trial = try Self.commit(
                on: emptyDatabase(&state), key, scopes: scopes, cache: &none, keep: false, run)
            guard trial.wrote else { return }
            _ = try Self.commit(
                on: created(&state), key, scopes: scopes, cache: &state.cache, keep: true,
                replaying: trial.outcome, run)
        }
        guard let value else { preconditionFailure("a commit returned without running its body") }
        return value
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
    private static func commit(
        on connection: SQLiteConnection, _ key: SessionKey, scopes: Scopes, cache: inout SessionCache?,
        keep: Bool,
        replaying: Outcome? = nil,
        _ body: (inout Session) throws -> JournalAppend?
    ) throws -> (wrote: Bool, outcome: Outcome) {
        var remembered: SessionCache?
        let result: (wrote: Bool, outcome: Outcome) = try connection.transaction(.immediate) {
            let stamp = try SessionCache.Stamp(connection)
            let before =
                try cache?.session(for: key, scopes: scopes, at: stamp)
                ?? Self.load(connection, key, scopes: scopes)
            var session = before
            let journal: JournalAppend?
            if let replaying, replaying.before == before {
                (session, journal) = (replaying.after, replaying.journal)
            } else {
                journal = try body(&session)
            }
            let changed = try Self.save(connection, key, scopes: scopes, before: before, after: session)
            var context = cache?.context
            if let journal {
                let contextText = try KeptContext.text(of: journal.context, kept: &context)
                try Self.append(connection, key, journal, states: changed, contextText: contextText)
            }
            remembered = SessionCache(
                key: key, scopes: scopes, session: session,
                stamp: SessionCache.Stamp(dataVersion: stamp.dataVersion, changes: connection.totalChanges),
                context: context)
            let outcome = Outcome(before: before, after: session, journal: journal)
            return ((journal != nil || session != before, outcome), commit: keep)
        }
        // Remembered only once the commit succeeded.
        if keep { cache = remembered }
        return result
    }
}
