import Foundation
import Permissions
import Persistence
import TourCore
import TourFixtures
import TourRuntime

/// Explores every state of one product reachable from a fresh install, breadth first, with every
/// move at every state; checks the invariants on every transition.
///
/// A state is a database: an image of it in memory for most states (each move runs on its own copy,
/// loaded into a private in-memory database), and a real SQLite file, in WAL mode, for a sample of
/// them chosen by the state itself (about one in eight, the same states in every run) and for
/// every fresh install. A move the engine refuses runs on the state's own database, which must not
/// change by a byte: its image, or the file and its -wal.
///
/// Sendable for its workers (``exploreLevel(_:)``): each explorer is used by one task at a time,
/// on its own executor, and read by the one that started it only after that task ended.
final class Explorer: @unchecked Sendable {
    let subject: Subject
    let root: URL
    var report: ExplorationReport
    var seen: Set<String> = []
    /// The (place, move) pairs whose refusal was already tried on a database.
    var diskChecked: Set<String> = []
    private var nextID = 0
    /// The workers that explore a large frontier (``exploreLevel(_:)``): explorers of the same
    /// subject, each with its own databases and executor.
    var workers: [Explorer] = []
    let user = "explorer"
    /// One state in this many is explored on a real file.
    static let fileSample = 8
    /// The in-memory databases images are loaded into: one for the state being explored, one for
    /// the move being taken (loading an image into a database keeps its compiled schema).
    private let stateDatabase: OnboardingDatabase
    private let moveDatabase: OnboardingDatabase
    /// Where every database of the exploration runs its work, and the exploration itself: one
    /// serial queue, so a move's events reach the session without a hop to another thread.
    let executor = DatabaseExecutor(label: "explorer")

