import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Every flow's state of one app from its journal alone.
///
/// ``rebuild(app:engine:from:)`` folds the states rows recorded (since 0.8.0 each row records the
/// stored form of the flows its event changed): the last one of each flow is its state, and only
/// those are read. Rows written before replay as ``replay(app:engine:from:)`` does.
///
/// ``replay(app:engine:from:)`` derives every state from the events: rows written under the engine's
/// catalog (its version, and its document's fingerprint when the row recorded one) are replayed
/// through the engine with the time and context they were accepted with; other rows are folded
/// from their facts (statuses, steps, records; not field
/// values or pending starts, which facts do not carry). Tests check that both agree with the stored
/// state, so the engine, the journal and the flow rows cannot drift apart unnoticed.
public enum JournalReplay {
    /// Flow states by subject ("@install" or a user id) and flow, as the journal records them.
    public static func rebuild(app: String, engine: TourEngine, from database: OnboardingDatabase) throws
        -> [String: [FlowID: FlowState]]
    {
        var scopes = Dictionary(uniqueKeysWithValues: engine.catalog.flows.map { ($0.id, $0.scope) })
        // Rows from before recorded states, and everything up to the last of them, replay.
        let legacy = try database.lastRowWithoutRecordedStates(app: app)
        var subjects: [String: [FlowID: FlowState]] = [:]
        if let legacy {
            subjects = try fold(app: app, engine: engine, rows: database.journal(app: app, through: legacy)) {
                _ in
            }
        }
        // Then the last recorded form of each flow wins: read newest first, each (subject, flow)
        // takes the first form it meets, and every later (older) one is only checked, not kept.
        // Per row only bytes are compared: the user with the row before's (a user's rows mostly
        // stand together), each key with the flows met before; a String is made of a user or a
        // flow once, when first met.
        var flows = RecordedFlows()
        var forms: [[String?]] = []
        var slots: [String: Int] = [:]
        func slot(of subject: String) -> Int {
            if let slot = slots[subject] { return slot }
            slots[subject] = forms.count
            forms.append([])
            return forms.count - 1
        }
        let installSlot = slot(of: SessionKey.installSubject)
        var lastUser: [UInt8] = []
        var userSlot = -1
        try database.forEachRecordedStatesNewestFirst(app: app, after: legacy ?? 0) { user, bytes in
            if userSlot < 0 || !user.elementsEqual(lastUser) {
                lastUser = Array(user)
                userSlot = slot(of: String(decoding: user, as: UTF8.self))
            }
            try TourValue.forEachMemberBytes(ofObject: bytes) { key, json in
                let flow = flows.index(of: key) { id in
                    scopes[id]
                        ?? {
                            scopes[id] = .install
                            return .install
                        }()
                }
                let subject = flows.scopes[flow] == .install ? installSlot : userSlot
                if forms[subject].count <= flow {
                    forms[subject] += [String?](repeating: nil, count: flow + 1 - forms[subject].count)
                }
                if forms[subject][flow] == nil {
                    forms[subject][flow] = String(decoding: json, as: UTF8.self)
                }
            }
        }
        for (subject, slot) in slots {
            for (flow, json) in forms[slot].enumerated() {
                guard let json else { continue }
                subjects[subject, default: [:]][flows.ids[flow]] =
                    json == "null" ? nil : try FlowState(jsonText: json)
            }
        }
        return nonInitial(subjects)
    }

    /// Flow states by subject and flow, derived from the events by replaying them (see the type).
    public static func replay(app: String, engine: TourEngine, from database: OnboardingDatabase) throws
        -> [String: [FlowID: FlowState]]
    {
        nonInitial(try fold(app: app, engine: engine, rows: database.journal(app: app)) { _ in })
    }

    static func nonInitial(_ subjects: [String: [FlowID: FlowState]]) -> [String: [FlowID: FlowState]] {
        subjects.mapValues { $0.filter { _, state in state != FlowState() } }.filter { !$0.value.isEmpty }
    }

    /// One journal row folded: the user's state before and after it.
    public struct Step {
        public var row: JournalRow
        public var event: TourEvent
        public var before: TourState
        public var after: TourState
        /// What the row did: its stored facts, or (for a row replayed) the facts the replay produced.
        public var facts: [TourFact]
    }

    /// Where a replay has got to: every subject's flow states, and the app version last launched.
    public struct Replayed: Equatable, Sendable {
        public var subjects: [String: [FlowID: FlowState]]
        public var appVersion: String?
        /// Experiment marks by subject ("@install" or a user id) and experiment id.
        public var experiments: [String: [String: ExperimentMark]]

