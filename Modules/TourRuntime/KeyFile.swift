import AccountSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file beside a database that holds the key sealing its secrets (``SealedSecrets``): 32 bytes,
/// readable by its owner only (created with mode 0600, never widened), so a copy of the database
/// alone does not open them.
enum KeyFile {
    /// The key, when the file holds one (exactly 32 bytes).
    static func read(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 33)
        let count = bytes.withUnsafeMutableBytes { Glue.read(descriptor, $0.baseAddress, 33) }
        return count == 32 ? Array(bytes.prefix(32)) : nil
    }

    /// Makes the file with a new key; when another process made it first, its key.
    static func create(_ path: String) throws -> [UInt8] {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST, let bytes = read(path) { return bytes }
            throw SyncError.localStorage("the key file \(path) could not be made (errno \(errno))")
        }
        defer { close(descriptor) }
        let bytes = SealedSecrets.newKeyBytes()
        let written = bytes.withUnsafeBytes { Glue.write(descriptor, $0.baseAddress, 32) }
        guard written == 32, fsync(descriptor) == 0 else {
            unlink(path)
            throw SyncError.localStorage("the key file \(path) could not be written (errno \(errno))")
        }
        return bytes
    }

    /// The C library's read and write, by names that do not clash with this type's.
    private enum Glue {
        static func read(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
            #if canImport(Darwin)
                Darwin.read(descriptor, buffer, count)
            #elseif canImport(Musl)
                Musl.read(descriptor, buffer, count)
            #else
                Glibc.read(descriptor, buffer, count)
            #endif
        }
        static func write(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
            #if canImport(Darwin)
                Darwin.write(descriptor, buffer, count)
            #elseif canImport(Musl)
                Musl.write(descriptor, buffer, count)
            #else
                Glibc.write(descriptor, buffer, count)
            #endif
        }
    }
}
