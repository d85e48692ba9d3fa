import TourCodec
import TourCore

/// The `states_json` column of a journal row (since 0.8.0): the stored form of every flow the row's
/// event changed, keyed by flow, `null` for a flow whose row was deleted:
///
///     {"onboarding": {"format": 2, "status": "active", "run": {...}}, "tour": null}
///
/// Written from the very texts the event's transaction wrote to `flow_state`, so a rebuild that
/// folds these gives the stored state by construction; `JournalReplay.replay` still replays every
/// row through the engine, which is how the tests check that the engine and the journal agree.
enum RecordedStates {
    static func text(_ states: [(flow: FlowID, stored: String?)]) -> String {
        var writer = JSONTextWriter()
        writer.write(punctuation: "{")
        let sorted = states.sorted { JSONTextWriter.precedes($0.flow.rawValue, $1.flow.rawValue) }
        for (index, state) in sorted.enumerated() {
            if index > 0 { writer.write(punctuation: ",") }
            writer.write(state.flow.rawValue)
            writer.write(punctuation: ":")
            writer.writeJSON(state.stored ?? "null")
        }
        writer.write(punctuation: "}")
        return writer.text
    }
}
