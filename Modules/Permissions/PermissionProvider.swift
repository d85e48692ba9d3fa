import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A system permission's status, as FamilyControls and HealthKit report it.
public enum PermissionStatus: String, Codable, Sendable, CaseIterable {
    case notDetermined, granted, denied, restricted

    /// The engine's view of the same answer.
    public var gateStatus: GateStatus {
        switch self {
        case .notDetermined: .notDetermined
        case .granted: .granted
        case .denied: .denied
        case .restricted: .restricted
        }
    }
}

/// Reads and requests named permissions. On iOS: FamilyControls' `AuthorizationCenter` for
/// ``PermissionName/screenTime`` and `HKHealthStore` for ``PermissionName/health``.
public protocol PermissionProvider: Sendable {
    /// The status now, without asking the user.
    nonisolated(nonsending) func status(of permission: PermissionName) async -> PermissionStatus
    /// Asks the user (or returns the settled answer) and gives the resulting status.
    nonisolated(nonsending) func request(_ permission: PermissionName) async -> PermissionStatus
}

/// A permission provider whose answers are configured per run and remembered.
///
/// `statuses` is what the system reports now ("already granted" is `.granted` there); `answers` is
/// what the user will answer when asked. Once a request is answered the status is remembered, as
/// iOS remembers it; ``statuses`` can be saved and handed to the next run.
public final class StubPermissionProvider: PermissionProvider, Sendable {
    private struct State {
        var current: [PermissionName: PermissionStatus]
        var asked: [PermissionName] = []
    }

    private let state: Locked<State>
    private let answers: [PermissionName: PermissionStatus]

    /// - Parameters:
    ///   - statuses: what each permission's status is before any request (default `.notDetermined`).
    ///   - answers: what the user answers when asked (default `.granted`).
    public init(
        statuses: [PermissionName: PermissionStatus] = [:], answers: [PermissionName: PermissionStatus] = [:]
    ) {
        self.state = Locked(State(current: statuses))
        self.answers = answers
    }

    public nonisolated(nonsending) func status(of permission: PermissionName) async -> PermissionStatus {
        state.withLock { $0.current[permission] ?? .notDetermined }
    }

    public nonisolated(nonsending) func request(_ permission: PermissionName) async -> PermissionStatus {
        state.withLock { state in
            state.asked.append(permission)
            // As on iOS, a settled permission is not asked again: its status is the answer.
            if let settled = state.current[permission], settled != .notDetermined { return settled }
            let answer = answers[permission] ?? .granted
            state.current[permission] = answer
            return answer
        }
    }

    /// Every status known now, to be remembered across runs.
    public var statuses: [PermissionName: PermissionStatus] { state.withLock { $0.current } }

    /// The permissions the user was asked for, in order.
    public var requests: [PermissionName] { state.withLock { $0.asked } }
}
