/// A value a person typed that must never be written anywhere in clear text (a password).
///
/// It encodes as `"‹redacted›"` and prints the same way, so an effect or event that carries one can
/// be journaled or logged without leaking it. Only ``reveal()`` gives the text, for the one protocol
/// (the Keychain on iOS) that stores it.
public struct Secret: Hashable, Sendable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    public static let redactedText = "‹redacted›"
    private let text: String

    public init(_ text: String) { self.text = text }

    /// The clear text. Call it only where the secret is handed to secure storage.
    public func reveal() -> String { text }

    public var description: String { Self.redactedText }
    public var debugDescription: String { Self.redactedText }

    public init(from decoder: any Decoder) throws {
        _ = try decoder.singleValueContainer().decode(String.self)
        text = Self.redactedText
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Self.redactedText)
    }
}