    init(_ subject: Subject) throws {
        self.subject = subject
        // Real SQLite files, on the RAM disk where there is one: closing a file checkpoints and syncs it.
        let shm = URL(fileURLWithPath: "/dev/shm")
        let base =
            FileManager.default.isWritableFile(atPath: shm.path)
            ? shm : Scratch.folder
        root = base.appendingPathComponent("explore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        report = ExplorationReport(product: subject.description, depth: subject.maxDepth)
        stateDatabase = try OnboardingDatabase.inMemory(executor: executor)
        moveDatabase = try OnboardingDatabase.inMemory(executor: executor)
        let catalog = subject.make(":memory:", World()).catalog
        for flow in catalog.flows {
            for (index, step) in flow.steps.enumerated() {
                report.definedSteps.append("\(flow.id)/\(step.id)")
                // Back is never accepted on a flow's first step.
                let names =
                    step.actions.filter { !($0.outcome == .back && index == 0) }.map(\.name)
                    + step.passThrough
                report.definedPairs += names.map { "\(flow.id)/\(step.id)/\($0)" }
            }
        }
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// Where one state's database is.
    enum Store {
        /// The bytes of the database, loaded into an in-memory database for each use.
        case image([UInt8])
        /// A real file in its own folder.
        case file(URL)
    }

    struct Node: Sendable {
        var store: Store
        var world: World
        var path: [Move]
        var budget = Budget()
        /// The state's journal replayed through the engine (checked to be the stored state when the
        /// state was new): a child replays only its own rows on top of it.
        var replayed = JournalReplay.Replayed()
        /// The state's key (``stateKey(_:world:)``).
        var key = ""
    }

    static let start = Date(timeIntervalSince1970: 1_767_603_600)

    func run() async throws -> ExplorationReport {
        try await withTaskExecutorPreference(executor) { try await walk() }
    }

    private func walk() async throws -> ExplorationReport {
        var frontier: [Node] = []
        for world in subject.startingWorlds {
            // A fresh install is a file that does not exist yet: the first write creates it.
            let store = Store.file(try newFolder())
            let session = try open(store, for: .state).session(
                key(for: subject.make("", world)), scopes: scopes)
            if seen.insert(Self.stateKey(session, world: world)).inserted {
                frontier.append(Node(store: store, world: world, path: [], budget: subject.budget))
            }
        }
        report.states = frontier.count
        for depth in 0..<subject.maxDepth where !frontier.isEmpty {
            frontier = try await exploreLevel(frontier)
            if report.violations.count >= 20 { return report }
            if ProcessInfo.processInfo.environment["EXPLORE_TRACE"] != nil {
                FileHandle.standardError.write(
                    Data(
                        """
                        \(subject): depth \(depth) done, \(report.states) states, \(report.transitions) \
                        transitions, frontier \(frontier.count)\n
                        """
                        .utf8))
            }
        }
        report.paths += frontier.count
        return report
    }

    // MARK: - Stores

    private var scopes: Scopes { subject.make("", World()).scopes }

    func key(for product: Product) -> SessionKey { SessionKey(app: product.catalog.app, user: user) }

    func databasePath(_ folder: URL) -> String {
        folder.appendingPathComponent("onboarding.sqlite").path
    }

    func newFolder() throws -> URL {
        nextID += 1
        let folder = root.appendingPathComponent("s\(nextID)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    enum Use { case state, move }

    /// The state's database: its image loaded into the in-memory database for `use`, or its file.
    func open(_ store: Store, for use: Use) throws -> OnboardingDatabase {
        switch store {
        case .image(let bytes):
            let database = use == .state ? stateDatabase : moveDatabase
            try database.load(image: bytes)
            return database
        case .file(let folder):
            return try OnboardingDatabase.open(path: databasePath(folder), executor: executor)
        }
    }

    /// A copy of the state for a move to change: a new image in memory, or a copy of the folder.
    func copy(_ store: Store) throws -> Store {
        guard case .file(let folder) = store else { return store }
        let copy = try newFolder()
        try FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(at: folder, to: copy)
        return .file(copy)
    }

    /// Where a new state is kept: in memory, or (for the sample, by the state's own key) in a file.
    func keep(_ database: OnboardingDatabase, from store: Store, key stateKey: String) throws -> Store {
        let onFile = Self.stableHash(stateKey) % UInt64(Self.fileSample) == 0
        switch (store, onFile) {
        case (.file, true): return store
        case (.file, false):
            defer { remove(store) }
            return .image(try database.image())
        case (.image, false): return .image(try database.image())
        case (.image, true):
            let folder = try newFolder()
            try Data(try database.image()).write(to: URL(fileURLWithPath: databasePath(folder)))
            return .file(folder)
        }
    }

    func remove(_ store: Store) {
        if case .file(let folder) = store { try? FileManager.default.removeItem(at: folder) }
    }

    /// Every byte of the state's database: the image, or the file and its -wal.
    func bytes(_ store: Store, _ database: OnboardingDatabase) throws -> [UInt8] {
        switch store {
        case .image: try database.image()
        case .file(let folder): [UInt8](fileBytes(databasePath(folder)))
        }
    }

    /// FNV-1a: a hash that is the same in every run (Swift's `Hasher` is seeded per process).
    static func stableHash(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    /// Runs every move at `node`; returns the states not seen before.
    func explore(_ node: Node) async throws -> [Node] {
        let product = subject.make("", node.world)
        let database = try open(node.store, for: .state)
        let stored = try database.session(key(for: product), scopes: product.scopes)
        let journal = try database.journal(app: product.catalog.app)
        var accepted: [Move] = []
        var refused: [Move] = []
        for move in moves(at: stored, product: product, world: node.world) where node.budget.allows(move) {
            if willBeRefused(move, session: stored, product: product, world: node.world) {
                refused.append(move)
            } else {
                accepted.append(move)
            }
        }
        try await checkRefusals(refused, at: node, on: database, stored: stored)
        var children: [Node] = []
        for move in accepted {
            if let child = try await take(move, from: node, before: stored, journalBefore: journal) {
                children.append(child)
            }
        }
        return children
    }

    func moves(at session: Session, product: Product, world: World) -> [Move] {
        let catalog = product.catalog
        var moves: [Move] = []
        var seenNames: Set<String> = []
        let steps = catalog.flows.flatMap { flow in flow.steps.map { (flow, $0) } }
        for (flow, step) in steps {
            for action in step.actions {
                moves += Self.variants(of: action, fields: flow.fields, gates: step.gates)
                seenNames.insert(action.name)
            }
        }
        for action in catalog.freeActions where !seenNames.contains(action.name) {
            moves += Self.variants(of: action, fields: catalog.freeFields, gates: [])
        }
        moves += ["back", "skip"].map { Move.action($0, [:], answers: [:]) }
        if product.engine.nextDeadline(in: session.tour) != nil { moves.append(.timer) }
        // Versions only go up: an app is updated, never downgraded.
        let installed = session.tour.appVersion.flatMap(subject.launchVersions.firstIndex(of:)) ?? 0
        moves += subject.launchVersions[installed...].map { .relaunch(version: $0) }
        if let downgrade = subject.downgradeTo, installed > 0 { moves.append(.relaunch(version: downgrade)) }
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
    static func variants(of action: StepAction, fields: [FieldSpec], gates: [Gate]) -> [Move] {
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
            // A ranged number at its bounds, not at every value: its minimum, and its maximum when
            // fixed (one bounded by a context value takes the minimum). A value in between takes
            // no other path, since conditions read context, not fields; a field of 1-60 is two
            // moves, not sixty, and sixty times the states below them.
            case .integer(let minimum, let maximum, _):
                values = [String(minimum)] + (maximum.map { $0 > minimum ? [String($0)] : [] } ?? [])
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
    func willBeRefused(_ move: Move, session: Session, product: Product, world: World) -> Bool {
        guard case .action(let name, let parameters, _) = move else { return false }
        let now = session.virtualNow ?? Self.start
        let context = product.context(domain: session.domain, now: now, device: world.deviceFacts)
        do {
            _ = try product.engine.reduce(
                session.tour, .actionPerformed(name, parameters: parameters), at: now, context: context)
            return false
        } catch {
            return true
        }
    }

    // MARK: - Accepted moves

    func take(_ move: Move, from node: Node, before: Session, journalBefore: [JournalRow])
        async throws
        -> Node?
    {
        let store = try copy(node.store)
        var world = node.world
        if case .network(let offline) = move { world.offline = offline }
        let path = node.path + [move]
        let product = subject.make("", world)
        let place = where_(before.tour, product)
        let database = try open(store, for: .move)
        let after: Session
        var journal = journalBefore
        if case .network = move {
            after = before
        } else {
            var answers: [String: String] = [:]
            if case .action(_, _, let given) = move { answers = given }
            let session = makeSession(
                product, database: database, world: world, stored: before, answers: answers)
            let transitions: [Transition]
            do {
                transitions = try await perform(move, on: session, product: product, stored: before)
            } catch let refusal as TourRefusal {
                // Only actions are predicted; the other moves may be refused (a replay while showing).
                if move.actionName != nil {
                    fail(path, place, "was refused although the engine accepts it: \(refusal)")
                }
                report.refusalsChecked += 1
                if try database.session(key(for: product), scopes: product.scopes) != before {
                    fail(path, place, "was refused but the stored state changed")
                }
                remove(store)
                return nil
            }
            after = try database.session(key(for: product), scopes: product.scopes)
            journal = try database.journal(app: product.catalog.app)
            if subject.checksInvariants {
                check(
                    move, path: path, place: place, before: before, after: after, product: product,
                    journalBefore: journalBefore, journal: journal)
            }
            checkAccessibility(
                transitions, after: after, world: world, product: product, path: path, place: place)
        }
        report.transitions += 1
        record(move, before: before, after: after, product: product)
        let stateKey = Self.stateKey(after, world: world)
        guard seen.insert(stateKey).inserted else {
            remove(store)
            return nil
        }
        report.states += 1
        // Every new state is rebuilt from its journal, from the states its rows recorded and by
        // replaying its events, its parent's replay continued with its own rows (a state reached
        // again was checked then).
        let app = product.catalog.app
        let storedFlows = try database.storedFlows(app: app)
            .mapValues { $0.filter { $0.value != FlowState() } }.filter { !$0.value.isEmpty }
        if try JournalReplay.rebuild(app: app, engine: product.engine, from: database) != storedFlows {
            fail(path, place, "the states the journal recorded do not give the stored state")
        }
        let replayed = try JournalReplay.replay(
            app: app, engine: product.engine, rows: Array(journal.dropFirst(journalBefore.count)),
            after: node.replayed)
        if replayed.states != storedFlows {
            fail(path, place, "replaying the journal's events does not give the stored state")
        }
        let kept = try keep(database, from: store, key: stateKey)
        return Node(
            store: kept, world: world, path: path, budget: node.budget.spending(move), replayed: replayed,
            key: stateKey)
    }
}
