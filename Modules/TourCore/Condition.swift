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
    /// The app was upgraded into `version`: the newest version recorded when any of `tourFlows`
    /// last finished is older than `version`, and the running version is at least `version`.
    /// A fresh install (no flow ever finished) never matches.
    case upgradedInto(String, tourFlows: [FlowID])
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
            guard let running = state.appVersion,
                let last = tourFlows.compactMap({ state.flows[$0]?.finishedInVersion }).max(
                    by: AppVersion.isOlder)
            else { return false }
            return AppVersion.isOlder(last, than: version) && !AppVersion.isOlder(running, than: version)
        case .not(let condition): return !condition.holds(context: context, state: state)
        case .all(let conditions): return conditions.allSatisfy { $0.holds(context: context, state: state) }
        case .any(let conditions): return conditions.contains { $0.holds(context: context, state: state) }
        }
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

    /// True when `text` is one or more dot-separated whole numbers.
    public static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return !parts.isEmpty && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    private static func components(_ text: String) -> [Int] {
        text.split(separator: ".").map { Int($0) ?? 0 }
    }
}
