/// A configuration the server cannot start with (a key ring, an identity provider, a database
/// URL); the message says what is allowed.
public struct ServerConfigurationError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
