import Crypto
import TourCodec

/// SHA-256 over bytes, for a catalog document's fingerprint and the rollout's buckets: swift-crypto's
/// (BoringSSL's on Linux, CryptoKit's on Apple platforms), which every product already links
/// through AccountSync. The fingerprint identifies a document; it is not a secret or a signature.
/// `SHA256Tests` checks it against FIPS 180-4's examples.
public struct SHA256Hasher: Sendable {
    private var hash = SHA256()

    public init() {}

    /// The digest of `bytes`, as 64 lowercase hexadecimal digits.
    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var hash = SHA256Hasher()
        hash.update(bytes)
        return ByteText.hex(hash.finalize())
    }

    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        // Contiguous bytes (a String's UTF-8, an array: every caller here) straight from their
        // storage; other sequences copied once.
        let done: Void? = bytes.withContiguousStorageIfAvailable {
            hash.update(bufferPointer: UnsafeRawBufferPointer($0))
        }
        if done == nil { hash.update(data: Array(bytes)) }
    }

    /// The 32-byte digest. The value is spent afterwards.
    public mutating func finalize() -> [UInt8] { Array(hash.finalize()) }
}
