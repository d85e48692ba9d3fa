#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What is at a path, asked of the system directly (`stat`, `access`): the checks made before a
/// database is opened, without Foundation's file attributes, whose values come back as `Any`.
public enum FileStatus: Equatable, Sendable {
    case missing
    case file
    case folder

    public init(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            self = .missing
            return
        }
        self = (info.st_mode & S_IFMT) == S_IFDIR ? .folder : .file
    }

    /// Whether the file or folder at `path` may not be written: by permission for this process, or
    /// marked read-only for everyone (which root would write through).
    public static func isReadOnly(_ path: String) -> Bool {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o222 == 0 { return true }
        return access(path, W_OK) != 0
    }

    /// The folder a path is in, as an absolute path (a relative path is taken from the current
    /// folder).
    public static func folder(of path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : currentFolder() + "/" + path
        guard let slash = absolute.lastIndex(of: "/") else { return "/" }
        let folder = absolute[..<slash]
        return folder.isEmpty ? "/" : String(folder)
    }

    /// `path` as an absolute path without `.` and `..` components (symbolic links are kept), for
    /// people to find a file by.
    public static func absolutePath(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : currentFolder() + "/" + path
        var parts: [Substring] = []
        for part in full.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": _ = parts.popLast()
            default: parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    public static func currentFolder() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Creates `folder` and its parents; whether it exists as a folder afterwards.
    public static func createFolder(_ folder: String) -> Bool {
        if FileStatus(folder) == .folder { return true }
        let parent = Self.folder(of: folder)
        if parent != folder, FileStatus(parent) != .folder, !createFolder(parent) { return false }
        _ = mkdir(folder, 0o755)
        return FileStatus(folder) == .folder
    }

    /// `path` with every byte outside the unreserved characters and `/` percent-encoded, for a
    /// `file:` URI.
    static func percentEncodedPath(_ path: String) -> String {
        var encoded = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                encoded += "%"
                encoded.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
                encoded.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0xF)]))
            }
        }
        return encoded
    }

    public static func sleep(seconds: Double) {
        usleep(UInt32(seconds * 1_000_000))
    }
}
