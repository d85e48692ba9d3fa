#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A storage problem a person can act on.
public struct StorageError: Error, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }

    static func newerSchema(path: String, unknown: [String]) -> StorageError {
        StorageError(
            "the database at \(path) was written by a newer version of this package (unknown migrations: "
                + """
                \(unknown.joined(separator: ", "))); it was left unchanged. Upgrade the CLI or use \
                another --db.
                """
        )
    }

    static func unreadable(path: String, _ underlying: any Error) -> StorageError {
        StorageError("cannot open the database at \(path) (\(underlying)); it was left unchanged.")
    }

    static func missingFolder(path: String, folder: String) -> StorageError {
        StorageError(
            """
            cannot open the database at \(path): the folder \(folder) does not exist. \
            Create it or use another --db.
            """
        )
    }

    static let emptyPath = StorageError(
        "the database path is empty; give a file name, such as --db onboarding.sqlite")

    static func isFolder(path: String) -> StorageError {
        StorageError(
            """
            cannot use \(path) as the database: it is a folder. Name a file in it, such as \
            \(path.hasSuffix("/") ? path : path + "/")onboarding.sqlite.
            """
        )
    }

    static func readOnly(path: String, what: String) -> StorageError {
        StorageError(
            """
            cannot write the database at \(path): \(what) is read-only; it was left unchanged. \
            Make it writable or use another --db.
            """
        )
    }
}
