import Foundation
import TourCodec
@_exported import TourCore

/// A catalog with one flow per policy under test. The products' real catalogs have their own tests.
public enum Fixtures {
    public static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    public static let walk = FlowDefinition(
        "walk", name: "Walkthrough",
        steps: [
            StepDefinition(
                "intro", StepContent(title: "Intro", body: "Hello", hint: "Tap anywhere to continue"),
                actions: [.next()], canSkip: true),
            StepDefinition(
                "tapTarget", StepContent(title: "Tap", body: "Tap it", anchor: Anchor("currentWeek")),
                actions: [StepAction("tapTarget", outcome: .advance, celebrates: true)], canSkip: true),
            StepDefinition(
                "modal", StepContent(title: "Modal", body: "Add one"),
                actions: [
                    StepAction(
                        "save", fills: ["name"], requiredParameters: ["name"], outcome: .advance,
                        effects: [.product("stored", payload: ["name": .parameter("name")])],
                        celebrates: true, haptic: .impactMedium),
                    StepAction("dismiss", outcome: .advance, celebrates: true),
                ],
                canSkip: true, includedWhen: .not(.flag("hasItems"))),
            StepDefinition(
                "staged",
                StepContent(
                    title: "Staged", body: "Press then save",
                    anchor: Anchor("filled", fallback: "first", availableWhen: .atLeast("filledCount", 1))),
                actions: [
                    StepAction(
                        "press", fills: ["week"], requiredParameters: ["week"], outcome: .stage,
                        haptic: .impactMedium),
                    StepAction(
                        "saveMark", outcome: .advance,
                        preconditions: [.performed("press", message: "press a week first")],
                        effects: [.product("marked", payload: ["week": .field("week")])], celebrates: true),
                ],
                canSkip: true),
            StepDefinition("finale", StepContent(title: "Done", body: "Bye"), autoAdvanceAfter: 2.5),
        ],
        fields: [FieldSpec("name", .text), FieldSpec("week", .integer(minimum: 1, maximumKey: "weeks"))],
        triggers: [Trigger(.signal("revealed"), delay: 1.5)], skip: .recordSkipped, interruption: .resume,
        countsTerminalStep: false,
        haptics: HapticMap(
            stepEntered: .impactLight, actionCompleted: .notificationSuccess, skipped: .impactMedium,
            completed: .notificationSuccess))

    public static let form = FlowDefinition(
        "form", name: "Onboarding",
        steps: [
            StepDefinition(
                "welcome", StepContent(title: "Welcome", body: "Hi"), actions: [.next(label: "GET STARTED")]),
            StepDefinition(
                "pick", StepContent(title: "Pick", body: "{#apps|app|apps} selected"),
                actions: [
                    StepAction("choose", fills: ["apps"], requiredParameters: ["apps"], outcome: .stay),
                    .next(preconditions: [.fieldsValid]),
                ],
                validates: ["apps"], canGoBack: true),
            StepDefinition(
                "level", StepContent(title: "Level", body: "{level}"),
                actions: [
                    StepAction("select", fills: ["level"], requiredParameters: ["level"], outcome: .stay),
                    .next(),
                ],
                canGoBack: true),
            StepDefinition(
                "perms", StepContent(title: "Perms", body: "Grant"),
                actions: [
                    StepAction("grantScreenTime", outcome: .request(gate: "screenTime")),
                    StepAction("grantHealth", outcome: .request(gate: "health")),
                    .next(preconditions: [.requiredGatesGranted]),
                ],
                gates: [
                    .permission(
                        "screenTime", .screenTime, required: true, deniedMessage: "Screen Time is required.",
                        grantedMessage: "Screen Time granted"),
                    .permission(
                        "health", .health, required: false, deniedMessage: "Workouts will not be tracked.",
                        grantedMessage: "Health granted"),
                ],
                canGoBack: true),
            StepDefinition(
                "done", StepContent(title: "Done", body: "Bank"),
                actions: [StepAction("go", outcome: .advance)]),
        ],
        fields: [
            FieldSpec("apps", .list, rule: .minimumCount(1), ruleMessage: "Select at least one app."),
            FieldSpec("level", .choice(["easy", "medium", "hard"]), initial: "medium"),
        ],
        triggers: [Trigger(.launch)], skip: .recordSkipped, interruption: .restart,
        onComplete: [.product("activate", payload: ["level": .field("level"), "bank": .literal(60)])])

