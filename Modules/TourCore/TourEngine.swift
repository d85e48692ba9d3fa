import TourCodec

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The pure engine: `(state, event, now, context) -> (state, effects)` for one product's catalog.
///
/// It reads no clock and does no I/O: time comes in with each event, timers are deadlines in the
/// state, and everything that must happen outside is returned as ``TourEffect`` values.
public struct TourEngine: Sendable {
    public let catalog: TourCatalog
    /// The fingerprint of the catalog's document, stamped on the runs it writes beside the version.
    let stamp: CatalogFingerprint

    /// - Parameter fingerprint: the fingerprint of the catalog's document, which only whoever knows
    ///   the product's vocabulary can write (``Product/engine`` passes it). Without one, runs are
    ///   stamped with the version alone.
    public init(catalog: TourCatalog, fingerprint: CatalogFingerprint = CatalogFingerprint(known: nil)) {
        self.catalog = catalog
        self.stamp = fingerprint
    }

    /// The fingerprint of the catalog document runs are written under; nil when the engine was
    /// given none.
    public var fingerprint: String? { stamp.value }

    /// Folds one event into the state. Whatever is due at `now` fires first.
    ///
    /// - Parameter subjects: who the catalog's experiments assign (``ExperimentSubjects``); without
    ///   them a flow with an experiment runs its control and nothing is assigned.
    /// - Throws: ``TourRefusal`` when the event is not allowed now; nothing changes then.
    public func reduce(
        _ state: TourState, _ event: TourEvent, at now: Date, context: TourContext = [:],
        subjects: ExperimentSubjects = .none, budget: BudgetInput = .unlimited
    ) throws(TourRefusal) -> Transition {
        var reduction = Reduction(
            catalog: catalog, stamp: stamp, state: state, now: now, context: context, subjects: subjects,
            budget: budget)
        reduction.migrateRuns()
        reduction.fireDue()
        let before = reduction.state.presentingFlow.map { ($0, reduction.state[flow: $0].currentStep) }
        var event = event
        if case .actionPerformed(let name, let parameters) = event {
            event = .actionPerformed(reduction.canonicalName(of: name), parameters: parameters)
        }
        try reduction.apply(event)
        reduction.fireDue()
        reduction.noteEffectGoals()
        reduction.muteHapticsIfOff()
        let after = reduction.state.presentingFlow.map { ($0, reduction.state[flow: $0].currentStep) }
        let place = before ?? after
        let record = JournalRecord(
            flow: place?.0, step: place?.1, event: redacted(event),
            outcome: reduction.notes.count == 1
                ? reduction.notes[0]
                : reduction.notes.isEmpty ? "no change" : reduction.notes.joined(separator: "; "),
            facts: reduction.facts)
        return Transition(state: reduction.state, effects: reduction.effects, record: record)
    }

    /// The state as this catalog sees it: runs written under an older catalog version moved by the
    /// declared migrations (as the next event will move and journal them). Views read this.
    public func current(_ state: TourState, context: TourContext = [:]) -> TourState {
        guard needsMigration(state) else { return state }
        var reduction = Reduction(
            catalog: catalog, stamp: stamp, state: state, now: .distantPast, context: context)
        reduction.migrateRuns()
        return reduction.state
    }

    /// Whether a run in `state` was written under another catalog (another version, or the same
    /// version with another fingerprint: a change that shipped without a new version), or cannot
    /// be followed in this catalog (its flow or a step of its plan is not here): the next event
    /// moves it.
    public func needsMigration(_ state: TourState) -> Bool {
        state.flows.contains { id, flowState in
            guard let run = flowState.run else { return false }
            guard let flow = catalog.flow(id) else { return true }
            return run.needsMigration(to: flow, of: catalog, stamp: stamp)
        }
    }

    /// What this catalog will do to the runs in `state` written under another catalog version: the
    /// ``TourFact/runMigrated`` facts the next event will journal. Nothing is changed; `check
    /// --against` forecasts a release with it.
    public func pendingMigrations(in state: TourState, context: TourContext = [:]) -> [TourFact] {
        var reduction = Reduction(
            catalog: catalog, stamp: stamp, state: state, now: .distantPast, context: context)
        reduction.migrateRuns()
        return reduction.facts.filter { if case .runMigrated = $0 { true } else { false } }
    }

