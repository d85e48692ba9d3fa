import AccountSync
import Haptics
import Permissions
import Persistence
import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where "now" comes from.
public enum TimeSource: Sendable, Equatable {
    case wall
    /// A clock kept in the database so it holds across processes; it starts at `start`.
    case virtual(start: Date)
}

/// The small runtime at the edge: each event is reduced by the engine and committed in one
/// transaction (flow state, journal row, domain state); then effects are performed through the
/// protocols, and answers (permission granted, connection failed) come back as events.
public actor TourSession {
    /// The session runs on its database's executor, off Swift's cooperative pool: its commits wait
    /// on SQLite (``DatabaseExecutor``).
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        database.executor.asUnownedSerialExecutor()
    }

    /// The executor the session's work runs on. A caller that sends many events in a row can run
    /// on it too (`withTaskExecutorPreference(session.executor)`, as the durable benchmark does):
    /// each `send` is then no hop to the database's queue and back. The CLI does not: a command
    /// sends one to a few events, and the extra thread cost its start more memory than it saved.
    public nonisolated var executor: DatabaseExecutor { database.executor }

    public nonisolated let product: Product
    public nonisolated let key: SessionKey
    let database: OnboardingDatabase
    private let haptics: any HapticPlayer
    private let permissions: any PermissionProvider
    let time: TimeSource
    private let observe: @Sendable (TourEffect) -> Void
    /// The device facts the app reports now (declared ``ContextKey/Source/device`` keys). Each is
    /// remembered for the install with the next event, and stays until reported otherwise.
    private let deviceFacts: [String: TourValue]
    private var subscribers: [UUID: AsyncStream<TourSnapshot>.Continuation] = [:]
    /// The account server, when this session syncs (see `TourSession+Sync.swift`).
    let transport: (any SyncTransport)?
    /// The kind of device (phone, tablet, ...), said with each start it pushes (``StartContext``).
    let deviceKind: String?
    /// Whether this session has pulled the account's records yet (the first event pulls first).
    var pulled = false
    /// The family's display budget shared with the device's other products; nil: this product
    /// alone decides (its seed's behaviour).
    public nonisolated let budget: FamilyBudget?
    /// Whether the budget file has the starts of this product's journal (a crash may have left
    /// some behind); done before the first event.
    private var budgetCaughtUp = false
    /// Whether this session counted a start the account server has not heard of yet.
    var budgetToTell = false
    /// When (in the session's time) the display budget's counts were last exchanged.
    var lastBudgetExchange: Date?
    /// How old the last exchange of budget counts may be before an event that may start a flow
    /// exchanges them again (a long session; Docs/DisplayBudget.md). Five minutes by default.
    public let budgetExchangeInterval: TimeInterval
    /// Failures after a commit (the event stands): said once by whoever runs the session.
    private var warnings: [String] = []

    /// What went wrong after events were committed (they stand, their effects were performed):
    /// each said once; the CLI prints them on standard error.
    public func drainWarnings() -> [String] {
        defer { warnings = [] }
        return warnings
    }

    public init(
        product: Product, user: String, database: OnboardingDatabase,
        haptics: any HapticPlayer = SilentHaptics(),
        permissions: any PermissionProvider = StubPermissionProvider(), time: TimeSource = .wall,
        deviceFacts: [String: TourValue] = [:], sync transport: (any SyncTransport)? = nil,
        budget: FamilyBudget? = nil, deviceKind: String? = nil, budgetExchangeInterval: TimeInterval = 300,
        observe: @escaping @Sendable (TourEffect) -> Void = { _ in }
    ) {
        self.budgetExchangeInterval = budgetExchangeInterval
        self.deviceKind = deviceKind
        self.budget = budget
        self.transport = transport
        self.deviceFacts = deviceFacts
        self.product = product
        self.key = SessionKey(app: product.catalog.app, user: user)
        self.database = database
        self.haptics = haptics
        self.permissions = permissions
        self.time = time
        self.observe = observe
    }

    /// Sends one event and the answers its effects bring back.
    ///
    /// - Returns: the transitions committed, the event's first.
    /// - Throws: ``TourRefusal`` when the event is refused (nothing was written), or a storage error.
    @discardableResult
    public func send(_ event: TourEvent) async throws -> [Transition] {
        try await run(event, advancingClockBy: 0)
    }

    /// Moves time forward and fires whatever is due. With the virtual clock the time is advanced in
    /// the database at once; with the wall clock this waits for real.
    @discardableResult
    public func advanceClock(by seconds: Double) async throws -> [Transition] {
        if case .wall = time, seconds > 0 {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            return try await run(.clockAdvanced, advancingClockBy: 0)
        }
        return try await run(.clockAdvanced, advancingClockBy: seconds)
    }

    /// The state now, as a UI shows it.
    public func snapshot() throws -> TourSnapshot {
        let session = try Self.prepared(database.session(key, scopes: product.scopes), product)
        let now = Self.time(time, session)
        let context = product.context(
            domain: session.domain, now: now,
            device: Self.deviceFacts(remembered: session.device, reported: deviceFacts))
        let engine = product.engine
        return TourSnapshot(
            app: key.app, user: key.user, flows: engine.summaries(of: session.tour, context: context),
            card: engine.card(in: session.tour, context: context), state: session.domain,
            appVersion: session.tour.appVersion, now: now.timeIntervalSince1970,
            nextTimerAt: engine.nextDeadline(in: session.tour)?.timeIntervalSince1970)
    }

    /// Snapshots after every committed change, for a UI to follow.
    public func updates() -> AsyncStream<TourSnapshot> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<TourSnapshot>.makeStream()
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) { subscribers[id] = nil }

    // MARK: - The loop

    private func run(_ event: TourEvent, advancingClockBy seconds: Double) async throws -> [Transition] {
        // Offline-first: the first event of a session that syncs learns what the account's other
        // devices did, when the server answers; the event is committed locally either way.
        await pullOnce()
        await exchangeBudgetIfStale(advancingClockBy: seconds)
        try catchUpBudget()
        let (first, domain) = try commit(event, advancingClockBy: seconds, device: [:])
        var transitions = [first]
        var pending = await perform(first.effects)
        pending += await product.handler.followUps(after: first, domain: domain, user: key.user).map {
            ($0, [:])
        }
        // Answers feed back as events; a bound keeps a misbehaving handler from looping forever.
        var rounds = 0
        while !pending.isEmpty, rounds < 32 {
            rounds += 1
            let (answer, device) = pending.removeFirst()
            do {
                let (transition, domain) = try commit(answer, advancingClockBy: 0, device: device)
                transitions.append(transition)
                pending += await perform(transition.effects)
                pending += await product.handler.followUps(after: transition, domain: domain, user: key.user)
                    .map { ($0, [:]) }
            } catch is TourRefusal {
                // The step that asked moved on before the answer came; the answer is moot.
                continue
            }
        }
        if transport != nil {
            // What the push learns back (another device finished the flow) is committed too.
            transitions += await pushIfDue()
            // Why ignored: the counts are state, not an outbox; the next exchange tells them all.
            if budgetToTell { try? await exchangeBudget() }
        }
        if !subscribers.isEmpty {
            let snapshot = try snapshot()
            for continuation in subscribers.values { continuation.yield(snapshot) }
        }
        return transitions
    }

    func commit(
        _ event: TourEvent, advancingClockBy seconds: Double, device: [String: TourValue]
    ) throws -> (Transition, [String: TourValue]) {
        let engine = product.engine
        let product = product
        let handler = product.handler
        let time = time
        let deviceFacts = deviceFacts
        // Who experiments assign: this install, and the account of a user who syncs (read only
        // for a catalog that runs experiments; the install id is made on first use).
        let install = product.catalog.experiments.isEmpty ? nil : "install:" + (try database.installID())
        let user = key.user
        let budget = budget
        var spent: [CountedStart] = []
        let committed = try database.commit(key, scopes: product.scopes) { session in
            let stored = session.domain
            session = try Self.prepared(session, product)
            let domainBefore = session.domain
            var now = Self.time(time, session)
            if case .virtual = time {
                now = now.addingTimeInterval(seconds)
                session.virtualNow = now
            }
            let context = product.context(
                domain: session.domain, now: now,
                device: Self.deviceFacts(remembered: session.device, reported: deviceFacts))
            // What the device reports is the install's until it reports otherwise: a fact given at
            // launch still holds when a delayed start comes due in a later command.
            for (name, value) in deviceFacts where product.rememberedDeviceFacts.contains(name) {
                session.device[Self.rememberedFactPrefix + name] = value
            }
            let account = session.account == nil ? nil : Self.accountSubject(user)
            let subjects = ExperimentSubjects(install: install, account: account)
            let transition = try engine.reduce(
                session.tour, event, at: now, context: context, subjects: subjects,
                budget: try budget?.input(account: account, now: now) ?? .unlimited)
            session.tour = transition.state
            spent = transition.record.facts.compactMap { fact in
                guard case .budgetSpent(let flow) = fact, let budget else { return nil }
                return CountedStart(
                    device: budget.device, account: account, app: product.catalog.app, flow: flow, at: now)
            }
            for case .product(let effect) in transition.effects {
                try handler.apply(checking: effect, to: &session.domain, now: now)
            }
            if session.domain != domainBefore {
                // Every write is held to the declared keys and kinds; a refusal writes nothing.
                let problems = handler.domainState.problems(writing: session.domain, over: domainBefore)
                guard problems.isEmpty else { throw EffectError(problems.joined(separator: "; ")) }
            }
            if session.domain != stored || (session.domainFormat == nil && !session.domain.isEmpty) {
                // What is written now is in this release's format (an upgrade included).
                session.domainFormat = handler.domainState.format
            }
            session.device.merge(device) { _, new in new }
            let outbox = session.account.map { account in
                Self.accountChanges(
                    event, transition, catalog: product.catalog, account: &session.account,
                    device: account.device,
                    now: now)
            }
            // Learning a record that changes nothing here writes no journal row.
            if case .accountRecordLearned = event, transition.record.facts.isEmpty, transition.effects.isEmpty
            {
                return ((transition, session.domain), nil)
            }
            var journal = JournalAppend(
                time: now, record: transition.record, context: context, effects: transition.effects,
                catalogVersion: product.catalog.version, catalogFingerprint: product.fingerprint,
                outbox: outbox,
                appVersion: transition.state.appVersion)
            // Consent and a start's context as they are now, kept with the row: a row written with
            // analytics off never sends its facts, and a start is counted where it happened,
            // whenever it is pushed (Docs/Privacy.md).
            journal.analyticsAllowed = DeviceStore.analyticsAllowed(session.device)
            if transition.record.facts.contains(where: { if case .flowStarted = $0 { true } else { false } })
            {
                journal.startContextJSON = try StartContext(
                    locale: (product.catalog.locale ?? product.catalog.strings.source).rawValue,
                    device: deviceKind
                ).tourValue.jsonText()
            }
            return ((transition, session.domain), journal)
        }
        // After the commit: a crash before this is caught up from the journal next time, and so is
        // a failure. The event is committed and its effects are due: a failure here is recorded
        // (``drainWarnings()``), never thrown, and the next event copies the start from the journal.
        do {
            try budget?.file.record(spent)
        } catch {
            budgetCaughtUp = false
            warnings.append(
                """
                the display budget file \(budget?.path ?? "") did not take the start this event counted (\
                \(error)); it is in the journal, and the next event copies it
                """
            )
        }
        if !spent.isEmpty { budgetToTell = true }
        return committed
    }

    /// Copies into the budget file the starts this product's journal counted that it does not
    /// have yet (a crash between an event's commit and the copy), once per session.
    func catchUpBudget() throws {
        guard let budget, !budgetCaughtUp else { return }
        let database = database
        try budget.file.catchUp(from: database, app: key.app, device: budget.device) { user in
            let key = SessionKey(app: self.key.app, user: user)
            return (try? database.session(key, scopes: self.product.scopes))?.account == nil
                ? nil : Self.accountSubject(user)
        }
        budgetCaughtUp = true
    }

    /// Where the install's device state keeps each reported device fact (beside the permission
    /// statuses the stubs remember, `permission.NAME`).
    static let rememberedFactPrefix = "fact."

    /// The device facts in force: those remembered for the install, with those reported now over them.
    public static func deviceFacts(remembered device: [String: TourValue], reported: [String: TourValue])
        -> [String: TourValue]
    {
        var facts: [String: TourValue] = [:]
        for (key, value) in device where key.hasPrefix(rememberedFactPrefix) {
            facts[String(key.dropFirst(rememberedFactPrefix.count))] = value
        }
        return facts.merging(reported) { _, now in now }
    }

    /// The device facts in force for this session now (``deviceFacts(remembered:reported:)``).
    public func deviceFactsInForce() throws -> [String: TourValue] {
        Self.deviceFacts(
            remembered: try database.session(key, scopes: product.scopes).device, reported: deviceFacts)
    }

    /// What the display budget holds back at the state's time, for `explain`.
    public func budgetInput() throws -> BudgetInput {
        guard let budget else { return .unlimited }
        let session = try Self.prepared(database.session(key, scopes: product.scopes), product)
        return try budget.input(
            account: session.account == nil ? nil : budgetAccount, now: Self.time(time, session))
    }

    /// The stored session as this release reads it: domain state a newer release wrote in a format
    /// this one does not read is refused by name; state of an older format goes through the
    /// handler's upgrade (state without a stored format is format 1).
    static func prepared(_ session: Session, _ product: Product) throws -> Session {
        let declared = product.handler.domainState
        let stored = session.domainFormat ?? 1
        if let problem = declared.newerFormatProblem(stored: stored, app: product.catalog.app) {
            throw StorageError(problem)
        }
        guard stored < declared.format else { return session }
        var session = session
        session.domain = product.handler.upgradeDomainState(session.domain, from: stored)
        return session
    }

    /// Performs effects; returns the answers to feed back, with device facts to remember.
    private func perform(_ effects: [TourEffect]) async -> [(TourEvent, [String: TourValue])] {
        var answers: [(TourEvent, [String: TourValue])] = []
        for effect in effects {
            observe(effect)
            switch effect {
            case .haptic(let feedback):
                haptics.play(feedback)
            case .checkPermission(let gate, let permission):
                let status = await permissions.status(of: permission)
                if status != .notDetermined {
                    answers.append((.gateAnswered(gate, status.gateStatus), [:]))
                }
            case .requestPermission(let gate, let permission):
                let status = await permissions.request(permission)
                answers.append(
                    (
                        .gateAnswered(gate, status.gateStatus),
                        ["permission.\(permission)": .string(status.rawValue)]
                    ))
            case .request(let gate, let name, let payload, let secrets):
                let status = await product.handler.perform(request: name, payload: payload, secrets: secrets)
                answers.append((.gateAnswered(gate, status), [:]))
            case .celebration, .analytics, .product, .presented, .dismissed:
                break
            }
        }
        return answers
    }

    static func time(_ source: TimeSource, _ session: Session) -> Date {
        switch source {
        case .wall: Date()
        case .virtual(let start): session.virtualNow ?? start
        }
    }
}
