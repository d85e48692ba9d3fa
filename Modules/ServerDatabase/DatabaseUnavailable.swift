import PostgresNIO

/// PostgreSQL did not do what a request asked, for a passing cause: the request is answered 503
/// with `Retry-After`, and the client tries again. Nothing of it was committed unless
/// ``mayHaveCommitted`` (then PostgreSQL had not confirmed the commit by the request's deadline,
/// and a retry finds what was stored: pushes are keyed by device and sequence, other writes by
/// their `Idempotency-Key`).
///
/// It carries what the log line of the request says: the operation, the reason (a stable code)
/// and the underlying error, so a 503 for a full queue, a push that waited, a statement
/// PostgreSQL cancelled and a closed connection read differently.
public struct DatabaseUnavailable: Error, CustomStringConvertible, Sendable {
    /// What the request was doing.
    public struct Operation: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
        public static let push = Operation(description: "push")
        public static let read = Operation(description: "read")
        public static let write = Operation(description: "write")
        public static let plan = Operation(description: "tracking plan")
    }

    /// Why, as a stable code (the log's `cause` and the metrics' `reason`).
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        /// No writer took the push within its wait.
        public static let waitedForWriter = Reason(description: "waited_for_writer")
        /// No pool connection came within the request's wait.
        public static let waitedForConnection = Reason(description: "waited_for_connection")
        /// The pool could not open a connection.
        public static let noConnection = Reason(description: "no_connection")
        /// PostgreSQL rolled the transaction back for a passing cause (a statement or lock
        /// timeout, an operator's cancel, a deadlock, a standby that cannot write).
        public static let rolledBack = Reason(description: "rolled_back")
        /// The connection broke while a statement ran.
        public static let connectionLost = Reason(description: "connection_lost")
        /// PostgreSQL did not answer by the request's deadline.
        public static let deadline = Reason(description: "deadline")
        /// The commit was sent and not confirmed by the deadline (a synchronous standby that does
        /// not answer, a commit held by a lock): it may have happened.
        public static let commitUnconfirmed = Reason(description: "commit_unconfirmed")
        /// The server is stopping.
        public static let shuttingDown = Reason(description: "shutting_down")

        public init(description: String) { self.description = description }
    }

    public var operation: Operation
    public var reason: Reason
    /// Whether what was asked may have been committed all the same.
    public var mayHaveCommitted: Bool
    /// The underlying error, described on one line (never a query's parameters).
    public var cause: String?

    public init(
        _ operation: Operation, reason: Reason, mayHaveCommitted: Bool = false, cause: (any Error)? = nil
    ) {
        self.operation = operation
        self.reason = reason
        self.mayHaveCommitted = mayHaveCommitted
        self.cause = cause.map(Self.describe)
    }

    public var description: String {
        "\(operation) unavailable: \(reason)" + (mayHaveCommitted ? " (may have committed)" : "")
            + (cause.map { ": \($0)" } ?? "")
    }

    /// Whether `error` says the connection went or PostgreSQL is not taking work now, not that it
    /// refused the request: closed by PostgreSQL (an operator's `pg_terminate_backend`, a restart,
    /// a failover: SQLSTATE classes 08 and 57P), broken, or closed by the pool; a statement or
    /// lock timeout (57014, 55P03); a standby that cannot write (25006). Such a request is answered
    /// 503, not 500: a push sent again is stored once, a read is read again.
    public static func covers(_ error: any Error) -> Bool {
        if error is DatabaseUnavailable { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown,
            .poolClosed:
            return true
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || state.hasPrefix("57P")
                || ["57014", "55P03", "25006", "40001", "40P01"].contains(state)
        default:
            return false
        }
    }

    /// `error` as a ``DatabaseUnavailable`` of `operation` (itself when it is one already).
    public static func from(_ error: any Error, operation: Operation) -> DatabaseUnavailable {
        if let error = error as? DatabaseUnavailable { return error }
        let lost: Bool
        if let error = error as? PSQLError {
            switch error.code {
            case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown:
                lost = true
            case .server:
                lost =
                    (error.serverInfo?[.sqlState] ?? "").hasPrefix("08")
                    || (error.serverInfo?[.sqlState] ?? "").hasPrefix("57P")
            default: lost = false
            }
        } else {
            lost = false
        }
        return DatabaseUnavailable(operation, reason: lost ? .connectionLost : .rolledBack, cause: error)
    }

    /// An error on one line: PostgreSQL's SQLSTATE and message when it is PostgreSQL's, never the
    /// query (whose text spans lines) or its parameters.
    public static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let info = error.serverInfo {
                let state = info[.sqlState] ?? "?"
                let message = info[.message] ?? ""
                return "PostgreSQL \(state): \(message)".oneLine
            }
            return "PostgresNIO \(error.code)".oneLine
        }
        return String(describing: error).oneLine
    }
}

extension String {
    /// The text on one line: newlines and other control characters escaped, at most 500 characters.
    public var oneLine: String {
        var escaped = ""
        for scalar in unicodeScalars.prefix(500) {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    escaped += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        return escaped
    }
}
