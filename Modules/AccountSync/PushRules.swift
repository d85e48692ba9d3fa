import TourCodec
import TourCore

/// What the account server accepts in a push, in one place both sides use: the server refuses a
/// push by these rules, and a device checks what it writes by the same ones at the source, so
/// nothing it writes can be refused later for a rule it knew. A row refused for a rule it did not
/// know (a newer server's) is set aside on the device, not retried forever (Docs/Reliability.md).
extension SyncAPI {
    /// The longest app version and event name a push may carry.
    public static let maxAppVersionLength = AppVersion.maximumLength
    public static let maxEventLength = 200

    /// The facts a server checks the form of (``TourFact/kinds``); others, from newer releases, are
    /// stored as sent.
    public static let knownFacts: Set<String> = TourFact.kinds

    /// Why a push would be refused: the row it concerns (nil when the whole push is), and the
    /// message the server answers with.
    public struct PushProblem: Equatable, Sendable, Error {
        public var seq: Int64?
        public var message: String
    }

    /// The first thing in `batch` the server refuses; nil when it accepts it all.
    public static func problem(with batch: PushBatch) -> PushProblem? {
        guard isValidName(batch.device) else {
            return PushProblem(seq: nil, message: "the device id must be \(nameRule)")
        }
        guard (1...maxItemsPerPush).contains(batch.items.count) else {
            return PushProblem(
                seq: nil, message: "a push carries 1 to \(maxItemsPerPush) items (got \(batch.items.count))")
        }
        var seen: Set<Int64> = []
        for item in batch.items {
            guard item.seq > 0, seen.insert(item.seq).inserted else {
                return PushProblem(
                    seq: nil, message: "item seq \(item.seq): seq must be positive and appear once in a push")
            }
            if let problem = problem(with: item, device: batch.device) {
                return PushProblem(seq: item.seq, message: "item seq \(item.seq): \(problem)")
            }
        }
        return nil
    }

    /// What the server refuses in one row pushed by `device`; nil when it accepts it.
    public static func problem(with item: PushItem, device: String) -> String? {
        guard item.time.isFinite, (0...latestTime).contains(item.time) else {
            return "time must be seconds since 1970, before the year 10000"
        }
        if let appVersion = item.appVersion, appVersion.isEmpty || appVersion.count > maxAppVersionLength {
            return "appVersion, when given, is 1 to \(maxAppVersionLength) characters"
        }
        guard !item.event.isEmpty, item.event.count <= maxEventLength else {
            return "event must be 1 to \(maxEventLength) characters"
        }
        // PostgreSQL's text holds no NUL character.
        guard !holdsNUL(.string(item.event)), !holdsNUL(.string(item.appVersion ?? "")),
            !item.facts.contains(where: holdsNUL)
        else { return "text must not contain the NUL character (U+0000)" }
        guard item.catalogVersion >= 1 else { return "catalogVersion must be 1 or more" }
        for fact in item.facts {
            guard let object = fact.objectValue, let kind = object["fact"]?.stringValue,
                let flow = object["flow"]?.stringValue, isValidName(flow)
            else { return "each fact is an object with a 'fact' name and a 'flow' id (\(nameRule))" }
            if knownFacts.contains(kind), (try? TourFact(tourValue: fact)) == nil {
                return "the \(kind) fact of \(flow) is not well formed"
            }
            if kind == "flowStarted", let context = object["context"],
                let problem = StartContext.problem(context)
            {
                return "the flowStarted fact of \(flow): \(problem)"
            }
        }
        for (flow, record) in item.records {
            if let problem = problem(withRecord: record, of: flow, device: device) { return problem }
        }
        return nil
    }

    /// What the server refuses in one account record a device pushes.
    public static func problem(withRecord record: AccountFlowRecord, of flow: String, device: String)
        -> String?
    {
        guard isValidName(flow) else { return "flow ids must be \(nameRule)" }
        if let problem = record.problem { return "the record of \(flow): \(problem)" }
        guard record.device == device else {
            return "the record of \(flow) names another device; a device pushes its own"
        }
        return nil
    }

    static func holdsNUL(_ value: TourValue) -> Bool {
        switch value {
        case .string(let text): text.utf8.contains(0)
        case .list(let values): values.contains(where: holdsNUL)
        case .object(let members): members.contains { holdsNUL(.string($0.key)) || holdsNUL($0.value) }
        default: false
        }
    }
}
