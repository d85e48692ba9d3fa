import TourCodec

/// A product's domain state (`[String: TourValue]` its handler writes: LockedIn's bank, Finite's
/// phases) declared with the same care as flow state: every key with the kind of value it holds,
/// and a format number for the whole.
///
/// The runtime holds every write to it (an effect's `apply`) to the declaration, inside the
/// event's transaction: writing an undeclared key or a value of another kind refuses the event and
/// writes nothing. Keys an earlier release wrote and this one no longer declares are left alone
/// until written (Growth's `profileTourStatus` of 0.5). The format is stored with the state; state
/// a newer release wrote, in a higher format, is refused by name rather than read as if it meant
/// what this release means; state of an older format goes through the handler's
/// `upgradeDomainState(_:from:)` first. Changing what a key means is a new format number.
public struct DomainStateVocabulary: Sendable, Equatable {
    public struct Key: Sendable, Equatable {
        public var name: String
        public var kind: ValueKind
        public var summary: String

        public init(_ name: String, _ kind: ValueKind, _ summary: String) {
            self.name = name
            self.kind = kind
            self.summary = summary
        }
    }

    /// The format this release writes and the newest it reads.
    public var format: Int
    public var keys: [Key]

    public init(format: Int, _ keys: [Key]) {
        self.format = format
        self.keys = keys
    }

    /// No domain state at all (a product whose handler writes none).
    public static let none = DomainStateVocabulary(format: 1, [])

    public func key(_ name: String) -> Key? { keys.first { $0.name == name } }

    /// What in `domain` the declaration does not allow: each undeclared key, each value of
    /// another kind (null fits every kind); empty when all is declared.
    public func problems(in domain: [String: TourValue]) -> [String] {
        problems(in: domain, keys: domain.keys)
    }

    /// The problems of the keys a write changed from `before` to `after` (a key removed is fine).
    public func problems(writing after: [String: TourValue], over before: [String: TourValue]) -> [String] {
        problems(in: after, keys: after.keys.filter { after[$0] != before[$0] })
    }

    private func problems(in domain: [String: TourValue], keys names: some Sequence<String>) -> [String] {
        var problems: [String] = []
        for name in names.sorted() {
            guard let key = key(name) else {
                let declared = keys.map(\.name).sorted()
                problems.append(
                    """
                    domain state key '\(name.quotable)' is not declared (declared: \
                    \(declared.isEmpty ? "none" : declared.joined(separator: ", ")))
                    """
                )
                continue
            }
            if let value = domain[name], let given = ValueKind(of: value), !key.kind.accepts(given) {
                problems.append(
                    """
                    domain state key '\(name.quotable)' holds \(given.phrase), declared as \(key.kind.phrase)
                    """
                )
            }
        }
        return problems
    }

    /// The refusal for state stored in `stored`, a format newer than this release reads.
    public func newerFormatProblem(stored: Int, app: String) -> String? {
        guard stored > format else { return nil }
        return
            """
            the domain state of \(app) was written in format \(stored) by a newer release; \
            this release reads format \(format) 
            """
                + "and older. It was left unchanged: upgrade, or use another database."
    }
}