    public static let intro = FlowDefinition(
        "intro", name: "Intro",
        steps: [
            StepDefinition(
                "hello", StepContent(title: "Hello", body: "Hi"), actions: [.next()], canSkip: true),
            StepDefinition(
                "connect", StepContent(title: "Connect", body: "Credentials"),
                actions: [
                    StepAction(
                        "connect", fills: ["username", "password"],
                        requiredParameters: ["username", "password"],
                        outcome: .request(gate: "connection")),
                    StepAction(
                        "later", outcome: .advance,
                        preconditions: [
                            .gate("connection", in: [.unavailable], message: "only without network")
                        ]),
                ],
                gates: [
                    Gate(
                        "connection", .request("connect"), required: false,
                        deniedMessage: "Wrong credentials",
                        grantedMessage: "Connected", unavailableMessage: "No network",
                        advancesWhenGranted: true)
                ],
                canSkip: true),
            StepDefinition(
                "bye", StepContent(title: "Bye", body: "Done"), actions: [.next(label: "Done")], canSkip: true
            ),
        ],
        fields: [FieldSpec("username", .text), FieldSpec("password", .secret)],
        triggers: [Trigger(.launch)], skip: .countsAsCompleted, replay: .resetAndPresent)

    public static let tip = FlowDefinition(
        "tip", name: "Tip",
        steps: [
            StepDefinition(
                "a", StepContent(title: "A", body: "a"),
                actions: [.next(), StepAction("close", outcome: .dismissFlow)]),
            StepDefinition(
                "b", StepContent(title: "B", body: "b"),
                actions: [.next(), StepAction("close", outcome: .dismissFlow)]),
        ],
        triggers: [Trigger(.visit("feature"))], skip: .countsAsCompleted)

    public static let prompt = FlowDefinition(
        "prompt2", name: "What's New",
        steps: [StepDefinition("new", StepContent(title: "New", body: "new"), actions: [.next()])],
        triggers: [Trigger(.launch, when: .upgradedInto("2.0", tourFlows: ["intro", "prompt2"]))],
        skip: .countsAsCompleted)

    public static let tour = FlowDefinition(
        "tour", name: "Tour",
        steps: (1...3).map { index in
            StepDefinition(
                StepID("s\(index)"),
                StepContent(
                    title: "S\(index)", body: "b",
                    anchor: Anchor("view\(index)", highlightPadding: 8, popover: .below)),
                actions: [.next(label: index == 3 ? "Done" : "Next")], canSkip: true, canGoBack: true,
                backLabel: "Previous", skipLabel: "Skip Tour")
        },
        triggers: [Trigger(.visit("dashboard"), when: .flowCompleted("form"))], scope: .user)

    public static let tutorial = FlowDefinition(
        "tutorial", name: "Tutorial",
        steps: [
            StepDefinition(
                "swipe", StepContent(title: "Swipe", body: "b"), actions: [.next()], canSkip: true,
                passThrough: ["swipeLeft"]),
            StepDefinition(
                "history", StepContent(title: "History", body: "b"), actions: [.next()], canSkip: true),
            StepDefinition(
                "set", StepContent(title: "Set", body: "b"),
                actions: [.next(label: "Get Started"), StepAction("backdrop", outcome: .advance)]),
        ],
        triggers: [Trigger(.launch, delay: 0.5)], skip: .recordsNothing, interruption: .discard,
        replay: .presentWithoutRecording,
        analytics: AnalyticsNames(
            started: "tutorial_started", stepCompleted: "tutorial_step_completed",
            skipped: "tutorial_skipped", completed: "tutorial_completed", replayed: "tutorial_replayed"))

    public static func engine(_ flows: FlowDefinition..., free: [StepAction] = []) -> TourEngine {
        TourEngine(catalog: TourCatalog(app: "test", flows: flows, freeActions: free))
    }

