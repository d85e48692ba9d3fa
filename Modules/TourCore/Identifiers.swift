/// A name-like identifier backed by a string: encodes as the bare string (Swift's default for
/// `String`-backed `RawRepresentable` types), prints as it, and can be written as a literal.
public protocol StringIdentifier: RawRepresentable, Hashable, Codable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
where RawValue == String {
    init(rawValue: String)
}

extension StringIdentifier {
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public var description: String { rawValue }
}

/// The rule every id that leaves the device keeps (flow ids in catalogs and facts, app, account
/// and device ids on the account server): one definition, so a device never writes what the server
/// refuses (`SyncAPI.isValidName` is this).
public enum WireName {
    public static let maximumLength = 128
    public static let rule = "1 to 128 ASCII letters, digits, '.', '_', '-' or '@'"

    public static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= maximumLength
            && text.unicodeScalars.allSatisfy { scalar in
                (scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)))
                    || "._-@".unicodeScalars.contains(scalar)
            }
    }
}

/// Identifies one flow of one product, such as `walkthrough` or `intro`.
public struct FlowID: StringIdentifier, Comparable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Identifies one step inside a flow, such as `currentWeek`.
public struct StepID: StringIdentifier {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}
