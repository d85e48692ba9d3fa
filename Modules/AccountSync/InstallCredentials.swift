import Crypto
import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the account server answers an install's enrollment (`POST /v1/apps/{app}/installs`,
/// Docs/Server.md, "Installs"): the subject the install's data is kept under (`install.<id>`) and
/// the credential that opens it.
public struct InstallCredential: Equatable, Sendable {
    public var subject: String
    public var credential: Secret
    /// Seconds since 1970 after which the server refuses the credential.
    public var expires: Int64

    public init(subject: String, credential: Secret, expires: Int64) {
        self.subject = subject
        self.credential = credential
        self.expires = expires
    }
}

extension InstallCredential: TourValueConvertible {
    public init(tourValue: TourValue) throws {
        let reader = try TourValueReader(tourValue, as: "enrollment")
        subject = try reader.string("subject")
        credential = Secret(try reader.string("credential"))
        expires = Int64(try reader.int("expires"))
        guard subject.hasPrefix("install."), SyncAPI.isValidName(subject) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [], debugDescription: "the subject is not an install's: \(subject.prefix(80))"
                ))
        }
    }

    /// For output: the credential itself is redacted (``storedText`` is the form that holds it).
    public var tourValue: TourValue {
        [
            "subject": .string(subject), "credential": .string(Secret.redactedText),
            "expires": .int(Int(expires)),
        ]
    }

    /// The stored form, with the credential in clear: sealed before it is stored (``SealedSecrets``).
    public var storedText: String {
        (try? TourValue.members([
            "subject": .string(subject), "credential": .string(credential.reveal()),
            "expires": .int(Int(expires)),
        ]).jsonText()) ?? ""
    }
}

/// Where a device keeps its install credential: the SQLite file's secret store on the CLI (sealed,
/// ``SealedSecrets``), the Keychain in the iOS apps.
public protocol InstallCredentialStore: Sendable {
    func load() throws -> InstallCredential?
    func save(_ credential: InstallCredential) throws
    /// Forgets the credential (the server no longer accepts it; the install enrolls again).
    func forget() throws
}

/// Secrets sealed with AES-GCM under a 256-bit key kept apart from what they are stored in: a copy
/// of the database alone does not give the secret away. The text form is base64 of the sealed box
/// (nonce, ciphertext and tag); a box that was altered, or sealed under another key, does not open.
public struct SealedSecrets: Sendable {
    private let key: SymmetricKey

    public init(keyBytes: [UInt8]) throws(SyncError) {
        guard keyBytes.count == 32 else {
            throw .localStorage("a sealing key is 32 bytes, not \(keyBytes.count)")
        }
        key = SymmetricKey(data: keyBytes)
    }

    /// 32 random bytes from the system's generator: a new sealing key.
    public static func newKeyBytes() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }

    public func seal(_ secret: Secret) throws(SyncError) -> String {
        do {
            guard let combined = try AES.GCM.seal(Data(secret.reveal().utf8), using: key).combined else {
                throw SyncError.localStorage("the secret could not be sealed")
            }
            return combined.base64EncodedString()
        } catch {
            throw .localStorage("the secret could not be sealed: \(error)")
        }
    }

    /// The secret, or nil when the box does not open with this key (altered, or another key's).
    public func open(_ sealed: String) -> Secret? {
        guard let data = Data(base64Encoded: sealed), let box = try? AES.GCM.SealedBox(combined: data),
            let clear = try? AES.GCM.open(box, using: key)
        else { return nil }
        return Secret(String(decoding: clear, as: UTF8.self))
    }
}
