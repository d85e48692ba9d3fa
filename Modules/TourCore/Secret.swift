/// A value a person typed that must never be written anywhere in clear text (a password).
///
/// Its stored form (in an effect or event, through TourCodec) is `"‹redacted›"`, and it prints the
/// same way, so one that carries it can be journaled or logged without leaking it. Only
/// ``reveal()`` gives the text, for the one protocol (the Keychain on iOS) that stores it.
public struct Secret: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public static let redactedText = "‹redacted›"
    private let text: String

    public init(_ text: String) { self.text = text }

    /// The clear text. Call it only where the secret is handed to secure storage.
    public func reveal() -> String { text }

    public var description: String { Self.redactedText }
    public var debugDescription: String { Self.redactedText }
}
