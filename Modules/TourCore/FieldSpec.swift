import Foundation

/// A value the user enters during a flow: a form input, a choice, a week number, a password.
///
/// Fields live for one run of the flow; an interruption that restarts the flow clears them.
public struct FieldSpec: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case text
        /// Never stored: the engine keeps only the fact that it was entered.
        case secret
        /// Comma-separated on input, a list in state ("4 apps selected").
        case list
        case choice([String])
        /// A whole number in `minimum...`, at most the context value at `maximumKey` when given.
        case integer(minimum: Int, maximumKey: String?)
        /// A calendar date written YYYY-MM-DD.
        case date
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
            let items = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                !$0.isEmpty
            }
            return .success(.list(items.map { .string($0) }))
        case .choice(let options):
            guard let match = options.first(where: { $0.lowercased() == text.lowercased() }) else {
                return .failure(.init("\(name) must be one of \(options.joined(separator: ", "))"))
            }
            return .success(.string(match))
        case .integer(let minimum, let maximumKey):
            let maximum = maximumKey.flatMap { context[$0]?.intValue }
            let range = maximum.map { "\(minimum)...\($0)" } ?? "at least \(minimum)"
            guard let number = Int(text), number >= minimum, maximum.map({ number <= $0 }) ?? true else {
                return .failure(.init("\(name) must be a whole number \(range)"))
            }
            return .success(.int(number))
        case .date:
            let parts = text.split(separator: "-").map { Int($0) }
            guard parts.count == 3, let year = parts[0], let month = parts[1], let day = parts[2],
                (1000...9999).contains(year), (1...12).contains(month), (1...31).contains(day),
                text.count == 10
            else { return .failure(.init("\(name) must be a date written YYYY-MM-DD")) }
            return .success(.string(text))
        }
    }
}

struct FieldInputError: Error, Equatable {
    var message: String
    init(_ message: String) { self.message = message }
}
