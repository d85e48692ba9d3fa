import TourCodec

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A value the user enters during a flow: a form input, a choice, a week number, a password.
///
/// Fields live for one run of the flow; an interruption that restarts the flow clears them.
public struct FieldSpec: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case text
        /// Never stored: the engine keeps only the fact that it was entered.
        case secret
        /// Comma-separated on input, a list in state ("4 apps selected"): at least one item, each
        /// once (a repeat, in any letter case, is dropped).
        case list
        case choice([String])
        /// A whole number in `minimum...`, at most `maximum` when given and at most the context value
        /// at `maximumKey` when given (both: the smaller).
        case integer(minimum: Int, maximum: Int? = nil, maximumKey: String?)
        /// A calendar date that exists, written YYYY-MM-DD, no later than the context's date at
        /// `latestKey` when given (a birth date is not in the future).
        case date(latestKey: String?)
    }

    public enum Rule: Sendable, Equatable {
        case required
        case minimumCount(Int)
    }

    public var name: String
    public var kind: Kind
    public var initial: TourValue?
    public var rule: Rule?
    /// Said when the rule fails, e.g. "Select at least one app to continue."
    public var ruleMessage: String

    public init(
        _ name: String, _ kind: Kind, initial: TourValue? = nil, rule: Rule? = nil, ruleMessage: String? = nil
    ) {
        self.name = name
        self.kind = kind
        self.initial = initial
        self.rule = rule
        self.ruleMessage = ruleMessage ?? "\(name) is required"
    }

    func satisfiesRule(_ value: TourValue?) -> Bool {
        switch rule {
        case nil: true
        case .required: (value?.count ?? 0) > 0
        case .minimumCount(let minimum): (value?.count ?? 0) >= minimum
        }
    }

    /// The longest value any field takes: a name, a list of apps, a password.
    public static let maximumLength = 500

    /// Turns typed text into the field's value, or says what is allowed.
    func parse(_ text: String, context: TourContext) -> Result<TourValue, FieldInputError> {
        if text.count > Self.maximumLength {
            return .failure(.init("\(name) must be at most \(Self.maximumLength) characters"))
        }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return .failure(.init("\(name) must not contain control characters (tabs, newlines, escapes)"))
        }
        switch kind {
        case .text:
            return .success(.string(text))
        case .secret:
            return text.isEmpty
                ? .failure(.init("\(name) must not be empty")) : .success(.string(Secret.redactedText))
        case .list:
            var seen: Set<String> = []
            let items = text.split(separator: ",").map { $0.trimmingWhitespace() }.filter {
                !$0.isEmpty && seen.insert($0.lowercased()).inserted
            }
            guard !items.isEmpty else {
                return .failure(.init("\(name) needs at least one name, comma-separated (A,B,...)"))
            }
            return .success(.list(items.map { .string($0) }))
        case .choice(let options):
            guard let match = options.first(where: { $0.lowercased() == text.lowercased() }) else {
                return .failure(.init("\(name) must be one of \(options.joined(separator: ", "))"))
            }
            return .success(.string(match))
        case .integer(let minimum, let fixed, let maximumKey):
            let maximum = [fixed, maximumKey.flatMap { context[$0]?.intValue }].compactMap { $0 }.min()
            let range = maximum.map { "\(minimum)...\($0)" } ?? "at least \(minimum)"
            guard let number = Int(text), number >= minimum, maximum.map({ number <= $0 }) ?? true else {
                return .failure(.init("\(name) must be a whole number \(range)"))
            }
            return .success(.int(number))
        case .date(let latestKey):
            let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard parts.count == 3, let year = parts[0], let month = parts[1], let day = parts[2],
                (1000...9999).contains(year), (1...12).contains(month), text.count == 10,
                text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") })
            else { return .failure(.init("\(name) must be a date written YYYY-MM-DD")) }
            let days = Self.days(inMonth: month, of: year)
            guard (1...days).contains(day) else {
                return .failure(
                    .init("\(name) \(text) does not exist: month \(month) of \(year) has \(days) days"))
            }
            if let latest = latestKey.flatMap({ context[$0]?.stringValue }), text > latest {
                return .failure(.init("\(name) \(text) is in the future; it must be \(latest) or earlier"))
            }
            return .success(.string(text))
        }
    }

    /// Days in a month of the Gregorian calendar.
    static func days(inMonth month: Int, of year: Int) -> Int { CivilDate.days(inMonth: month, of: year) }
}

struct FieldInputError: Error, Equatable {
    var message: String
    init(_ message: String) { self.message = message }
}