    /// Every fixture flow in one catalog, as a product would declare them.
    public static func catalog(app: String = "test") -> TourCatalog {
        TourCatalog(
            app: app, flows: [form, walk, intro, tip, prompt, tour, tutorial],
            freeActions: [
                StepAction(
                    "swipeLeft", outcome: .stay,
                    effects: [.product("mood", payload: ["mood": .literal("bad")])])
            ])
    }
}

/// Drives an engine through events with a moving clock, keeping the effects of the last event.
public struct Driver {
    public let engine: TourEngine
    public var state = TourState()
    public var now = Fixtures.t0
    public var context: TourContext = [:]
    public var effects: [TourEffect] = []
    public var records: [JournalRecord] = []

    public init(_ engine: TourEngine, context: TourContext = [:]) {
        self.engine = engine
        self.context = context
    }

    @discardableResult
    public mutating func send(_ event: TourEvent) throws(TourRefusal) -> [TourEffect] {
        let transition = try engine.reduce(state, event, at: now, context: context)
        state = transition.state
        effects = transition.effects
        records.append(transition.record)
        return effects
    }

    @discardableResult
    public mutating func act(_ action: String, _ parameters: [String: String] = [:]) throws(TourRefusal)
        -> [TourEffect]
    {
        try send(.actionPerformed(action, parameters: parameters))
    }

    public mutating func wait(_ seconds: Double) throws(TourRefusal) {
        now = now.addingTimeInterval(seconds)
        try send(.clockAdvanced)
    }

    public var card: Card? { engine.card(in: state, context: context) }
    public var step: StepID? { card?.step }
    public func status(_ flow: FlowID) -> FlowStatus { state[flow: flow].status }
    public var haptics: [HapticFeedback] {
        effects.compactMap { if case .haptic(let h) = $0 { h } else { nil } }
    }
    public var analytics: [String] {
        effects.compactMap { if case .analytics(let a) = $0 { a.name } else { nil } }
    }
    public var products: [ProductEffect] {
        effects.compactMap { if case .product(let p) = $0 { p } else { nil } }
    }

    /// The refusal of `event`, or nil when it would be accepted. (Nothing to check about the state:
    /// this is a non-mutating call on a value.)
    public func refuses(_ event: TourEvent) -> TourRefusal? {
        do {
            _ = try engine.reduce(state, event, at: now, context: context)
            return nil
        } catch {
            return error
        }
    }
}

/// The fixture catalog's product effects, read as they come: test handlers log or store them.
public struct FixtureEffect: HandlerEffect, Equatable {
    public var name: String
    public var payload: [String: TourValue]

    public static let kinds = [
        EffectKind("stored", payload: ["name": .any]), EffectKind("marked", payload: ["week": .any]),
        EffectKind("activate", payload: ["level": .any, "bank": .any]),
        EffectKind("mood", payload: ["mood": .any]),
    ]

    public init(_ payload: EffectPayload) {
        name = payload.kind
        self.payload = payload.values
    }
}

/// Text the tests made that is not a URL: a failure of the test that made it, where a force unwrap
/// would have ended every test of the process.
public struct NotAURL: Error, CustomStringConvertible {
    public let text: String
    public var description: String { "not a URL: \(text)" }
}

extension URL {
    /// `text` as a URL, or ``NotAURL``.
    public init(checking text: String) throws {
        guard let url = URL(string: text) else { throw NotAURL(text: text) }
        self = url
    }
}

extension LocaleTag {
    /// A tag the tests write as text they know is one ("de", "pt-BR"): a test's own typo stops it
    /// at its first run with the text named.
    public init(known text: String) {
        guard let tag = LocaleTag(text) else { preconditionFailure("not a locale tag: \(text)") }
        self = tag
    }
}

extension Array where Element == StepDefinition {
    /// The index of the step `id`, which the test's catalog has: a test that names a step its catalog
    /// lacks stops at its first run with the step named.
    public func index(of id: StepID) -> Int {
        guard let index = firstIndex(where: { $0.id == id }) else { preconditionFailure("no step \(id)") }
        return index
    }
}

extension Array where Element == StepAction {
    /// The index of the action `name`, which the test's step has.
    public func index(named name: String) -> Int {
        guard let index = firstIndex(where: { $0.name == name }) else {
            preconditionFailure("no action \(name)")
        }
        return index
    }
}
