/// Why an event was refused. Refused input changes nothing; this says what is allowed now.
public struct TourRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    public var flow: FlowID?
    public var step: StepID?
    /// The action or event that was refused.
    public var attempted: String
    public var reason: String
    /// The actions the showing card accepts now.
    public var allowed: [String]

    public init(flow: FlowID?, step: StepID?, attempted: String, reason: String, allowed: [String]) {
        self.flow = flow
        self.step = step
        self.attempted = attempted
        self.reason = reason
        self.allowed = allowed
    }

    public var description: String {
        let place = flow.map { flow in step.map { "\(flow) step \($0)" } ?? "\(flow)" } ?? "no tour showing"
        let allowedText = allowed.isEmpty ? "none" : allowed.joined(separator: ", ")
        let sentence = reason.hasSuffix(".") || reason.hasSuffix("!") ? reason : reason + "."
        return "refused '\(attempted.quotable)' (\(place)): \(sentence) Allowed now: \(allowedText)"
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
