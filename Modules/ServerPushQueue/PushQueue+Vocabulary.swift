// The push queue's vocabulary: its configuration, the ids it hands out, what it answers and
// what it asks the shell to do. The machine itself is in PushQueue.swift.
extension PushQueue {
    package struct Configuration: Hashable, Sendable {
        /// Batches written at once.
        package var writers: Int
        /// Pushes in one batch (one per account).
        package var maximumBatch: Int
        /// Pushes that may wait for a writer; past it a push is shed at once.
        package var maximumQueued: Int
        /// How long a push may wait for a writer (queued, or in a batch whose connection has not
        /// come yet) before it is answered, not stored.
        package var maximumWait: Duration
        /// How long a push may wait for a writer: a statement that runs longer is cancelled by
        /// PostgreSQL, and a push being written is answered by `maximumWait + statementLimit` after
        /// it arrived.
        package var statementLimit: Duration
        /// Past a full batch of pushes waiting, a push is shed at once once the oldest waiting one
        /// has waited longer than this for ``sheddingInterval`` (the writers do not keep up): the
        /// queue then holds what the writers drain in about this long, so an accepted push waits
        /// about this long, not until its deadline (nil: only ``maximumQueued`` sheds). CoDel's
        /// rule (Nichols and Jacobson), with the queue's sojourn time read at each arrival.
        package var targetQueueDelay: Duration?
        /// How long the queue must stay behind its target before pushes are shed: a burst the
        /// writers drain within it is taken whole.
        package var sheddingInterval: Duration = .milliseconds(100)

        package init(
            writers: Int, maximumBatch: Int, maximumQueued: Int, maximumWait: Duration,
            statementLimit: Duration,
            targetQueueDelay: Duration? = nil
        ) {
            self.writers = max(1, writers)
            self.maximumBatch = max(1, maximumBatch)
            self.maximumQueued = max(1, maximumQueued)
            self.maximumWait = maximumWait
            self.statementLimit = statementLimit
            self.targetQueueDelay = targetQueueDelay
        }

        /// The latest a push that arrived at `arrived` is answered.
        package func deadline(arrived: Duration) -> Duration { arrived + maximumWait + statementLimit }
    }

    /// Time since the shell's origin (the machine never reads a clock).
    package typealias Instant = Duration

    package struct PushID: Hashable, Comparable, Sendable, CustomStringConvertible {
        package let value: UInt64
        package static func < (a: Self, b: Self) -> Bool { a.value < b.value }
        package var description: String { "push \(value)" }
    }

    package struct BatchID: Hashable, Sendable, CustomStringConvertible {
        package let value: UInt64
        package var description: String { "batch \(value)" }
    }

    /// Whose rows a push writes: pushes of one account are written one batch at a time.
    package struct Account: Hashable, Sendable {
        package var app: String
        package var account: String
        package init(app: String, account: String) {
            self.app = app
            self.account = account
        }
    }

    /// Why a push was answered without being acknowledged (a 503 with `Retry-After`).
    package enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// The queue was full, or behind its target delay, when it arrived: shed at once.
        case queueFull
        /// No writer took it within `maximumWait`.
        case waitedForWriter
        /// The pool gave its batch no connection (PostgreSQL down, refusing connections).
        case noConnection
        /// PostgreSQL rolled its transaction back for a passing cause: the statement or a lock
        /// took too long (`statement_timeout`, `lock_timeout`), an operator cancelled it, a
        /// deadlock, a standby that cannot write.
        case rolledBack
        /// The connection broke while its statement ran: it may have committed.
        case connectionLost
        /// PostgreSQL had not answered by the push's deadline: it may still commit.
        case deadline
        /// The server is stopping.
        case shuttingDown

        /// Whether the push may have been stored all the same (so a retry finds it as duplicates).
        package var mayHaveCommitted: Bool { self == .connectionLost || self == .deadline }

        package var description: String {
            switch self {
            case .queueFull: "queue_full"
            case .waitedForWriter: "waited_for_writer"
            case .noConnection: "no_connection"
            case .rolledBack: "rolled_back"
            case .connectionLost: "connection_lost"
            case .deadline: "deadline"
            case .shuttingDown: "shutting_down"
            }
        }
    }

    package enum Answer: Hashable, Sendable {
        /// Its transaction committed (200 with the acknowledgement).
        case committed
        /// Not acknowledged, for `Reason` (503 with `Retry-After`).
        case unavailable(Reason)
        /// PostgreSQL refused this push's own data: nothing of it stored, sending it again will
        /// not help (the shell answers with PostgreSQL's error).
        case refused
        /// Its write failed for another cause: nothing of it stored (500).
        case failed
        /// The caller went away before a writer took it.
        case cancelled
    }

    /// How a write of one or more pushes (one transaction) ended.
    package enum WriteOutcome: Hashable, Sendable {
        case committed
        /// PostgreSQL rolled it back for a passing cause (``Reason/rolledBack``).
        case rolledBack
        /// The connection broke while it ran (``Reason/connectionLost``).
        case connectionLost
        /// PostgreSQL refused the data of some push in it (SQLSTATE classes 22 and 23).
        case refusedData
        /// Any other failure.
        case failed
    }

    package enum Action: Hashable, Sendable {
        /// Lease a connection of the writers' pool for the batch, then report
        /// ``connectionLeased(_:now:)`` or ``leaseFailed(_:now:)``.
        case lease(BatchID)
        /// Write these pushes in one transaction on the batch's connection, then report
        /// ``written(_:_:now:)``. Only ever returned to the batch's own reports.
        case write(BatchID, [PushID])
        case answer([PushID], Answer)
        /// The batch is done: give its connection back.
        case release(BatchID)
        /// The batch is given up (every push of it answered, its write not ended): cancel its lease
        /// or close its connection. Its later reports are ignored.
        case abandon(BatchID)
        /// Shutdown is complete: nothing is queued and no batch holds a writer.
        case stopped
    }
}