        public init(
            subjects: [String: [FlowID: FlowState]] = [:], appVersion: String? = nil,
            experiments: [String: [String: ExperimentMark]] = [:]
        ) {
            self.subjects = subjects
            self.appVersion = appVersion
            self.experiments = experiments
        }

        /// The subjects' states without the flows in their initial state.
        public var states: [String: [FlowID: FlowState]] { JournalReplay.nonInitial(subjects) }
    }

    /// Replays `rows`, the rows that follow what `start` replayed, on top of it: a journal that
    /// grows one event at a time is checked without replaying it from its first row each time.
    public static func replay(app: String, engine: TourEngine, rows: [JournalRow], after start: Replayed)
        throws
        -> Replayed
    {
        try fold(app: app, engine: engine, rows: rows, from: start) { _ in }
    }

    /// Folds `rows` (oldest first), calling `visit` after each; returns every subject's flow states
    /// at the end.
    @discardableResult
    public static func fold(
        app: String, engine: TourEngine, rows: [JournalRow], _ visit: (Step) throws -> Void
    ) throws -> [String: [FlowID: FlowState]] {
        try fold(app: app, engine: engine, rows: rows, from: Replayed(), visit).subjects
    }

    static func fold(
        app: String, engine: TourEngine, rows: [JournalRow], from start: Replayed,
        _ visit: (Step) throws -> Void
    ) throws -> Replayed {
        var scopes = Dictionary(uniqueKeysWithValues: engine.catalog.flows.map { ($0.id, $0.scope) })
        var subjects = start.subjects
        var appVersion = start.appVersion
        var marks = start.experiments
        for row in rows {
            let key = SessionKey(app: app, user: row.user)
            var state = TourState(appVersion: appVersion)
            for (flow, scope) in scopes {
                state.flows[flow] = subjects[key.subject(for: scope)]?[flow]
            }
            for subject in Set([SessionKey.installSubject, key.user]) {
                for (id, mark) in marks[subject] ?? [:]
                where key.subject(for: scopes[mark.flow] ?? .install) == subject {
                    state.experiments[id] = mark
                }
            }
            let event = try JSONCoding.value(TourEvent.self, from: row.eventJSON)
            var next: TourState
            let facts: [TourFact]
            if row.wasWritten(under: engine) {
                let context = try JSONCoding.object(from: row.contextJSON)
                do {
                    // The subject an assignment of this row was made for assigns the same variant again.
                    let assigned = try row.storedFacts()?.lazy.compactMap { fact -> String? in
                        if case .assigned(_, let arm) = fact { return arm.subject }
                        return nil
                    }.first
                    let transition = try engine.reduce(
                        state, event, at: row.time, context: context,
                        subjects: ExperimentSubjects(install: assigned, account: assigned))
                    next = transition.state
                    facts = transition.record.facts
                } catch {
                    throw StorageError("journal row \(row.id) no longer replays: \(error)")
                }
            } else if let stored = try row.storedFacts() {
                next = state
                facts = stored
                apply(stored, to: &next)
                if case .appLaunched(let version?) = event { next.appVersion = version }
            } else {
                throw StorageError(
                    """
                    journal row \(row.id) was written under catalog version \(row.catalogVersion ?? 1) and \
                    has no facts
                    """
                )
            }
            appVersion = next.appVersion
            for (id, mark) in next.experiments {
                marks[key.subject(for: scopes[mark.flow] ?? .install), default: [:]][id] = mark
            }
            for flow in next.flows.keys where scopes[flow] == nil { scopes[flow] = .install }
            for (flow, scope) in scopes {
                subjects[key.subject(for: scope), default: [:]][flow] = next.flows[flow]
            }
            try visit(Step(row: row, event: event, before: state, after: next, facts: facts))
        }
        return Replayed(subjects: subjects, appVersion: appVersion, experiments: marks)
    }

