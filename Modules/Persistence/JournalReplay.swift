import Foundation
import TourCore

/// Rebuilds every flow's state of one app from its journal alone, by folding each journaled event
/// through the engine with the time and context it was accepted with.
public enum JournalReplay {
    /// Flow states by subject ("@install" or a user id) and flow, as the journal implies them.
    public static func rebuild(app: String, engine: TourEngine, from database: OnboardingDatabase) throws
        -> [String: [FlowID: FlowState]]
    {
        let subjects = try fold(app: app, engine: engine, rows: database.journal(app: app)) { _ in }
        return subjects.mapValues { $0.filter { _, state in state != FlowState() } }.filter {
            !$0.value.isEmpty
        }
    }

    /// One journal row folded: the user's state before and after it.
    public struct Step {
        public var row: JournalRow
        public var event: TourEvent
        public var before: TourState
        public var after: TourState
    }

    /// Folds `rows` (oldest first) through the engine, calling `visit` after each; returns every
    /// subject's flow states at the end.
    @discardableResult
    public static func fold(
        app: String, engine: TourEngine, rows: [JournalRow], _ visit: (Step) throws -> Void
    ) throws -> [String: [FlowID: FlowState]] {
        let scopes = Dictionary(uniqueKeysWithValues: engine.catalog.flows.map { ($0.id, $0.scope) })
        var subjects: [String: [FlowID: FlowState]] = [:]
        var appVersion: String?
        for row in rows {
            let key = SessionKey(app: app, user: row.user)
            var state = TourState(appVersion: appVersion)
            for (flow, scope) in scopes {
                state.flows[flow] = subjects[key.subject(for: scope)]?[flow]
            }
            let event = try JSONCoding.value(TourEvent.self, from: row.eventJSON)
            let context = try JSONCoding.value(TourContext.self, from: row.contextJSON)
            let next: TourState
            do {
                next = try engine.reduce(state, event, at: row.time, context: context).state
            } catch {
                throw StorageError("journal row \(row.id) no longer replays: \(error)")
            }
            appVersion = next.appVersion
            for (flow, scope) in scopes {
                subjects[key.subject(for: scope), default: [:]][flow] = next.flows[flow]
            }
            try visit(Step(row: row, event: event, before: state, after: next))
        }
        return subjects
    }
}
