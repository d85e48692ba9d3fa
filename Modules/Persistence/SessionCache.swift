import TourCore

/// The session the last commit of this connection left, so the next event of the same session
/// (an interactive run, `play`, an app's process) does not read and decode every stored flow and
/// value again. It is used only while nothing else wrote: another connection (another process)
/// changes `PRAGMA data_version`, and any other write of this connection (sync, rebuild, another
/// user's commit, which may change install-scoped rows) changes its total change count.
struct SessionCache {
    struct Stamp: Equatable {
        var dataVersion: Int
        var changes: Int
    }

    var key: SessionKey
    var scopes: Scopes
    var session: Session
    var stamp: Stamp

    func session(for key: SessionKey, scopes: Scopes, at stamp: Stamp) -> Session? {
        key == self.key && scopes == self.scopes && stamp == self.stamp ? session : nil
    }
}

extension SessionCache.Stamp {
    /// This connection's view now (read inside the transaction, so it is the transaction's).
    init(_ connection: SQLiteConnection) throws {
        self.init(
            dataVersion: try connection.first("PRAGMA data_version") { $0.int(0) ?? -1 } ?? -1,
            changes: connection.totalChanges)
    }
}
