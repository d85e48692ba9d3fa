import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Plays haptic feedback. On iOS the implementation wraps `UIImpactFeedbackGenerator` and friends;
/// here there is a recorder for tests and a terminal printer for the CLIs.
public protocol HapticPlayer: Sendable {
    func play(_ feedback: HapticFeedback)
}

/// Keeps every haptic played, in order, for tests to assert on.
public final class RecordingHaptics: HapticPlayer, Sendable {
    private let storage = Locked<[HapticFeedback]>([])

    public init() {}

    public func play(_ feedback: HapticFeedback) {
        storage.withLock { $0.append(feedback) }
    }

    public var played: [HapticFeedback] { storage.withLock { $0 } }

    public func clear() { storage.withLock { $0.removeAll() } }
}

/// Writes each haptic as a line (`haptic: impact(.light)`) through the given writer.
public struct TerminalHaptics: HapticPlayer {
    private let write: @Sendable (String) -> Void

    public init(write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    public func play(_ feedback: HapticFeedback) {
        write("haptic: \(feedback)")
    }
}

/// Plays nothing (a device without a haptic engine, or `--json` output).
public struct SilentHaptics: HapticPlayer {
    public init() {}
    public func play(_ feedback: HapticFeedback) {}
}
