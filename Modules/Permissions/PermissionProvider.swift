import Foundation
@_exported import TourCore

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
    func status(of permission: PermissionName) async -> PermissionStatus
    /// Asks the user (or returns the settled answer) and gives the resulting status.
    func request(_ permission: PermissionName) async -> PermissionStatus
}

/// A permission provider whose answers are configured per run and remembered.
///
/// `statuses` is what the system reports now ("already granted" is `.granted` there); `answers` is
/// what the user will answer when asked. Once a request is answered the status is remembered, as
/// iOS remembers it; ``statuses`` can be saved and handed to the next run.
public final class StubPermissionProvider: PermissionProvider, @unchecked Sendable {
    private let lock = NSLock()
    private var current: [PermissionName: PermissionStatus]
    private let answers: [PermissionName: PermissionStatus]
    private var asked: [PermissionName] = []

    /// - Parameters:
    ///   - statuses: what each permission's status is before any request (default `.notDetermined`).
    ///   - answers: what the user answers when asked (default `.granted`).
    public init(
        statuses: [PermissionName: PermissionStatus] = [:], answers: [PermissionName: PermissionStatus] = [:]
    ) {
        self.current = statuses
        self.answers = answers
    }

    public func status(of permission: PermissionName) async -> PermissionStatus {
        lock.withLock { current[permission] ?? .notDetermined }
    }

    public func request(_ permission: PermissionName) async -> PermissionStatus {
        lock.withLock {
            asked.append(permission)
            // As on iOS, a settled permission is not asked again: its status is the answer.
            if let settled = current[permission], settled != .notDetermined { return settled }
            let answer = answers[permission] ?? .granted
            current[permission] = answer
            return answer
        }
    }

    /// Every status known now, to be remembered across runs.
    public var statuses: [PermissionName: PermissionStatus] { lock.withLock { current } }

    /// The permissions the user was asked for, in order.
    public var requests: [PermissionName] { lock.withLock { asked } }
}
