/// A storage problem a person can act on.
public struct StorageError: Error, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }

    static func newerSchema(path: String, unknown: [String]) -> StorageError {
        StorageError(
            "the database at \(path) was written by a newer version of this package (unknown migrations: "
                + "\(unknown.joined(separator: ", "))); it was left unchanged. Upgrade the CLI or use another --db."
        )
    }

    static func unreadable(path: String, _ underlying: any Error) -> StorageError {
        StorageError("cannot open the database at \(path): \(underlying)")
    }
}
