/// A yes/no question over the product's context and the flows' states: used for step inclusion,
/// target availability, triggers and action preconditions.
public indirect enum Condition: Sendable, Equatable {
    case always
    case never
    /// The context value at `key` is `true`.
    case flag(String)
    /// The context value at `key` is an integer at least `minimum`.
    case atLeast(String, Int)
    /// The flow has ended as completed.
    case flowCompleted(FlowID)
    /// The flow has ended, completed or skipped.
    case flowFinished(FlowID)
    /// Carrier Wave's update prompt rule (seed 002): the running version *is* `version` (or a patch
    /// release of it: 2.5.1 counts as 2.5), and the last tour version (the newest version any of
    /// `tourFlows` last finished in) is older than `version`. A fresh install (no tour ever
    /// finished) never matches; a version not in the list (2.6) or a downgrade never matches.
    case upgradedInto(String, tourFlows: [FlowID])
    /// The last tour version is older than `version`: the user has not seen that release's news
    /// (a What's New tour includes the screens of a major the user skipped).
    case lastTourOlder(than: String, tourFlows: [FlowID])
    case not(Condition)
    case all([Condition])
    case any([Condition])

    func holds(context: TourContext, state: TourState) -> Bool {
        switch self {
        case .always: return true
        case .never: return false
        case .flag(let key): return context[key]?.boolValue == true
        case .atLeast(let key, let minimum): return (context[key]?.intValue ?? Int.min) >= minimum
        case .flowCompleted(let flow): return state.flows[flow]?.status == .completed
        case .flowFinished(let flow):
            let status = state.flows[flow]?.status
            return status == .completed || status == .skipped
        case .upgradedInto(let version, let tourFlows):
            guard let running = state.appVersion, let last = state.lastTourVersion(tourFlows) else {
                return false
            }
            return AppVersion.isOlder(last, than: version) && AppVersion.isRelease(running, of: version)
        case .lastTourOlder(let version, let tourFlows):
            guard let last = state.lastTourVersion(tourFlows) else { return false }
            return AppVersion.isOlder(last, than: version)
        case .not(let condition): return !condition.holds(context: context, state: state)
        case .all(let conditions): return conditions.allSatisfy { $0.holds(context: context, state: state) }
        case .any(let conditions): return conditions.contains { $0.holds(context: context, state: state) }
        }
    }
}

extension TourState {
    /// The newest version any of `flows` last finished in: Carrier Wave's `lastTourVersion`.
    func lastTourVersion(_ flows: [FlowID]) -> String? {
        flows.compactMap { self.flows[$0]?.finishedInVersion }.max(by: AppVersion.isOlder)
    }
}

/// Dotted version numbers compared component by component: "2.10" is newer than "2.5".
public enum AppVersion {
    public static func isOlder(_ lhs: String, than rhs: String) -> Bool {
        let left = components(lhs)
        let right = components(rhs)
        for index in 0..<max(left.count, right.count) {
            let l = index < left.count ? left[index] : 0
            let r = index < right.count ? right[index] : 0
            if l != r { return l < r }
        }
        return false
    }

    /// Whether `running` is `version` or a patch release of it: "2.5", "2.5.0" and "2.5.1" are
    /// releases of 2.5; "2.50", "2.6" and "2" are not.
    public static func isRelease(_ running: String, of version: String) -> Bool {
        let release = components(running)
        let listed = components(version)
        guard release.count >= listed.count else {
            return release + Array(repeating: 0, count: listed.count - release.count) == listed
        }
        return Array(release.prefix(listed.count)) == listed
    }

    /// The longest version the account server stores (`SyncAPI.maxAppVersionLength`).
    public static let maximumLength = 64
    public static let rule = "a dotted version number such as 2.5, at most 64 characters"

    /// True when `text` is one or more dot-separated whole numbers (ASCII digits), at most
    /// ``maximumLength`` characters: what the account server accepts, checked where it is written.
    public static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.utf8.count <= maximumLength && !parts.isEmpty
            && parts.allSatisfy { !$0.isEmpty && $0.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) }
    }

    private static func components(_ text: String) -> [Int] {
        text.split(separator: ".").map { Int($0) ?? 0 }
    }
}
