import TourCodec

/// SHA-256 (FIPS 180-4) over bytes, for the catalog document's fingerprint.
///
/// Why not swift-crypto here: TourCore is the engine the iOS apps embed, and it depends on nothing
/// (the rollout's buckets and a catalog's fingerprint are computed inside it). Everything outside
/// the engine hashes with swift-crypto (the server's `CatalogStore.fingerprint`, the publication
/// signatures). The fingerprint identifies a document; it is not a secret or a signature.
/// `SHA256Tests` checks this against FIPS 180-4's examples and against swift-crypto over random
/// inputs of every length up to a few blocks.
public struct SHA256Hasher: Sendable {
    private var state: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab,
        0x5be0_cd19,
    ]
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    public init() { buffer.reserveCapacity(64) }

    /// The digest of `bytes`, as 64 lowercase hexadecimal digits.
    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var hash = SHA256Hasher()
        hash.update(bytes)
        return ByteText.hex(hash.finalize())
    }

    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        // Contiguous bytes (a String's UTF-8, an array: every caller here) go a block at a time
        // straight from their storage; the byte-by-byte path is for other sequences.
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(contiguous: $0) }
        guard done == nil else { return }
        for byte in bytes {
            buffer.append(byte)
            length &+= 1
            if buffer.count == 64 {
                buffer.withUnsafeBufferPointer { compress($0) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    private mutating func update(contiguous bytes: UnsafeBufferPointer<UInt8>) {
        length &+= UInt64(bytes.count)
        var start = 0
        // Fill a block begun by an earlier update first.
        if !buffer.isEmpty {
            let taken = min(64 - buffer.count, bytes.count)
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[0..<taken]))
            start = taken
            guard buffer.count == 64 else { return }
            buffer.withUnsafeBufferPointer { compress($0) }
            buffer.removeAll(keepingCapacity: true)
        }
        while bytes.count - start >= 64 {
            compress(UnsafeBufferPointer(rebasing: bytes[start..<start + 64]))
            start += 64
        }
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
    }

    /// The 32-byte digest. The value is spent afterwards.
    public mutating func finalize() -> [UInt8] {
        let bits = length &* 8
        buffer.append(0x80)
        if buffer.count > 56 {
            buffer += [UInt8](repeating: 0, count: 64 - buffer.count)
            buffer.withUnsafeBufferPointer { compress($0) }
            buffer.removeAll(keepingCapacity: true)
        }
        buffer += [UInt8](repeating: 0, count: 56 - buffer.count)
        for shift in stride(from: 56, through: 0, by: -8) {
            buffer.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
        buffer.withUnsafeBufferPointer { compress($0) }
        buffer.removeAll()
        return state.flatMap { word in
            [
                UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16),
                UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word),
            ]
        }
    }

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4,
        0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7,
        0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc,
        0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351,
        0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e,
        0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585,
        0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f,
        0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7,
        0xc671_78f2,
    ]

    /// One 64-byte block into the state.
    private mutating func compress(_ block: UnsafeBufferPointer<UInt8>) {
        Self.k.withUnsafeBufferPointer { k in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                for index in 0..<16 {
                    w[index] =
                        UInt32(block[index &* 4]) << 24 | UInt32(block[index &* 4 &+ 1]) << 16
                        | UInt32(block[index &* 4 &+ 2]) << 8 | UInt32(block[index &* 4 &+ 3])
                }
                for index in 16..<64 {
                    let w15 = w[index &- 15]
                    let w2 = w[index &- 2]
                    let s0 = w15.rotatedRight(7) ^ w15.rotatedRight(18) ^ (w15 >> 3)
                    let s1 = w2.rotatedRight(17) ^ w2.rotatedRight(19) ^ (w2 >> 10)
                    w[index] = w[index &- 16] &+ s0 &+ w[index &- 7] &+ s1
                }
                var (a, b, c, d, e, f, g, h) = (
                    state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7]
                )
                for index in 0..<64 {
                    let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                    let choice = (e & f) ^ (~e & g)
                    let t1 = h &+ s1 &+ choice &+ k[index] &+ w[index]
                    let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = s0 &+ majority
                    (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
                }
                state[0] &+= a
                state[1] &+= b
                state[2] &+= c
                state[3] &+= d
                state[4] &+= e
                state[5] &+= f
                state[6] &+= g
                state[7] &+= h
            }
        }
    }
}

extension UInt32 {
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { (self >> count) | (self << (32 &- count)) }
}