    /// The card showing now, if any.
    public func card(in state: TourState, context: TourContext = [:]) -> Card? {
        let state = current(state, context: context)
        guard let flowID = state.presentingFlow, let flow = catalog.flow(flowID) else { return nil }
        let run = state[flow: flowID]
        guard let stepID = run.currentStep, let step = flow.step(stepID) else { return nil }
        let content = step.content
        let plurals = catalog.pluralRules
        let progress = progress(of: flow, run: run)
        let anchor = content.anchor.map { anchor in
            anchor.availableWhen.holds(context: context, state: state)
                ? anchor.target : (anchor.fallback ?? anchor.target)
        }
        return Card(
            flow: flowID, step: stepID, title: content.title,
            body: Template.fill(content.body, fields: run.fields, plurals: plurals),
            hint: content.hint,
            details: content.details.compactMap {
                Template.fillDetail($0, fields: run.fields, plurals: plurals)
            },
            notices: step.gates.compactMap { gate in
                run.gates[gate.id].flatMap(gate.notice(for:)).map {
                    Template.fill($0, fields: run.fields, plurals: plurals)
                }
            },
            anchor: anchor, highlightPadding: content.anchor?.highlightPadding,
            popover: content.anchor?.popover,
            progress: progress,
            actions: allowedActions(in: state, context: context),
            autoAdvanceAt: run.deadline?.timeIntervalSince1970, isReplay: run.replayOf != nil,
            progressText: progress.map { progressText($0, plurals: plurals) })
    }

    /// "Step 2 of 5" in the catalog's locale.
    func progressText(_ progress: StepProgress, plurals: PluralRules) -> String {
        progress.finale
            ? Template.fill(
                catalog.engineText(EngineText.progressFinale), fields: ["total": .int(progress.total)],
                plurals: plurals)
            : Template.fill(
                catalog.engineText(EngineText.progressStep),
                fields: ["step": .int(progress.step), "total": .int(progress.total)], plurals: plurals)
    }

    /// Every flow of the catalog, in its order, as a status line shows it, with the same progress as
    /// the card.
    public func summaries(of state: TourState, context: TourContext = [:]) -> [FlowSummary] {
        let state = current(state, context: context)
        let presenting = state.presentingFlow
        return catalog.flows.map { flow in
            let run = state[flow: flow.id]
            let step = run.currentStep.flatMap(flow.step)
            let actions =
                flow.id == presenting ? allowedActions(in: state, context: context).map({ $0.name }) : []
            return FlowSummary(
                id: flow.id, name: flow.name, status: run.status, step: run.currentStep,
                progress: progress(of: flow, run: run),
                canSkip: step?.canSkip ?? false, canGoBack: (step?.canGoBack ?? false) && run.position > 0,
                actions: actions, startsAt: run.pendingStart?.timeIntervalSince1970,
                finishedInVersion: run.finishedInVersion)
        }
    }

    /// The actions the showing card accepts now (or the free actions when none shows).
    public func allowedActions(in state: TourState, context: TourContext = [:]) -> [CardAction] {
        Reduction(
            catalog: catalog, stamp: stamp, state: current(state, context: context), now: .distantPast,
            context: context
        )
        .allowedActions()
    }

    /// The earliest deadline or pending start in the state: when the next timer fires.
    public func nextDeadline(in state: TourState) -> Date? {
        state.flows.values.flatMap { [$0.deadline, $0.pendingStart] }.compactMap { $0 }.min()
    }

    /// The event with every secret parameter replaced by "‹redacted›", as it may be journaled.
    public func redacted(_ event: TourEvent) -> TourEvent {
        // Most actions carry no parameters: nothing to look up then.
        guard case .actionPerformed(let name, let parameters) = event, !parameters.isEmpty else {
            return event
        }
        var clean = parameters
        for key in parameters.keys where catalog.isSecretField(key) { clean[key] = Secret.redactedText }
        return .actionPerformed(name, parameters: clean)
    }

    /// The one progress count of a run (card, status, JSON, analytics and report all use it).
    public func progress(of flow: FlowDefinition, run: FlowState) -> StepProgress? {
        guard let run = run.run, !run.plan.isEmpty else { return nil }
        return Self.progress(position: run.position, planCount: run.plan.count, flow: flow)
    }

