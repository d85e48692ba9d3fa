import Foundation
import TourRuntime

/// One thing that can happen at a state: an action on the card (or a free action), a timer
/// running out, the app killed and launched again, a visit or signal, a replay or reset, the
/// network going away or coming back.
enum Move: Hashable, Sendable, CustomStringConvertible {
    case action(String, [String: String], answers: [String: String])
    case timer
    case relaunch(version: String)
    case visit(String)
    case signal(String)
    case replay(FlowID)
    case reset
    case network(offline: Bool)

    var description: String {
        switch self {
        case .action(let name, let parameters, let answers):
            ([name] + parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                + answers.sorted { $0.key < $1.key }.map { "(\($0.key) answered \($0.value))" })
                .joined(separator: " ")
        case .timer: "wait for the timer"
        case .relaunch(let version): "kill and relaunch \(version)"
        case .visit(let place): "visit \(place)"
        case .signal(let name): "signal \(name)"
        case .replay(let flow): "replay \(flow)"
        case .reset: "reset"
        case .network(let offline): offline ? "go offline" : "go online"
        }
    }

    var actionName: String? { if case .action(let name, _, _) = self { name } else { nil } }

    /// Moves from outside the card are limited per path (see ``Budget``); actions and timers are not.
    var budgetKind: String? {
        switch self {
        case .action, .timer: nil
        case .relaunch: "relaunch"
        case .visit, .signal: "trigger"
        case .replay, .reset: "replay or reset"
        case .network: "network"
        }
    }
}

/// How many moves of each outside kind one path may take. Without a bound the independent flows of
/// a product (Carrier Wave's five mini-tours, each visit at each step of each other one) multiply
/// into millions of states; with it every step and pair is still reached, and a path may still
/// kill and relaunch once after its first launch, stack two tours, replay or reset once, and lose and regain the network.
struct Budget: Hashable, Sendable {
    var remaining: [String: Int] = ["relaunch": 2, "trigger": 2, "replay or reset": 1, "network": 2]

    func allows(_ move: Move) -> Bool { move.budgetKind.map { (remaining[$0] ?? 0) > 0 } ?? true }

    func spending(_ move: Move) -> Budget {
        var next = self
        if let kind = move.budgetKind { next.remaining[kind, default: 0] -= 1 }
        return next
    }
}

/// What one product's exploration covered and what it found wrong.
struct ExplorationReport: Sendable {
    var product: String
    var states = 0
    var transitions = 0
    var refusalsChecked = 0
    var refusalsOnDisk = 0
    var paths = 0
    var depth = 0
    var definedSteps: [String] = []
    var definedPairs: [String] = []
    var stepsReached: Set<String> = []
    var pairsAccepted: Set<String> = []
    var violations: [String] = []

    var unreachedSteps: [String] { definedSteps.filter { !stepsReached.contains($0) } }
    var unacceptedPairs: [String] { definedPairs.filter { !pairsAccepted.contains($0) } }

    var summary: String {
        "\(product): \(states) states, \(transitions) transitions, \(paths) paths (depth ≤ \(depth)), "
            + "\(refusalsChecked) refusals (\(refusalsOnDisk) on disk); steps \(definedSteps.count - unreachedSteps.count)/\(definedSteps.count), "
            + "(step, action) pairs \(definedPairs.count - unacceptedPairs.count)/\(definedPairs.count)"
    }
}

/// Explores every state of one product reachable from a fresh install, breadth first, with every
/// move at every state, each on a real SQLite file; checks the invariants on every transition.
///
/// A state is a folder holding the database file (and any file beside it, such as Growth's profile
/// store). An accepted move runs on a copy of its state's folder; a move the engine refuses runs on
/// the state's own file, which must not change by a byte.
final class Explorer {
    let subject: Subject
    let root: URL
    private(set) var report: ExplorationReport
    private var seen: Set<String> = []
    private var diskChecked: Set<String> = []
    private var nextID = 0
    private let user = "explorer"

