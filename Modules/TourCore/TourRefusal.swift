/// Why an event was refused. Refused input changes nothing; this says what is allowed instead.
public struct TourRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of refusal this is: a stable, machine-readable name (`--json` prints it as the
    /// error's `code`).
    public enum Code: String, Codable, Sendable, CaseIterable {
        /// An action some step of the product has, but not the card showing now (or its
        /// precondition, such as a required permission, does not hold).
        case notAllowedNow = "not_allowed_now"
        /// An action no step of the product has, and no free action either.
        case unknownAction = "unknown_action"
        /// An action while no flow shows.
        case nothingShowing = "nothing_showing"
        /// A parameter that is missing, unknown or not a valid value.
        case invalidParameter = "invalid_parameter"
        case unknownFeature = "unknown_feature"
        case unknownSignal = "unknown_signal"
        case unknownFlow = "unknown_flow"
        /// A replay of a flow that cannot be replayed, or is showing already.
        case notReplayable = "not_replayable"
        case invalidVersion = "invalid_version"
        /// A permission or service answer no step is waiting for.
        case notWaiting = "not_waiting"
    }

    public var code: Code
    public var flow: FlowID?
    public var step: StepID?
    /// The action or event that was refused.
    public var attempted: String
    public var reason: String
    /// What the attempted command accepts now: the card's actions for an action, the product's
    /// features for a visit, its signals for a signal, its (replayable) flows for replay and reset.
    public var allowed: [String]
    /// How ``allowed`` is introduced ("Allowed now", "Features"), and the sentence said instead
    /// when it is empty ("Finite has no features to visit").
    public var listing: Listing
    /// The nearest accepted name when the attempt looks like a slip ("did you mean 'next'?").
    public var suggestion: String?
    /// The product's word for a flow ("walkthrough", "tutorial"), for "no walkthrough showing".
    public var noun: String

    public struct Listing: Equatable, Sendable {
        public var label: String
        public var whenEmpty: String

        public init(label: String, whenEmpty: String) {
            self.label = label
            self.whenEmpty = whenEmpty
        }

        public static let actionsNow = Listing(label: "Allowed now", whenEmpty: "No action is allowed now")
    }

    public init(
        code: Code = .notAllowedNow, flow: FlowID?, step: StepID?, attempted: String, reason: String,
        allowed: [String], listing: Listing = .actionsNow, suggestion: String? = nil, noun: String = "tour"
    ) {
        self.noun = noun
        self.code = code
        self.flow = flow
        self.step = step
        self.attempted = attempted
        self.reason = reason
        self.allowed = allowed
        self.listing = listing
        self.suggestion = suggestion
    }

    /// "walkthrough step welcome" or "no walkthrough showing".
    public var place: String {
        flow.map { flow in step.map { "\(flow) step \($0)" } ?? "\(flow)" } ?? "no \(noun) showing"
    }

    /// The reason as a sentence, with the suggestion and what is allowed.
    public var explanation: String {
        var sentence =
            reason.hasSuffix(".") || reason.hasSuffix("!") || reason.hasSuffix("?") ? reason : reason + "."
        if let suggestion { sentence += " Did you mean '\(suggestion)'?" }
        let list =
            allowed.isEmpty
            ? listing.whenEmpty + "." : "\(listing.label): \(allowed.joined(separator: ", "))."
        return "\(sentence) \(list)"
    }

    public var description: String {
        "refused '\(attempted.quotable)' (\(place)): \(explanation)"
    }
}

/// Near misses: the accepted name a mistyped or mis-remembered one most likely meant.
public enum NameSuggestion {
    /// Words people reach for that a product calls otherwise (Growth's button says "Previous";
    /// the action is `back`).
    static let synonyms: [String: [String]] = [
        "previous": ["back"], "prev": ["back"], "return": ["back"],
        "continue": ["next"], "forward": ["next"], "ok": ["next", "done"],
        "cancel": ["skip", "dismiss"], "close": ["dismiss", "skip"], "later": ["skip"],
        "finish": ["done", "letsGo"],
    ]

    /// The candidate `name` most likely meant: a different case, a synonym, the one candidate it
    /// begins, or one within a small edit distance (a third of the name's length, at most 3). Nil
    /// when nothing is close.
    public static func nearest(to name: String, in candidates: [String]) -> String? {
        let typed = name.lowercased()
        guard !typed.isEmpty, !candidates.contains(name) else { return nil }
        if let exact = candidates.first(where: { $0.lowercased() == typed }) { return exact }
        for synonym in synonyms[typed] ?? [] {
            if let match = candidates.first(where: { $0.lowercased() == synonym.lowercased() }) {
                return match
            }
        }
        // A clipped name: "mer" for mermaid, "dash" for dashboard.
        let prefixed = candidates.filter { $0.lowercased().hasPrefix(typed) }
        if typed.count >= 3, prefixed.count == 1 { return prefixed[0] }
        let typedCharacters = Array(typed)
        let limit = min(3, max(1, typedCharacters.count / 3))
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let other = Array(candidate.lowercased())
            // Lengths further apart than the limit are further apart than the limit in edits too:
            // an oversized name costs a length check per candidate, not a table of its length.
            guard abs(other.count - typedCharacters.count) <= limit else { continue }
            let distance = editDistance(typedCharacters, other)
            if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Levenshtein distance, with a swap of two neighbours counted as one edit.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        editDistance(Array(a), Array(b))
    }

    /// The same over characters already split, three rows at a time (the swap looks two back).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var beforeLast = [Int](repeating: 0, count: b.count + 1)
        var last = Array(0...b.count)
        var row = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            row[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(last[j] + 1, row[j - 1] + 1, last[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    best = min(best, beforeLast[j - 2] + 1)
                }
                row[j] = best
            }
            swap(&beforeLast, &last)
            swap(&last, &row)
        }
        return last[b.count]
    }
}

extension String {
    /// Input as a message quotes it back: control characters shown as "�" and at most 60
    /// characters, so a pasted megabyte or an escape sequence never floods or rewrites a terminal.
    public var quotable: String {
        let visible = String(
            String.UnicodeScalarView(
                unicodeScalars.map {
                    $0.properties.generalCategory == .control ? "\u{FFFD}" : $0
                }))
        return visible.count <= 60 ? visible : visible.prefix(57) + "…"
    }
}