    static func progress(position: Int, planCount: Int, flow: FlowDefinition) -> StepProgress {
        let total = flow.countsTerminalStep || planCount < 2 ? planCount : planCount - 1
        return StepProgress(step: min(position + 1, total), total: total, finale: position + 1 > total)
    }
}

/// The result of one accepted event.
public struct Transition: Equatable, Sendable {
    public var state: TourState
    public var effects: [TourEffect]
    public var record: JournalRecord
}

/// What the journal keeps of one accepted event: where it happened, the event with secrets
/// redacted, and what it did.
public struct JournalRecord: Equatable, Sendable {
    public var flow: FlowID?
    public var step: StepID?
    public var event: TourEvent
    public var outcome: String
    /// What the event did, as facts (see ``TourFact``).
    public var facts: [TourFact]

    public init(flow: FlowID?, step: StepID?, event: TourEvent, outcome: String, facts: [TourFact] = []) {
        self.flow = flow
        self.step = step
        self.event = event
        self.outcome = outcome
        self.facts = facts
    }
}

/// Fills `{field}` and `{#field|one|many}` in content strings. A plural gives one form per plural
/// category of the text's locale (``PluralRules``): `{#apps|app|apps}` in English, three forms in
/// Russian; it shows the count and the form ("4 apps"). The count is a list's length, a whole
/// number's value, 1 for any other value and 0 for none.
package enum Template {
    static func fill(_ text: String, fields: [String: TourValue], plurals: PluralRules = .english) -> String {
        // `utf8.contains`, not `contains("{")`: with Foundation imported, a string argument picks
        // NSString's search, which cost a launch lookup more than the rest of the card.
        guard text.utf8.contains(UInt8(ascii: "{")) else { return text }
        var output = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            output += rest[..<open]
            let token = rest[rest.index(after: open)..<close]
            output += expand(token, fields: fields, plurals: plurals)
            rest = rest[rest.index(after: close)...]
        }
        return output + rest
    }

    /// A detail line, or nil when it counts a field that is empty ("4 apps selected" shows only
    /// after a selection).
    static func fillDetail(_ text: String, fields: [String: TourValue], plurals: PluralRules = .english)
        -> String?
    {
        for token in tokens(in: text) where token.hasPrefix("#") {
            if count(of: fields[name(of: token)]) == 0 { return nil }
        }
        return fill(text, fields: fields, plurals: plurals)
    }

    /// The names a text fills in, plurals included: what a translation must keep.
    package static func placeholders(in text: String) -> Set<String> {
        Set(tokens(in: text).map(name(of:)))
    }

    /// Each plural of a text with the number of forms it gives (none for a bare count `{#n}`).
    package static func pluralFormCounts(in text: String) -> [(name: String, forms: Int)] {
        tokens(in: text).filter { $0.hasPrefix("#") && $0.contains("|") }.map { token in
            (name(of: token), token.split(separator: "|", omittingEmptySubsequences: false).count - 1)
        }
    }

    private static func tokens(in text: String) -> [Substring] {
        var tokens: [Substring] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            tokens.append(rest[rest.index(after: open)..<close])
            rest = rest[rest.index(after: close)...]
        }
        return tokens
    }

    private static func name(of token: Substring) -> String {
        String(token.drop { $0 == "#" }.prefix { $0 != "|" })
    }

    private static func count(of value: TourValue?) -> Int {
        guard let value else { return 0 }
        if case .int(let number) = value { return number }
        return value.count
    }

    private static func expand(_ token: Substring, fields: [String: TourValue], plurals: PluralRules)
        -> String
    {
        if token.hasPrefix("#") {
            let parts = token.dropFirst().split(separator: "|", omittingEmptySubsequences: false).map(
                String.init)
            let count = count(of: fields[parts[0]])
            let forms = Array(parts.dropFirst())
            guard !forms.isEmpty else { return String(count) }
            // A template whose forms are not its locale's (refused by the check): English's two.
            let form =
                plurals.form(for: count, among: forms) ?? (count == 1 ? forms[0] : forms[forms.count - 1])
            return "\(count) \(form)"
        }
        return fields[String(token)]?.displayText ?? ""
    }
}