    init(_ subject: Subject) throws {
        self.subject = subject
        // Real SQLite files, on the RAM disk where there is one: closing a file checkpoints and syncs
        // it, and thousands of states are opened and closed.
        let shm = URL(fileURLWithPath: "/dev/shm")
        let base =
            FileManager.default.isWritableFile(atPath: shm.path)
            ? shm : FileManager.default.temporaryDirectory
        root = base.appendingPathComponent("explore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        report = ExplorationReport(product: subject.description, depth: subject.maxDepth)
        let catalog = subject.make(":memory:", World()).catalog
        for flow in catalog.flows {
            for (index, step) in flow.steps.enumerated() {
                report.definedSteps.append("\(flow.id)/\(step.id)")
                var names = step.actions.map(\.name) + step.passThrough
                if step.canGoBack && index > 0 { names.append("back") }
                if step.canSkip { names.append("skip") }
                report.definedPairs += names.map { "\(flow.id)/\(step.id)/\($0)" }
            }
        }
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    struct Node {
        var folder: URL
        var world: World
        var path: [Move]
        var budget = Budget()
    }

    static let start = Date(timeIntervalSince1970: 1_767_603_600)

    func run() async throws -> ExplorationReport {
        var frontier: [Node] = []
        for world in subject.startingWorlds {
            let folder = try newFolder()
            let database = try OnboardingDatabase.open(path: databasePath(folder))
            let session = try database.session(key(for: subject.make("", world)), scopes: scopes)
            if seen.insert(stateKey(session, world: world)).inserted {
                frontier.append(Node(folder: folder, world: world, path: [], budget: subject.budget))
            }
        }
        report.states = frontier.count
        for depth in 0..<subject.maxDepth where !frontier.isEmpty {
            var next: [Node] = []
            for node in frontier {
                let children = try await explore(node)
                if children.isEmpty { report.paths += 1 }
                next += children
                try? FileManager.default.removeItem(at: node.folder)
                if report.violations.count >= 20 { return report }
            }
            frontier = next
            if ProcessInfo.processInfo.environment["EXPLORE_TRACE"] != nil {
                FileHandle.standardError.write(
                    Data(
                        "\(subject): depth \(depth) done, \(report.states) states, \(report.transitions) transitions, frontier \(frontier.count)\n"
                            .utf8))
            }
        }
        report.paths += frontier.count
        return report
    }

    // MARK: - One state

    private var scopes: [FlowID: FlowScope] { subject.make("", World()).scopes }

    private func key(for product: Product) -> SessionKey { SessionKey(app: product.catalog.app, user: user) }

    private func databasePath(_ folder: URL) -> String {
        folder.appendingPathComponent("onboarding.sqlite").path
    }

    private func newFolder() throws -> URL {
        nextID += 1
        let folder = root.appendingPathComponent("s\(nextID)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Runs every move at `node`; returns the states not seen before.
    private func explore(_ node: Node) async throws -> [Node] {
        let product = subject.make(databasePath(node.folder), node.world)
        let database = try OnboardingDatabase.open(path: databasePath(node.folder))
        let stored = try database.session(key(for: product), scopes: product.scopes)
        let journal = try database.journal(app: product.catalog.app)
        var accepted: [Move] = []
        var refused: [Move] = []
        for move in moves(at: stored, product: product, world: node.world) where node.budget.allows(move) {
            if willBeRefused(move, session: stored, product: product) {
                refused.append(move)
            } else {
                accepted.append(move)
            }
        }
        try await checkRefusals(refused, at: node, stored: stored)
        var children: [Node] = []
        for move in accepted {
            if let child = try await take(move, from: node, before: stored, journalBefore: journal) {
                children.append(child)
            }
        }
        return children
    }

    private func moves(at session: Session, product: Product, world: World) -> [Move] {
        let catalog = product.catalog
        var moves: [Move] = []
        var seenNames: Set<String> = []
        let steps = catalog.flows.flatMap { flow in flow.steps.map { (flow, $0) } }
        for (flow, step) in steps {
            for action in step.actions {
                moves += variants(of: action, fields: flow.fields, gates: step.gates)
                seenNames.insert(action.name)
            }
        }
        for action in catalog.freeActions where !seenNames.contains(action.name) {
            moves += variants(of: action, fields: catalog.freeFields, gates: [])
        }
        moves += ["back", "skip"].map { Move.action($0, [:], answers: [:]) }
        if product.engine.nextDeadline(in: session.tour) != nil { moves.append(.timer) }
        // Versions only go up: an app is updated, never downgraded.
        let installed = session.tour.appVersion.flatMap(subject.launchVersions.firstIndex(of:)) ?? 0
        moves += subject.launchVersions[installed...].map { .relaunch(version: $0) }
        for trigger in catalog.flows.flatMap(\.triggers) where subject.exploresTriggers {
            switch trigger.moment {
            case .visit(let place): moves.append(.visit(place))
            case .signal(let name): moves.append(.signal(name))
            case .launch: break
            }
        }
        moves += catalog.flows.filter { $0.replay != .notReplayable }.map { .replay($0.id) }
        moves.append(.reset)
        if subject.usesNetwork { moves.append(.network(offline: !world.offline)) }
        var unique: [Move] = []
        for move in moves where !unique.contains(move) { unique.append(move) }
        return unique
    }

    /// Sample parameters that the action's fields accept (each option of a choice), one set that
    /// leaves a required parameter out, and for a permission request each answer the user can give.
    private func variants(of action: StepAction, fields: [FieldSpec], gates: [Gate]) -> [Move] {
        var parameterSets: [[String: String]] = [[:]]
        for name in action.fills {
            let kind = fields.first { $0.name == name }?.kind ?? .text
            let values: [String]
            switch kind {
            case .text: values = ["Alpha"]
            case .secret: values = ["s3cret-pass"]
            case .list: values = ["Instagram,TikTok"]
            // One option other than the preselected one: each option is a value, not a path.
            case .choice(let options): values = options.last.map { [$0] } ?? []
            case .integer(let minimum, _): values = [String(minimum)]
            case .date: values = ["1990-05-01"]
            }
            parameterSets = parameterSets.flatMap { set in values.map { set.merging([name: $0]) { $1 } } }
        }
        if !action.requiredParameters.isEmpty { parameterSets.append([:]) }
        var answerSets: [[String: String]] = [[:]]
        if case .request(let gateID) = action.outcome, let gate = gates.first(where: { $0.id == gateID }),
            case .permission(let permission) = gate.kind
        {
            answerSets = [[permission.rawValue: "granted"], [permission.rawValue: "denied"]]
        }
        return parameterSets.flatMap { parameters in
            answerSets.map { Move.action(action.name, parameters, answers: $0) }
        }
    }

    /// Whether the pure engine refuses an action here. Other moves always run on a copy.
    private func willBeRefused(_ move: Move, session: Session, product: Product) -> Bool {
        guard case .action(let name, let parameters, _) = move else { return false }
        let now = session.virtualNow ?? Self.start
        let context = product.handler.context(domain: session.domain, now: now)
        do {
            _ = try product.engine.reduce(
                session.tour, .actionPerformed(name, parameters: parameters), at: now, context: context)
            return false
        } catch {
            return true
        }
    }

    // MARK: - Refused moves

    /// Refused moves. The engine refuses each one in memory (it returned no state); then each
    /// (step, move) not yet tried on disk, and every refused back and skip, runs on the state's own
    /// file: refused, with the snapshot, the stored state and every byte of the file unchanged.
    private func checkRefusals(_ moves: [Move], at node: Node, stored: Session) async throws {
        report.refusalsChecked += moves.count
        let product = subject.make(databasePath(node.folder), node.world)
        let place = where_(stored.tour, product)
        let onDisk = moves.filter { move in
            let policy = move.actionName == "back" || move.actionName == "skip"
            return diskChecked.insert("\(place) \(move)").inserted || policy
        }
        guard !onDisk.isEmpty else { return }
        let path = databasePath(node.folder)
        let bytes = fileBytes(path)
        let database = try OnboardingDatabase.open(path: path)
        let session = makeSession(
            product, database: database, world: node.world, stored: stored, answers: [:])
        let snapshot = try await session.snapshot()
        for move in onDisk {
            report.refusalsOnDisk += 1
            do {
                _ = try await perform(move, on: session, product: product, stored: stored)
                fail(node.path + [move], place, "was accepted although the engine refuses it here")
                return
            } catch is TourRefusal {
                continue
            }
        }
        let tried = onDisk.map(\.description).joined(separator: "; ")
        if try await session.snapshot() != snapshot {
            fail(node.path, place, "refused moves (\(tried)) changed the state in memory")
        }
        if try database.session(key(for: product), scopes: product.scopes) != stored {
            fail(node.path, place, "refused moves (\(tried)) changed the stored state")
        }
        if fileBytes(path) != bytes {
            fail(node.path, place, "refused moves (\(tried)) changed the database file")
        }
    }

    // MARK: - Accepted moves

    private func take(_ move: Move, from node: Node, before: Session, journalBefore: [JournalRow])
        async throws
        -> Node?
    {
        let folder = try newFolder()
        try FileManager.default.removeItem(at: folder)
        try FileManager.default.copyItem(at: node.folder, to: folder)
        var world = node.world
        if case .network(let offline) = move { world.offline = offline }
        let path = node.path + [move]
        let place = where_(before.tour, subject.make("", world))
        let after: Session
        do {
            let database = try OnboardingDatabase.open(path: databasePath(folder))
            let product = subject.make(databasePath(folder), world)
            if case .network = move {
                after = before
            } else {
                var answers: [String: String] = [:]
                if case .action(_, _, let given) = move { answers = given }
                let session = makeSession(
                    product, database: database, world: world, stored: before, answers: answers)
                do {
                    _ = try await perform(move, on: session, product: product, stored: before)
                } catch let refusal as TourRefusal {
                    // Only actions are predicted; the other moves may be refused (a replay while showing).
                    if move.actionName != nil {
                        fail(path, place, "was refused although the engine accepts it: \(refusal)")
                    }
                    report.refusalsChecked += 1
                    if try database.session(key(for: product), scopes: product.scopes) != before {
                        fail(path, place, "was refused but the stored state changed")
                    }
                    try? FileManager.default.removeItem(at: folder)
                    return nil
                }
                after = try database.session(key(for: product), scopes: product.scopes)
                let journal = try database.journal(app: product.catalog.app)
                check(
                    move, path: path, place: place, before: before, after: after, product: product,
                    journalBefore: journalBefore, journal: journal)
                // Every new state is rebuilt from its journal (a state reached again was rebuilt then).
                if !seen.contains(stateKey(after, world: world)) {
                    let rebuilt = try JournalReplay.rebuild(
                        app: product.catalog.app, engine: product.engine, from: database)
                    let storedFlows = try database.storedFlows(app: product.catalog.app)
                        .mapValues { $0.filter { $0.value != FlowState() } }.filter { !$0.value.isEmpty }
                    if rebuilt != storedFlows {
                        fail(path, place, "rebuilding from the journal does not give the stored state")
                    }
                }
            }
            report.transitions += 1
            record(move, before: before, after: after, product: product)
        }
        let stateKey = stateKey(after, world: world)
        guard seen.insert(stateKey).inserted else {
            try? FileManager.default.removeItem(at: folder)
            return nil
        }
        report.states += 1
        return Node(folder: folder, world: world, path: path, budget: node.budget.spending(move))
    }

    private func makeSession(
        _ product: Product, database: OnboardingDatabase, world: World, stored: Session,
        answers: [String: String]
    ) -> TourSession {
        // As the CLI does: what the device remembers from earlier answers, over the world's statuses.
        var statuses: [PermissionName: PermissionStatus] = [:]
        for (name, value) in world.permissionsBefore {
            statuses[PermissionName(rawValue: name)] = PermissionStatus(rawValue: value)
        }
        for (key, value) in stored.device where key.hasPrefix("permission.") {
            statuses[PermissionName(rawValue: String(key.dropFirst("permission.".count)))] = value.stringValue
                .flatMap(PermissionStatus.init)
        }
        let answerMap = Dictionary(
            uniqueKeysWithValues: answers.compactMap { name, value in
                PermissionStatus(rawValue: value).map { (PermissionName(rawValue: name), $0) }
            })
        return TourSession(
            product: product, user: user, database: database,
            permissions: StubPermissionProvider(statuses: statuses, answers: answerMap),
            time: .virtual(start: Self.start))
    }

    private func perform(_ move: Move, on session: TourSession, product: Product, stored: Session)
        async throws -> [Transition]
    {
        switch move {
        case .action(let name, let parameters, _):
            return try await session.send(.actionPerformed(name, parameters: parameters))
        case .timer:
            let now = stored.virtualNow ?? Self.start
            let due = product.engine.nextDeadline(in: stored.tour) ?? now
            return try await session.advanceClock(by: max(0, due.timeIntervalSince(now)))
        case .relaunch(let version):
            var transitions = try await session.send(.appLaunched(version: version))
            for signal in product.launchSignals { transitions += try await session.send(.signal(signal)) }
            return transitions
        case .visit(let place): return try await session.send(.featureVisited(place))
        case .signal(let name): return try await session.send(.signal(name))
        case .replay(let flow): return try await session.send(.replayRequested(flow))
        case .reset: return try await session.send(.resetRequested(nil))
        case .network: return []
        }
    }

    // MARK: - Invariants

    private func check(
        _ move: Move, path: [Move], place: String, before: Session, after: Session, product: Product,
        journalBefore: [JournalRow], journal: [JournalRow]
    ) {
        let catalog = product.catalog
        // The journal only grows.
        if Array(journal.prefix(journalBefore.count)) != journalBefore {
            fail(path, place, "changed or removed journal rows")
        }
        // Step indexes stay within the run.
        for (id, run) in after.tour.flows where run.status == .active {
            if run.plan.isEmpty || !run.plan.indices.contains(run.position) {
                fail(path, place, "left \(id) at step index \(run.position + 1) of \(run.plan.count)")
            }
        }
        // An action is one the showing step allows, and it moves the step only as the step allows.
        if case .action(let name, _, _) = move {
            if let flowID = before.tour.presentingFlow, let flow = catalog.flow(flowID),
                let stepID = before.tour[flow: flowID].currentStep,
                let step = flow.steps.first(where: { $0.id == stepID })
            {
                let run = before.tour[flow: flowID]
                var allowed = step.actions.map(\.name) + step.passThrough
                if step.canGoBack && run.position > 0 { allowed.append("back") }
                if step.canSkip { allowed.append("skip") }
                if !allowed.contains(name) {
                    fail(
                        path, place,
                        "was accepted, but the step's definition allows only \(allowed.joined(separator: ", "))"
                    )
                }
                let now = after.tour[flow: flowID]
                if now.status == .active && now.activation == run.activation {
                    let moved = now.position - run.position
                    if name == "back" ? moved != -1 : !(0...1).contains(moved) {
                        fail(
                            path, place,
                            "moved the step index from \(run.position + 1) to \(now.position + 1)")
                    }
                }
            } else if !catalog.freeActions.contains(where: { $0.name == name }) {
                fail(
                    path, place,
                    "was accepted with no card showing, but it is not one of the product's free actions")
            }
        }
        // A finished flow is not presented again unless replayed or reset.
        for flow in catalog.flows {
            let was = before.tour[flow: flow.id].status
            if (was == .completed || was == .skipped), after.tour[flow: flow.id].status == .active,
                move != .replay(flow.id), move != .reset
            {
                fail(path, place, "presented \(flow.id) again after it was \(was.rawValue)")
            }
        }
        if case .relaunch = move {
            checkInterruption(path: path, place: place, before: before, after: after, catalog: catalog)
        }
        checkSideEffects(
            move, path: path, place: place, before: before, after: after, catalog: catalog,
            rows: Array(journal.dropFirst(journalBefore.count)))
        if let problem = subject.invariant?(after.domain) { fail(path, place, problem) }
    }

    /// After a kill and a launch, a flow that was showing is where its interruption policy says.
    private func checkInterruption(
        path: [Move], place: String, before: Session, after: Session, catalog: TourCatalog
    ) {
        for flow in catalog.flows where before.tour[flow: flow.id].status == .active {
            let was = before.tour[flow: flow.id]
            let now = after.tour[flow: flow.id]
            if let record = was.replayOf {
                let restarted = record.status == .notStarted && now.status == .active && now.position == 0
                if now.replayOf != nil || (now.status != record.status && !restarted) {
                    fail(
                        path, place,
                        "\(flow.id): an interrupted replay did not give back the record \(record.status.rawValue)"
                    )
                }
                continue
            }
            switch flow.interruption {
            case .resume:
                if now.status != .active || now.plan != was.plan || now.position != was.position {
                    fail(
                        path, place,
                        "\(flow.id) should resume at step \(was.position + 1) after a relaunch; it is \(describe(now))"
                    )
                }
            case .restart:
                if now.status != .active || now.position != 0 {
                    fail(
                        path, place,
                        "\(flow.id) should restart at its first step after a relaunch; it is \(describe(now))"
                    )
                }
            case .discard:
                if now.status == .active && (now.activation == was.activation || now.position != 0) {
                    fail(
                        path, place, "\(flow.id) should drop its run after a relaunch; it is \(describe(now))"
                    )
                }
            }
        }
    }

    /// Product side effects happen exactly once: the edge's journal holds each effect the definition
    /// promises for what happened in it (an action's effects, a completion's, a skip's, a reset's,
    /// a reported domain event) exactly as many times, and no other.
    private func checkSideEffects(
        _ move: Move, path: [Move], place: String, before: Session, after: Session, catalog: TourCatalog,
        rows: [JournalRow]
    ) {
        var expected: [String: Int] = [:]
        func expect(_ templates: [EffectTemplate]) {
            for case .product(let name, _) in templates { expected[name, default: 0] += 1 }
        }
        var actual: [String: Int] = [:]
        for row in rows {
            guard let effects = try? Self.decode([TourEffect].self, row.effectsJSON),
                let event = try? Self.decode(TourEvent.self, row.eventJSON)
            else {
                fail(path, place, "journal row \(row.id) does not decode")
                continue
            }
            for case .product(let effect) in effects { actual[effect.name, default: 0] += 1 }
            if case .domainEvent(let name, _) = event { expected[name, default: 0] += 1 }
            if case .gateAnswered(let gateID, .granted) = event,
                let gate = catalog.flows.flatMap(\.steps).flatMap(\.gates).first(where: { $0.id == gateID }),
                row.outcome != "no change"
            {
                expect(gate.onGranted)
            }
        }
        if case .action(let name, _, _) = move {
            if let flowID = before.tour.presentingFlow, let flow = catalog.flow(flowID),
                let step = before.tour[flow: flowID].currentStep.flatMap({ id in
                    flow.steps.first { $0.id == id }
                })
            {
                if let action = step.actions.first(where: { $0.name == name }) {
                    expect(action.effects)
                } else if step.passThrough.contains(name),
                    let free = catalog.freeActions.first(where: { $0.name == name })
                {
                    expect(free.effects)
                }
            } else if let free = catalog.freeActions.first(where: { $0.name == name }) {
                expect(free.effects)
            }
        }
        for flow in catalog.flows {
            let was = before.tour[flow: flow.id]
            let now = after.tour[flow: flow.id]
            if move == .reset {
                expect(flow.onReset)
                continue
            }
            if case .relaunch = move { continue }
            guard was.status == .active, now.status != .active, was.replayOf == nil else { continue }
            let skipped: Bool
            if case .action(let name, _, _) = move {
                let step = was.currentStep.flatMap { id in flow.steps.first { $0.id == id } }
                skipped = name == "skip" || step?.actions.first { $0.name == name }?.outcome == .dismissFlow
            } else {
                skipped = false
            }
            expect(skipped ? flow.onSkip : flow.onComplete)
        }
        if expected != actual {
            fail(
                path, place,
                "side effects \(describe(actual)) where the definition promises \(describe(expected))")
        }
    }

    // MARK: - Coverage and reporting

    private func record(_ move: Move, before: Session, after: Session, product: Product) {
        for state in [before.tour, after.tour] {
            if let flow = state.presentingFlow, let step = state[flow: flow].currentStep {
                report.stepsReached.insert("\(flow)/\(step)")
            }
        }
        if let name = move.actionName, let flow = before.tour.presentingFlow,
            let step = before.tour[flow: flow].currentStep
        {
            report.pairsAccepted.insert("\(flow)/\(step)/\(name)")
        }
    }

    private func fail(_ path: [Move], _ place: String, _ problem: String) {
        let route = path.isEmpty ? "(fresh install)" : path.map(\.description).joined(separator: " → ")
        report.violations.append(
            "\(subject) · \(place) · path: \(route): '\(path.last?.description ?? "")' \(problem)")
    }

    private func where_(_ state: TourState, _ product: Product) -> String {
        guard let flow = state.presentingFlow else { return "no flow showing" }
        return "flow \(flow) · step \(state[flow: flow].currentStep?.rawValue ?? "?")"
    }

    private func describe(_ run: FlowState) -> String {
        run.status == .active
            ? "at step \(run.position + 1) (\(run.currentStep?.rawValue ?? "?"))" : run.status.rawValue
    }

    private func describe(_ counts: [String: Int]) -> String {
        counts.isEmpty
            ? "none"
            : counts.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: ", ")
    }

    private func fileBytes(_ path: String) -> Data {
        ["", "-wal"].reduce(into: Data()) { $0 += FileManager.default.contents(atPath: path + $1) ?? Data() }
    }

    /// Two states are the same when the flows, the domain and the device match, with timers relative
    /// to now, activations as an order, and lists by length up to two (entries repeat without end).
    private func stateKey(_ session: Session, world: World) -> String {
        let now = session.virtualNow ?? Self.start
        var tour = session.tour
        let order = tour.flows.filter { $0.value.status == .active }.sorted {
            $0.value.activation < $1.value.activation
        }.map(\.key)
        for (id, var run) in tour.flows {
            run.deadline = run.deadline.map {
                Date(timeIntervalSinceReferenceDate: $0.timeIntervalSince(now))
            }
            run.pendingStart = run.pendingStart.map {
                Date(timeIntervalSinceReferenceDate: $0.timeIntervalSince(now))
            }
            run.activation = order.firstIndex(of: id).map { $0 + 1 } ?? 0
            tour.flows[id] = run == FlowState() ? nil : run
        }
        struct Shape: Encodable {
            var tour: TourState
            var domain: [String: TourValue]
            var device: [String: TourValue]
            var world: World
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let shape = Shape(
            tour: tour, domain: session.domain.mapValues(Self.abstract), device: session.device, world: world)
        return String(decoding: (try? encoder.encode(shape)) ?? Data(), as: UTF8.self)
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(type, from: Data(json.utf8))
    }

    private static func abstract(_ value: TourValue) -> TourValue {
        switch value {
        case .list(let items): .string("list of \(min(items.count, 2))")
        case .object(let object): .object(object.mapValues(abstract))
        default: value
        }
    }
}