    /// What facts say about the flows: runs started, steps entered, records written, runs moved.
    public static func apply(_ facts: [TourFact], to state: inout TourState) {
        for fact in facts {
            switch fact {
            case .flowStarted(let flow, let plan, let catalogVersion, let replay):
                let before = state[flow: flow]
                state[flow: flow] = .active(
                    FlowRun(
                        plan: plan, activation: (state.flows.values.map({ $0.activation }).max() ?? 0) + 1,
                        catalogVersion: catalogVersion,
                        replayOf: replay ? before.recordBefore : nil))
            case .stepEntered(let flow, _, let index):
                state[run: flow]?.position = index - 1
            case .stepCompleted:
                break
            case .gateAnswered(let flow, _, let gate, let answer):
                state[run: flow]?.gates[gate] = answer
            case .flowEnded(let flow, _, let recorded, let version):
                state[flow: flow] = .record(status: recorded, version: version)
            case .flowReset(let flow):
                state.flows[flow] = nil
            case .runMigrated(let flow, _, let toVersion, _, let toStep, let plan, let outcome, _):
                guard outcome == .moved, var run = state[run: flow], let toStep else { continue }
                run.plan = plan
                run.position = plan.firstIndex(of: toStep) ?? 0
                run.catalogVersion = toVersion
                state[run: flow] = run
            case .assigned(let flow, let arm):
                state.experiments[arm.experiment] = ExperimentMark(
                    flow: flow, variant: arm.variant, subject: arm.subject)
            case .exposed(_, let arm):
                state.experiments[arm.experiment]?.exposed = true
            case .goalReached(_, let arm):
                state.experiments[arm.experiment]?.goalReached = true
            case .budgetSpent:
                break
            case .budgetHeld(let flow, _, _):
                if state[flow: flow].status == .notStarted { state[flow: flow] = FlowState() }
            }
        }
    }
}

/// Facts for journal rows written before facts existed (before 0.6.0).
public enum JournalFacts {
    /// Fills in the facts of the app's rows that have none, by replaying them through `engine`,
    /// once. Only a version 1 catalog (the only version such rows were written under) replays
    /// them; with a later catalog they stay without facts and reports count them as such.
    ///
    /// - Returns: how many rows were filled in.
    @discardableResult
    public static func derive(app: String, engine: TourEngine, in database: OnboardingDatabase) throws -> Int
    {
        guard engine.catalog.version == 1, try database.hasRowsWithoutFacts(app: app) else { return 0 }
        let rows = try database.journal(app: app).filter { $0.factsJSON == nil }
        var facts: [Int64: String] = [:]
        do {
            try JournalReplay.fold(app: app, engine: engine, rows: rows) { step in
                facts[step.row.id] = try JSONCoding.text(step.facts)
            }
        } catch {
            // A row that no longer replays: the rows before it get their facts, the rest none.
        }
        try database.fillLegacyFacts(facts)
        return facts.count
    }
}

extension JournalRow {
    /// Whether the row's event was reduced by `engine`'s catalog: the same version and, when the row
    /// recorded one (since 0.9.0), the same document. Such a row replays through the engine; any
    /// other is folded from its facts (a catalog of the same version that changed undeclared would
    /// not replay it).
    func wasWritten(under engine: TourEngine) -> Bool {
        guard (catalogVersion ?? 1) == engine.catalog.version else { return false }
        guard let catalogFingerprint, let current = engine.fingerprint else { return true }
        return catalogFingerprint == current
    }
}

/// The flows a rebuild meets in the rows' recorded states, each once, by index: the first keys met
/// are looked up by their bytes (a catalog has a handful of flows), and a String, a FlowID and a
/// scope are made only for a key not among them. Past ``bytesCompared`` spellings (a journal naming
/// many flows: a crafted or damaged file) a key is looked up by its id, as a dictionary does, so
/// the fold stays linear in the rows.
struct RecordedFlows {
    private(set) var ids: [FlowID] = []
    private(set) var scopes: [FlowScope] = []
    private var byID: [FlowID: Int] = [:]
    /// The first spellings met, as bytes, with the index of their flow (two spellings can name one flow).
    private var spellings: [(bytes: [UInt8], flow: Int)] = []
    static let bytesCompared = 16

    mutating func index(of key: UnsafeBufferPointer<UInt8>, scope: (FlowID) -> FlowScope) -> Int {
        for spelling in spellings where spelling.bytes.count == key.count && spelling.bytes.elementsEqual(key)
        {
            return spelling.flow
        }
        let id = FlowID(String(decoding: key, as: UTF8.self))
        let flow =
            byID[id]
            ?? {
                ids.append(id)
                scopes.append(scope(id))
                byID[id] = ids.count - 1
                return ids.count - 1
            }()
        if spellings.count < Self.bytesCompared { spellings.append((Array(key), flow)) }
        return flow
    }
}
