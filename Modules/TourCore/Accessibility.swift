import TourCodec

/// The person holding the phone, as the device reports it (Docs/Accessibility.md): device facts
/// every product declares (``ContextKey/accessibility``), read like any other context key, so a
/// condition may read them too. The engine adapts to them:
///
/// - **VoiceOver**: a step that would move on by itself waits for an action, or its time is
///   scaled (``AccessibilityRules``), so a card read aloud is not gone before it is heard.
/// - **Haptics off**: no haptic effect is emitted. Not overridable: the person switched them off,
///   and a haptic then is noise.
/// - **Reduced motion**: celebrations are still emitted, marked so the app shows them without
///   animation.
/// - **Text size**: carried for the app's layout and for the report; the engine does not change
///   a step for it.
public struct AccessibilitySettings: Equatable, Sendable {
    public var voiceOver: Bool
    public var reducedMotion: Bool
    public var hapticsEnabled: Bool
    /// The text size category, as iOS names it (`large` is the default).
    public var textSize: String

    public init(
        voiceOver: Bool = false, reducedMotion: Bool = false, hapticsEnabled: Bool = true,
        textSize: String = "large"
    ) {
        self.voiceOver = voiceOver
        self.reducedMotion = reducedMotion
        self.hapticsEnabled = hapticsEnabled
        self.textSize = textSize
    }

    /// The settings `context` reports; a key it lacks has its default.
    public init(_ context: TourContext) {
        func flag(_ key: String, _ fallback: Bool) -> Bool {
            if case .bool(let value) = context[key] { return value }
            return fallback
        }
        self.init(
            voiceOver: flag(Self.voiceOverKey, false), reducedMotion: flag(Self.reducedMotionKey, false),
            hapticsEnabled: flag(Self.hapticsEnabledKey, true),
            textSize: context[Self.textSizeKey]?.stringValue ?? "large")
    }

    public static let voiceOverKey = "voiceOver"
    public static let reducedMotionKey = "reducedMotion"
    public static let hapticsEnabledKey = "hapticsEnabled"
    public static let textSizeKey = "textSize"

    /// The text size categories iOS has, smallest first.
    public static let textSizes = [
        "extraSmall", "small", "medium", "large", "extraLarge", "extraExtraLarge", "extraExtraExtraLarge",
        "accessibilityMedium", "accessibilityLarge", "accessibilityExtraLarge",
        "accessibilityExtraExtraLarge",
        "accessibilityExtraExtraExtraLarge",
    ]

    /// The settings in a few words, as a report groups by them: "standard" (nothing set), or what
    /// differs from it ("VoiceOver, haptics off, text accessibilityLarge").
    public var summary: String {
        var parts: [String] = []
        if voiceOver { parts.append("VoiceOver") }
        if reducedMotion { parts.append("reduced motion") }
        if !hapticsEnabled { parts.append("haptics off") }
        if textSize != "large" { parts.append("text \(textSize)") }
        return parts.isEmpty ? "standard" : parts.joined(separator: ", ")
    }

    /// The settings as context values, for a caller that states them all.
    public var context: TourContext {
        [
            Self.voiceOverKey: .bool(voiceOver), Self.reducedMotionKey: .bool(reducedMotion),
            Self.hapticsEnabledKey: .bool(hapticsEnabled), Self.textSizeKey: .string(textSize),
        ]
    }
}

extension ContextKey {
    /// The accessibility settings every product reads: added to each product's declarations by
    /// the runtime, so `--context voiceOver=true` works for all of them without a line in `Apps/`.
    public static let accessibility: [ContextKey] = [
        .device(
            AccessibilitySettings.voiceOverKey, .flag, default: .bool(false),
            "VoiceOver is on: steps that move on by themselves wait for an action, or take longer"),
        .device(
            AccessibilitySettings.reducedMotionKey, .flag, default: .bool(false),
            "Reduce Motion is on: celebrations are marked to be shown without animation"),
        .device(
            AccessibilitySettings.hapticsEnabledKey, .flag, default: .bool(true),
            "the system plays haptics: when false, no haptic effect is emitted"),
        .device(
            AccessibilitySettings.textSizeKey, .text, default: .string("large"),
            allowed: AccessibilitySettings.textSizes,
            "the text size category"),
    ]
}

/// How a flow adapts to its user's accessibility settings where a choice is the catalog's to
/// make. The defaults suit a flow that says nothing; a flow overrides them in its definition (and
/// document, member `accessibility`).
public struct AccessibilityRules: Equatable, Sendable {
    /// What a step that moves on by itself (``StepDefinition/autoAdvanceAfter``) does for a
    /// VoiceOver user.
    public enum TimedSteps: String, Sendable, Equatable, CaseIterable {
        /// It waits for one of its actions; a step without an action keeps its timer, scaled.
        case waitForAction
        /// Its timer is scaled by ``voiceOverTimeScale``.
        case scaleDuration
        /// As for anyone else (a timer that is part of the step's meaning, like a countdown).
        case unchanged
    }

    public var voiceOverTimedSteps: TimedSteps
    /// How many times longer a timed step lasts for a VoiceOver user when it does not wait for an
    /// action. Ten by default: WCAG 2.2.1 asks that a time limit can be extended at least tenfold.
    public var voiceOverTimeScale: Double

    public init(voiceOverTimedSteps: TimedSteps = .waitForAction, voiceOverTimeScale: Double = 10) {
        self.voiceOverTimedSteps = voiceOverTimedSteps
        self.voiceOverTimeScale = voiceOverTimeScale
    }

    public static let standard = AccessibilityRules()

    /// The scales a flow may set: a step never shortened, and never made to wait for ever.
    public static let timeScales: ClosedRange<Double> = 1...100

    /// The time `step` moves on by itself after it is entered, for someone with `settings`; nil
    /// when it waits for an action.
    public func autoAdvance(_ step: StepDefinition, for settings: AccessibilitySettings) -> Double? {
        guard let after = step.autoAdvanceAfter else { return nil }
        guard settings.voiceOver else { return after }
        switch voiceOverTimedSteps {
        case .unchanged: return after
        case .scaleDuration: return after * voiceOverTimeScale
        case .waitForAction: return step.actions.isEmpty ? after * voiceOverTimeScale : nil
        }
    }
}
