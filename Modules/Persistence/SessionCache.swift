import TourCodec
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
    /// The context of the last journal row this connection wrote and its JSON text (a value, not
    /// the session's: kept whoever the next session is, and reused only for an identical context).
    var context: KeptContext?

    func session(for key: SessionKey, scopes: Scopes, at stamp: Stamp) -> Session? {
        key == self.key && scopes == self.scopes && stamp == self.stamp ? session : nil
    }
}

/// A context and its JSON text: most events of a session have the context of the event before, and
/// comparing is cheaper than writing sorted JSON again.
struct KeptContext {
    var value: TourContext
    var text: String

    /// The text of `context`: the kept one when the context is identical, else written anew.
    static func text(of context: TourContext, kept: inout KeptContext?) throws -> String {
        if let kept, Self.identical(kept.value, context) { return kept.text }
        let text = try JSONCoding.text(context)
        kept = KeptContext(value: context, text: text)
        return text
    }

    /// Equal and written the same: `==` takes 0.0 and -0.0 for the same number, whose texts differ.
    static func identical(_ a: TourContext, _ b: TourContext) -> Bool {
        a.count == b.count && a.allSatisfy { key, value in b[key].map { identical(value, $0) } ?? false }
    }

    private static func identical(_ a: TourValue, _ b: TourValue) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)): x == y && x.sign == y.sign
        case (.list(let x), .list(let y)): x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
        case (.object(let x), .object(let y)): identical(x, y)
        default: a == b
        }
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
