import Crypto
import Foundation
import TourCodec

/// Keys derived from the ring for other purposes than signing tokens: pseudonyms of subjects the
/// server must remember without keeping them in clear, and sealed answers.
extension TokenSigner {
    /// A key for `purpose`, derived (HKDF-SHA256) from the ring's key `id` (the signing key when
    /// nil): never the signing key itself, and a different key per purpose.
    func derivedKey(_ purpose: String, keyID id: String? = nil) -> (id: String, key: SymmetricKey)? {
        let chosen: TokenKey? = if let id { keys.first { $0.id == id } } else { keys.first }
        guard let ring = chosen else { return nil }
        return (ring.id, Self.derive(from: ring, for: purpose))
    }

    static func derive(from ring: TokenKey, for purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ring.key, info: Data("onboarding-server \(purpose)".utf8), outputByteCount: 32)
    }

    /// A keyed hash (HMAC-SHA256 under a key derived from the signing key) of `value`, in hex:
    /// the same value gives the same pseudonym, and nobody without the key ring can tell the value
    /// from it by guessing.
    package func pseudonym(_ value: String, purpose: String, keyID: String? = nil) -> String {
        guard let (_, key) = derivedKey("pseudonym \(purpose)", keyID: keyID) else { return "" }
        return ByteText.hex(HMAC<SHA256>.authenticationCode(for: Data(value.utf8), using: key))
    }

    /// How the server names a subject wherever it must remember one it may not keep in clear (the
    /// audit trail's rows about accounts and installs, an erasure's answer): `hmac:` and 128 bits
    /// of a keyed hash (HMAC-SHA256 under a key derived from the signing key) of app and subject.
    /// The same subject gives the same name while the signing key stays; without the key ring
    /// nobody can tell the subject from it, even by guessing likely ids (an unsalted hash of an
    /// e-mail-like id is reversed by hashing guesses).
    public func subjectPseudonym(app: String, subject: String, keyID: String? = nil) -> String {
        let index = keyID.flatMap { id in keys.firstIndex { $0.id == id } } ?? 0
        return Self.subjectPseudonym(app: app, subject: subject, key: subjectPseudonymKeys[index])
    }

    /// The subject's pseudonym under every key of the ring, the signing key's first: what a
    /// sign-out or an erasure remembered under an older key is still found while that key is in
    /// the ring, and a token that key signed still verifies. Once a key leaves the ring, no token
    /// issued before a cut-off it named can verify either.
    public func subjectPseudonyms(app: String, subject: String) -> [String] {
        subjectPseudonymKeys.map { Self.subjectPseudonym(app: app, subject: subject, key: $0) }
    }

    private static func subjectPseudonym(app: String, subject: String, key: SymmetricKey) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data("\(app)\u{0}\(subject)".utf8), using: key)
        return "hmac:" + ByteText.hex(Data(code).prefix(16))
    }

    /// `bytes` sealed (AES-GCM) under a key derived from the signing key, prefixed with that key's
    /// id so a ring that moved on still opens it.
    package func seal(_ bytes: [UInt8], purpose: String) throws -> [UInt8] {
        guard let (id, key) = derivedKey("seal \(purpose)") else {
            throw ServerConfigurationError("the key ring is empty")
        }
        let box = try AES.GCM.seal(bytes, using: key)
        guard let combined = box.combined else {
            throw ServerConfigurationError("AES-GCM gave no combined box")
        }
        return [UInt8(id.utf8.count)] + Array(id.utf8) + Array(combined)
    }

    /// What ``seal(_:purpose:)`` sealed; throws when no key of the ring opens it (or it was altered).
    package func open(_ sealed: [UInt8], purpose: String) throws -> [UInt8] {
        guard let count = sealed.first.map(Int.init), sealed.count > 1 + count else {
            throw ServerConfigurationError("not a sealed answer")
        }
        let id = String(decoding: sealed[1...count], as: UTF8.self)
        guard let (_, key) = derivedKey("seal \(purpose)", keyID: id) else {
            throw ServerConfigurationError("the key \(id) that sealed it is no longer in the ring")
        }
        return Array(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed[(1 + count)...]), using: key))
    }
}
