import Logging
import PostgresNIO

/// A store of rows on PostgreSQL: its writes through the primary's pool (``WritableDatabase``,
/// each a transaction under the write bounds), its reads where the server reads its figures
/// (``ReadOnlyDatabase``: a replica, when one is configured). A conforming store also opens with
/// ``init(client:logger:)``, both through one pool, as the command-line tools and tests do.
public protocol PostgresStore: Sendable {
    init(writes: WritableDatabase, reads: ReadOnlyDatabase, logger: Logger)
}

extension PostgresStore {
    /// Reads and writes through one pool (tools, tests).
    public init(client: PostgresClient, logger: Logger) {
        self.init(
            writes: WritableDatabase(client: client, logger: logger),
            reads: ReadOnlyDatabase(sharing: client, logger: logger),
            logger: logger)
    }
}
